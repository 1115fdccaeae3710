package main

import (
	_ "embed"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/quadrants-go/qd"
)

//go:embed kernels.go
var kernels string

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "streamparallel:", err)
		os.Exit(1)
	}
}

const (
	bins    = 16
	nValues = 1 << 16
	rows    = 256
	cols    = 512
	nRamp   = 1 << 16
)

func run(w io.Writer) error {
	p, err := qd.Init()
	if err != nil {
		return err
	}
	defer p.Close()

	mod, err := qd.Compile(p, kernels, qd.WithFilename("kernels.go"))
	if err != nil {
		return err
	}

	// The reference: the kernel called natively (the blocks run in turn).
	values := make([]int32, nValues)
	for i := range values {
		values[i] = int32((i*i + 3*i) % 997)
	}
	wantHist, wantRamp := make([]int32, bins), make([]float32, nRamp)
	wantGrid := make([][]float32, rows)
	for i := range wantGrid {
		wantGrid[i] = make([]float32, cols)
	}
	prepare(wantHist, values, wantGrid, wantRamp)

	for _, name := range []string{"prepare", "prepareSerial"} {
		k, err := mod.Kernel(name)
		if err != nil {
			return err
		}
		hist, err := qd.NewNdarray[int32](p, bins)
		if err != nil {
			return err
		}
		vals, err := qd.NewNdarray[int32](p, nValues)
		if err != nil {
			return err
		}
		grid, err := qd.NewNdarray[float32](p, rows, cols)
		if err != nil {
			return err
		}
		ramp, err := qd.NewNdarray[float32](p, nRamp)
		if err != nil {
			return err
		}
		if err := vals.CopyFromHost(values); err != nil {
			return err
		}
		// One launch on the default stream; with groups it forks into three
		// streams and joins back before anything later on this stream runs.
		if err := k.Launch(hist, vals, grid, ramp); err != nil {
			return err
		}
		gotHist, err := hist.ToSlice()
		if err != nil {
			return err
		}
		if !slices.Equal(gotHist, wantHist) {
			return fmt.Errorf("%s: histogram %v, want %v", name, gotHist, wantHist)
		}
		gotGrid, err := grid.ToSlice()
		if err != nil {
			return err
		}
		for i := range rows {
			if err := near(name+": grid", gotGrid[i*cols:(i+1)*cols], wantGrid[i]); err != nil {
				return err
			}
		}
		gotRamp, err := ramp.ToSlice()
		if err != nil {
			return err
		}
		if err := near(name+": ramp", gotRamp, wantRamp); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "streamparallel on %s: 3 jobs in one launch on 3 streams, and without groups; both match the Go reference\n", p.Device())
	fmt.Fprintf(w, "histogram of %d values in %d bins: %v\n", nValues, bins, wantHist)
	return nil
}

// near compares float results with a small relative tolerance (GPUs may
// round square roots and divisions differently in the last bit).
func near(what string, got, want []float32) error {
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-6*math.Max(1, math.Abs(float64(want[i]))) {
			return fmt.Errorf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
	return nil
}
