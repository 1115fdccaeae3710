package main

import (
	_ "embed"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/quadrants-go/qd"
)

//go:embed kernels.go
var kernels string

func main() {
	if err := run(os.Stdout, 64, 100, 50); err != nil {
		fmt.Fprintln(os.Stderr, "graph:", err)
		os.Exit(1)
	}
}

const alpha = 0.2

// run advances a size×size grid by frames frames of steps steps (an even
// number), once with a launch per step and once with a graph replay per
// frame, and checks both against plain Go.
func run(w io.Writer, size, steps, frames int) error {
	if steps%2 != 0 {
		return fmt.Errorf("steps must be even, so that each frame ends in the first grid")
	}
	p, err := qd.Init()
	if err != nil {
		return err
	}
	defer p.Close() // also closes everything made below, the graph included
	fmt.Fprintf(w, "graph on %s: %d×%d grid, %d frames of %d steps\n", p.Device(), size, size, frames, steps)

	mod, err := qd.Compile(p, kernels, qd.WithFilename("kernels.go"))
	if err != nil {
		return err
	}
	heat, err := mod.Kernel("heatStep")
	if err != nil {
		return err
	}
	a, err := qd.NewNdarray[float32](p, size, size)
	if err != nil {
		return err
	}
	b, err := qd.NewNdarray[float32](p, size, size)
	if err != nil {
		return err
	}
	s, err := p.NewStream()
	if err != nil {
		return err
	}
	start := initial(size)
	want := reference(start, (frames+1)*steps) // a warm-up frame, then the timed ones

	// frame enqueues one frame's steps: a → b, b → a, ...
	frame := func() error {
		for t := range steps {
			in, out := a, b
			if t%2 == 1 {
				in, out = b, a
			}
			if err := heat.LaunchOn(s, in, out, float32(alpha)); err != nil {
				return err
			}
		}
		return nil
	}
	// Capturing records the launches without running them.
	g, err := s.Capture(frame)
	if err != nil {
		return err
	}

	// pass runs the warm-up frame and the timed frames, enqueueing each
	// frame with next and waiting for it (end to end, as a program that
	// looks at every frame would), and checks the result.
	pass := func(name string, next func() error) (time.Duration, error) {
		if err := a.CopyFromHost(flatten(start)); err != nil {
			return 0, err
		}
		var d time.Duration
		for f := range frames + 1 {
			t0 := time.Now()
			if err := next(); err != nil {
				return 0, err
			}
			if err := s.Synchronize(); err != nil {
				return 0, err
			}
			if f > 0 {
				d += time.Since(t0)
			}
		}
		got, err := a.ToSlice()
		if err != nil {
			return 0, err
		}
		if err := compare(got, want, size); err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		return d, nil
	}
	launched, err := pass("launches", frame)
	if err != nil {
		return err
	}
	replayed, err := pass("graph", func() error { return g.LaunchOn(s) })
	if err != nil {
		return err
	}
	perFrame := func(d time.Duration) float64 { return float64(d) / float64(frames) / float64(time.Microsecond) }
	fmt.Fprintf(w, "%d launches per frame: %9.1f µs/frame\n", steps, perFrame(launched))
	fmt.Fprintf(w, "1 graph replay per frame: %5.1f µs/frame  (%.2f× faster)\n", perFrame(replayed), float64(launched)/float64(replayed))
	fmt.Fprintln(w, "results match the Go reference")
	return nil
}

// initial is the starting grid: a hot spot off the centre.
func initial(size int) [][]float32 {
	g := make([][]float32, size)
	ci, cj := size/3, size/2
	for i := range g {
		g[i] = make([]float32, size)
		for j := range g[i] {
			d := float64((i-ci)*(i-ci) + (j-cj)*(j-cj))
			g[i][j] = float32(100 * math.Exp(-d/float64(size)))
		}
	}
	return g
}

func flatten(g [][]float32) []float32 {
	out := make([]float32, 0, len(g)*len(g[0]))
	for _, row := range g {
		out = append(out, row...)
	}
	return out
}

// reference runs the simulation by calling the kernel natively.
func reference(g [][]float32, steps int) []float32 {
	a, b := make([][]float32, len(g)), make([][]float32, len(g))
	for i := range g {
		a[i] = append([]float32(nil), g[i]...)
		b[i] = make([]float32, len(g[i]))
	}
	for range steps {
		heatStep(a, b, alpha)
		a, b = b, a
	}
	return flatten(a)
}

// compare checks the grid against the reference: exact on the CPU; a GPU
// may fuse multiply-adds, so a small relative error is allowed.
func compare(got, want []float32, size int) error {
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-3*math.Max(1, math.Abs(float64(want[i]))) {
			return fmt.Errorf("cell (%d, %d) = %v, the reference has %v", i/size, i%size, got[i], want[i])
		}
	}
	return nil
}
