package main

import (
	_ "embed"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/quadrants-go/qd"
)

//go:embed kernels.go
var kernels string

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(1)
	}
}

const (
	batches = 8
	n       = 1 << 16
	slots   = 2
)

func run(w io.Writer) error {
	p, err := qd.Init()
	if err != nil {
		return err
	}
	defer p.Close() // also closes the streams, events and arrays below

	mod, err := qd.Compile(p, kernels, qd.WithFilename("kernels.go"))
	if err != nil {
		return err
	}
	prod, err := mod.Kernel("produce")
	if err != nil {
		return err
	}
	cons, err := mod.Kernel("consume")
	if err != nil {
		return err
	}

	producer, err := p.NewStream()
	if err != nil {
		return err
	}
	consumer, err := p.NewStream()
	if err != nil {
		return err
	}
	out, err := qd.NewNdarray[float32](p, batches, n)
	if err != nil {
		return err
	}
	var buf [slots]*qd.Ndarray[float32]
	var ready, free [slots]*qd.Event
	for s := range slots {
		if buf[s], err = qd.NewNdarray[float32](p, n); err != nil {
			return err
		}
		if ready[s], err = p.NewEvent(); err != nil {
			return err
		}
		if free[s], err = p.NewEvent(); err != nil {
			return err
		}
	}

	for b := range batches {
		s := b % slots
		if b >= slots {
			// The consumer must be done with batch b-2 before the producer
			// overwrites its buffer.
			if err := producer.WaitEvent(free[s]); err != nil {
				return err
			}
		}
		if err := prod.LaunchOn(producer, buf[s], b); err != nil {
			return err
		}
		if err := ready[s].Record(producer); err != nil {
			return err
		}
		if err := consumer.WaitEvent(ready[s]); err != nil {
			return err
		}
		if err := cons.LaunchOn(consumer, buf[s], out, b); err != nil {
			return err
		}
		if err := free[s].Record(consumer); err != nil {
			return err
		}
	}
	got, err := out.ToSlice() // waits for the consumer's writes
	if err != nil {
		return err
	}

	// Reference: the same kernels called natively, one batch at a time.
	ref := make([][]float32, batches)
	hbuf := make([]float32, n)
	for b := range ref {
		ref[b] = make([]float32, n)
		produce(hbuf, b)
		consume(hbuf, ref, b)
	}
	for b := range batches {
		for i := range n {
			g, want := got[b*n+i], ref[b][i]
			if math.Abs(float64(g-want)) > 1e-5*math.Max(1, math.Abs(float64(want))) {
				return fmt.Errorf("batch %d element %d = %v, want %v", b, i, g, want)
			}
		}
	}
	fmt.Fprintf(w, "pipeline on %s: %d batches of %d through 2 streams and %d buffers, ordered by events; results match the Go reference\n",
		p.Device(), batches, n, slots)
	return nil
}
