package main

import (
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/quadrants-go/qd"
)

//go:embed kernels.go
var kernels string

type config struct {
	rows, cols int // the grid's interior rows and all its columns
	sweeps     int
	every      int // sweeps between residual reductions
	check      bool
}

func main() {
	var c config
	flag.IntVar(&c.rows, "rows", 256, "interior rows of the grid (split across the processes)")
	flag.IntVar(&c.cols, "cols", 256, "columns of the grid (the first and last are a fixed boundary)")
	flag.IntVar(&c.sweeps, "sweeps", 50, "Jacobi sweeps")
	flag.IntVar(&c.every, "every", 10, "sweeps between residual reductions (0: only at the end)")
	flag.BoolVar(&c.check, "check", true, "check against plain Go on the whole grid")
	flag.Parse()
	if err := run(os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "distributed:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, c config) error {
	if c.rows < 1 || c.cols < 3 || c.sweeps < 0 || c.every < 0 {
		return errors.New("-rows must be at least 1, -cols at least 3, -sweeps and -every at least 0")
	}
	p, err := qd.Init() // qd run sets QD_ARCH and QD_DEVICE: a device per process
	if err != nil {
		return err
	}
	defer p.Close()
	comm, err := qd.NewComm(p) // the group from the environment (a group of one without qd run)
	if err != nil {
		return err
	}
	defer comm.Close()
	if comm.Size() > c.rows {
		return fmt.Errorf("%d processes for %d rows: every process needs a row", comm.Size(), c.rows)
	}
	sl, err := newSlab(p, comm, c)
	if err != nil {
		return err
	}
	t0 := time.Now()
	res, err := sl.solve(c, func(sweep int, res float64) {
		if comm.Rank() == 0 {
			fmt.Fprintf(w, "sweep %d: residual %.6g\n", sweep, res)
		}
	})
	if err != nil {
		return err
	}
	d := time.Since(t0)
	if comm.Rank() == 0 {
		fmt.Fprintf(w, "%d×%d grid on %d process(es) (%v): %d sweeps in %v (%.3g cell updates/s), residual %.6g\n",
			c.rows, c.cols, comm.Size(), p.Arch(), c.sweeps, d.Round(time.Microsecond), float64(c.rows*c.cols*c.sweeps)/d.Seconds(), res)
	}
	if !c.check {
		return nil
	}
	got, err := sl.interior()
	if err != nil {
		return err
	}
	want, wantRes := reference(c)
	for i, g := range got {
		k := sl.lo*c.cols + i
		if diff := math.Abs(float64(g - want[k])); diff > 1e-5 {
			return fmt.Errorf("rank %d: cell (%d, %d) = %v, plain Go says %v", comm.Rank(), k/c.cols, k%c.cols, g, want[k])
		}
	}
	if math.Abs(res-wantRes) > 1e-3*wantRes+1e-6 {
		return fmt.Errorf("rank %d: residual %v, plain Go says %v", comm.Rank(), res, wantRes)
	}
	fmt.Fprintf(w, "rank %d: rows %d to %d match plain Go\n", comm.Rank(), sl.lo, sl.hi-1)
	return nil
}

// initial is the grid with its boundary rows: (rows+2) × cols, the top row
// hot, every other cell cold.
func initial(rows, cols int) []float32 {
	g := make([]float32, (rows+2)*cols)
	for j := range cols {
		g[j] = 1
	}
	return g
}

// reference runs the sweeps as plain Go on the whole grid: its interior
// rows, and the last sweep's residual.
func reference(c config) ([]float32, float64) {
	g := initial(c.rows, c.cols)
	cur, next := make([][]float32, c.rows+2), make([][]float32, c.rows+2)
	for i := range cur {
		cur[i] = append([]float32(nil), g[i*c.cols:(i+1)*c.cols]...)
		next[i] = append([]float32(nil), cur[i]...)
	}
	res := []float32{0}
	for range c.sweeps {
		res[0] = 0
		jacobi(cur, next, res)
		cur, next = next, cur
	}
	var out []float32
	for _, r := range cur[1 : c.rows+1] {
		out = append(out, r...)
	}
	return out, math.Sqrt(float64(res[0]))
}
