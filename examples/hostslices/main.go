package main

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/quadrants-go/qd"
)

//go:embed kernels.go
var kernels string

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "hostslices:", err)
		os.Exit(1)
	}
}

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
	sc, err := mod.Kernel("scale")
	if err != nil {
		return err
	}
	tr, err := mod.Kernel("transpose")
	if err != nil {
		return err
	}

	// 1-D: the slice is updated in place.
	x := []float64{1, 2, 3, 4, 5}
	if err := sc.Launch(2.5, x); err != nil {
		return err
	}
	if want := []float64{2.5, 5, 7.5, 10, 12.5}; !slices.Equal(x, want) {
		return fmt.Errorf("scale: %v, want %v", x, want)
	}
	fmt.Fprintf(w, "scale(2.5, x):   %v\n", x)

	// 2-D: rows of a [][]int32; the result goes into another slice.
	m := [][]int32{{1, 2, 3}, {4, 5, 6}}
	t := [][]int32{make([]int32, 2), make([]int32, 2), make([]int32, 2)}
	if err := tr.Launch(m, t); err != nil {
		return err
	}
	want := [][]int32{{0, 0}, {0, 0}, {0, 0}}
	transpose(m, want) // the reference: the kernel run natively
	for i := range want {
		if !slices.Equal(t[i], want[i]) {
			return fmt.Errorf("transpose: %v, want %v", t, want)
		}
	}
	fmt.Fprintf(w, "transpose(m, t): %v -> %v\n", m, t)

	// The same kernel from several goroutines, each on its own stream with
	// its own slice: launch memory is per call, so no call sees another's
	// data.
	var wg sync.WaitGroup
	ys := make([][]float64, 4)
	errs := make([]error, len(ys))
	for g := range ys {
		ys[g] = []float64{1, 2, 3}
		wg.Go(func() {
			s, err := p.NewStream()
			if err != nil {
				errs[g] = err
				return
			}
			defer s.Close()
			errs[g] = sc.LaunchOn(s, float64(g), ys[g])
		})
	}
	wg.Wait()
	for g, y := range ys {
		if errs[g] != nil {
			return errs[g]
		}
		if want := []float64{float64(g), float64(2 * g), float64(3 * g)}; !slices.Equal(y, want) {
			return fmt.Errorf("goroutine %d: %v, want %v", g, y, want)
		}
	}
	fmt.Fprintf(w, "4 goroutines, 4 streams:  %v\n", ys)

	// A ragged slice is an argument error naming the kernel and parameter.
	err = tr.Launch([][]int32{{1, 2}, {3}}, t)
	var argErr *qd.ArgumentError
	if !errors.As(err, &argErr) {
		return fmt.Errorf("ragged slice: got %v, want a *qd.ArgumentError", err)
	}
	fmt.Fprintf(w, "a ragged slice is refused: %v\n", err)
	fmt.Fprintf(w, "hostslices on %s: results match the Go reference\n", p.Device())
	return nil
}
