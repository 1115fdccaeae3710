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

// config is what the flags choose.
type config struct {
	rows, cols int // the grid's interior rows (without its two fixed boundary rows) and columns
	steps      int
	work       int  // step's work per cell
	devices    int  // devices to use (0: every device of the backend)
	parts      int  // slabs (0: one per device); slab i goes to device i mod devices
	check      bool // compare with plain Go
}

func main() {
	var c config
	flag.IntVar(&c.rows, "rows", 512, "interior rows of the grid")
	flag.IntVar(&c.cols, "cols", 1024, "columns of the grid")
	flag.IntVar(&c.steps, "steps", 20, "time steps")
	flag.IntVar(&c.work, "work", 32, "arithmetic per cell and step (rounds of a multiply-add)")
	flag.IntVar(&c.devices, "devices", 0, "devices to use (0: every device of the backend)")
	flag.IntVar(&c.parts, "parts", 0, "slabs, round-robin over the devices (0: one per device)")
	flag.BoolVar(&c.check, "check", true, "check the result against plain Go")
	flag.Parse()
	if err := run(os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "multigpu:", err)
		os.Exit(1)
	}
}

// run steps the grid on the devices c asks for and, with c.check, checks
// the result against plain Go.
func run(w io.Writer, c config) error {
	if c.rows < 1 || c.cols < 1 || c.steps < 0 || c.work < 0 || c.devices < 0 || c.parts < 0 {
		return fmt.Errorf("-rows and -cols must be at least 1, the other flags at least 0")
	}
	ps, err := openDevices(c.devices)
	if err != nil {
		return err
	}
	defer closeAll(ps)
	parts := c.parts
	if parts == 0 {
		parts = len(ps)
	}
	parts = min(parts, c.rows)
	for _, p := range ps {
		fmt.Fprintf(w, "%v\n", p.Device())
	}
	grid := initial(c.rows, c.cols)
	s, err := newSim(ps, parts, grid, c.cols, c.work)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := s.advance(c.steps); err != nil {
		return err
	}
	got, err := s.result() // waits for the last step
	if err != nil {
		return err
	}
	d := time.Since(t0)
	fmt.Fprintf(w, "%d×%d grid in %d slabs on %d device(s): %d steps of work %d in %v (%.3g cell updates/s)\n",
		c.rows, c.cols, parts, len(ps), c.steps, c.work, d.Round(time.Microsecond), float64(c.rows*c.cols*c.steps)/d.Seconds())
	if !c.check {
		return nil
	}
	want := reference(grid, c.rows, c.cols, c.steps, c.work)
	for i := range want {
		if diff := math.Abs(float64(got[i] - want[i])); diff > 1e-5*(1+math.Abs(float64(want[i]))) {
			return fmt.Errorf("cell (%d, %d) = %v, plain Go says %v", i/c.cols, i%c.cols, got[i], want[i])
		}
	}
	fmt.Fprintln(w, "results match the Go reference")
	return nil
}

// openDevices opens a Program on each of the first n devices of the
// backend qd.Init picks (every device for n = 0).
func openDevices(n int) ([]*qd.Program, error) {
	p0, err := qd.Init()
	if err != nil {
		return nil, err
	}
	have := 0
	for _, in := range qd.Devices() {
		if in.Arch == p0.Arch() && in.Err == nil {
			have++
		}
	}
	if n == 0 {
		n = have
	}
	ps := []*qd.Program{p0}
	for i := 1; i < n; i++ {
		p, err := qd.Init(qd.WithArch(p0.Arch()), qd.WithDevice(i)) // an error names how many devices there are
		if err != nil {
			closeAll(ps)
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func closeAll(ps []*qd.Program) error {
	var errs []error
	for _, p := range ps {
		errs = append(errs, p.Close()) // also closes every stream, event and array of p
	}
	return errors.Join(errs...)
}

// initial is the grid with its two boundary rows: (rows+2) × cols.
func initial(rows, cols int) []float32 {
	g := make([]float32, (rows+2)*cols)
	for i := range rows + 2 {
		for j := range cols {
			g[i*cols+j] = float32((i*31+j*17)%97) / 97
		}
	}
	return g
}

// reference runs step natively on the whole grid and returns its interior
// rows.
func reference(grid []float32, rows, cols, steps, work int) []float32 {
	cur, next := make([][]float32, rows+2), make([][]float32, rows+2)
	for i := range cur {
		cur[i] = append([]float32(nil), grid[i*cols:(i+1)*cols]...)
		next[i] = append([]float32(nil), cur[i]...)
	}
	for range steps {
		step(cur, next, work)
		cur, next = next, cur
	}
	out := make([]float32, 0, rows*cols)
	for _, r := range cur[1 : rows+1] {
		out = append(out, r...)
	}
	return out
}
