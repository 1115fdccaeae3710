package main

import (
	_ "embed"
	"fmt"
	"io"
	"os"

	"github.com/quadrants-go/qd"
)

//go:embed kernels.go
var kernels string

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "saxpy:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	p, err := qd.Init() // qd.Auto: CUDA, else AMDGPU, else the CPU
	if err != nil {
		return err
	}
	defer p.Close()

	mod, err := qd.Compile(p, kernels, qd.WithFilename("kernels.go"))
	if err != nil {
		return err
	}
	k, err := mod.Kernel("saxpy")
	if err != nil {
		return err
	}

	const n = 1 << 20
	hx, hy := make([]float32, n), make([]float32, n)
	for i := range n {
		hx[i], hy[i] = float32(i%1000), 1
	}
	x, err := qd.NewNdarray[float32](p, n)
	if err != nil {
		return err
	}
	y, err := qd.NewNdarray[float32](p, n)
	if err != nil {
		return err
	}
	if err := x.CopyFromHost(hx); err != nil {
		return err
	}
	if err := y.CopyFromHost(hy); err != nil {
		return err
	}
	if err := k.Launch(float32(2), x, y); err != nil { // enqueued on the default stream
		return err
	}
	got, err := y.ToSlice() // waits for the kernel
	if err != nil {
		return err
	}

	saxpy(2, hx, hy) // the same kernel, run natively as the reference
	for i := range n {
		if got[i] != hy[i] {
			return fmt.Errorf("y[%d] = %v, want %v", i, got[i], hy[i])
		}
	}
	fmt.Fprintf(w, "saxpy on %s: %d elements match the Go reference\n", p.Device(), n)
	return nil
}
