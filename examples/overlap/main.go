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
	if err := run(os.Stdout, 1<<22, 16, 4); err != nil {
		fmt.Fprintln(os.Stderr, "overlap:", err)
		os.Exit(1)
	}
}

const terms = 48

// run processes n float32 in chunks on 1 stream, then on nstreams, and
// checks both against plain Go.
func run(w io.Writer, n, chunks, nstreams int) error {
	p, err := qd.Init()
	if err != nil {
		return err
	}
	defer p.Close() // also closes everything made below
	fmt.Fprintf(w, "overlap on %s: %d float32 in %d chunks\n", p.Device(), n, chunks)

	mod, err := qd.Compile(p, kernels, qd.WithFilename("kernels.go"))
	if err != nil {
		return err
	}
	smooth, err := mod.Kernel("smooth")
	if err != nil {
		return err
	}
	host, err := qd.NewHostArray[float32](p, n) // page-locked on a GPU
	if err != nil {
		return err
	}
	dev, err := qd.NewNdarray[float32](p, n)
	if err != nil {
		return err
	}
	streams := make([]*qd.Stream, nstreams)
	for i := range streams {
		if streams[i], err = p.NewStream(); err != nil {
			return err
		}
	}
	// The chunks: views of the two arrays, sharing their memory.
	hv := make([]*qd.HostArray[float32], chunks)
	dv := make([]*qd.Ndarray[float32], chunks)
	for c := range chunks {
		lo, hi := c*n/chunks, (c+1)*n/chunks
		if hv[c], err = host.Rows(lo, hi); err != nil {
			return err
		}
		if dv[c], err = dev.Rows(lo, hi); err != nil {
			return err
		}
	}
	input := make([]float32, n)
	for i := range input {
		input[i] = float32(math.Sin(float64(i) * 0.001))
	}
	want := make([]float32, n)
	for i, v := range input {
		want[i] = smoothGo(v)
	}

	pass := func(streams []*qd.Stream) (time.Duration, error) {
		data, err := host.Data() // waits for earlier copies of host
		if err != nil {
			return 0, err
		}
		copy(data, input)
		t0 := time.Now()
		for c := range chunks {
			s := streams[c%len(streams)]
			if err := dv[c].CopyFromHostOn(s, hv[c]); err != nil {
				return 0, err
			}
			if err := smooth.LaunchOn(s, dv[c], terms); err != nil {
				return 0, err
			}
			if err := dv[c].CopyToHostOn(s, hv[c]); err != nil {
				return 0, err
			}
		}
		got, err := host.Data() // waits for every chunk's copy back
		if err != nil {
			return 0, err
		}
		d := time.Since(t0)
		for i := range got {
			if got[i] != want[i] {
				return 0, fmt.Errorf("element %d: %v, want %v (plain Go)", i, got[i], want[i])
			}
		}
		return d, nil
	}
	if _, err := pass(streams); err != nil { // warm up: compile, pools
		return err
	}
	one, err := pass(streams[:1])
	if err != nil {
		return err
	}
	many, err := pass(streams)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "1 stream:   %8.3f ms\n", one.Seconds()*1e3)
	fmt.Fprintf(w, "%d streams: %8.3f ms  (%.2f× faster)\n", nstreams, many.Seconds()*1e3, one.Seconds()/many.Seconds())
	fmt.Fprintln(w, "results match the Go reference")
	return nil
}

// smoothGo is the kernel's work on one element, in plain Go.
func smoothGo(v float32) float32 {
	acc := float32(0)
	for range terms {
		acc = acc*v + 0.5
	}
	return acc + float32(math.Sqrt(float64(v*v)))
}
