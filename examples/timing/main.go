package main

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/quadrants-go/qd"
)

//go:embed kernels.go
var kernels string

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "timing:", err)
		os.Exit(1)
	}
}

const reps = 20

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
	// Large enough that a launch's time is its memory traffic, not its
	// start-up: 1 Mi elements on the CPU, 16 Mi on a GPU.
	n := 1 << 20
	if p.Arch() != qd.CPU {
		n = 1 << 24
	}
	k, err := mod.Kernel("saxpy")
	if err != nil {
		return err
	}
	s, err := p.NewStream()
	if err != nil {
		return err
	}
	start, err := p.NewEvent(qd.WithTiming())
	if err != nil {
		return err
	}
	end, err := p.NewEvent(qd.WithTiming())
	if err != nil {
		return err
	}

	hx := make([]float32, n)
	for i := range hx {
		hx[i] = float32(i % 64)
	}
	x, err := qd.NewNdarray[float32](p, n)
	if err != nil {
		return err
	}
	y, err := qd.NewNdarray[float32](p, n) // zero-filled
	if err != nil {
		return err
	}
	if err := x.CopyFromHost(hx); err != nil {
		return err
	}

	// One untimed launch first: the first launch may load the module.
	if err := k.LaunchOn(s, float32(1), x, y); err != nil {
		return err
	}
	wall := time.Now()
	if err := start.Record(s); err != nil {
		return err
	}
	for range reps {
		if err := k.LaunchOn(s, float32(1), x, y); err != nil {
			return err
		}
	}
	if err := end.Record(s); err != nil {
		return err
	}
	enqueued := time.Since(wall)
	if err := end.Synchronize(); err != nil { // the host waits for end only
		return err
	}
	d, err := qd.Elapsed(start, end)
	if err != nil {
		return err
	}

	got, err := y.ToSlice()
	if err != nil {
		return err
	}
	hy := make([]float32, n)
	for range reps + 1 {
		saxpy(1, hx, hy) // the kernel run natively: the reference
	}
	for i := range got {
		if got[i] != hy[i] { // exact: small integers in float32
			return fmt.Errorf("y[%d] = %v, want %v", i, got[i], hy[i])
		}
	}

	// Elapsed needs two timing events; an ordinary one is refused.
	plain, err := p.NewEvent()
	if err != nil {
		return err
	}
	if err := plain.Record(s); err != nil {
		return err
	}
	if _, err := qd.Elapsed(start, plain); !errors.Is(err, qd.ErrInvalidArgument) {
		return fmt.Errorf("Elapsed with an event made without WithTiming: %v, want ErrInvalidArgument", err)
	}

	per := d / reps
	gbs := float64(3*4*n) / per.Seconds() / 1e9 // x read, y read and written
	fmt.Fprintf(w, "timing on %s\n", p.Device())
	fmt.Fprintf(w, "%d saxpy launches of %d elements: %v on the device (%v each, %.1f GB/s); enqueueing took %v on the host\n",
		reps, n, d.Round(time.Microsecond), per.Round(time.Microsecond), gbs, enqueued.Round(time.Microsecond))
	fmt.Fprintln(w, "results match the Go reference")
	return nil
}
