package qd_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/quadrants-go/qd"
)

func ExampleStream_Capture() {
	p, fill, axpy := exampleProgram()
	defer p.Close()
	x, _ := qd.NewNdarray[float32](p, 3)
	y, _ := qd.NewNdarray[float32](p, 3)
	s, _ := p.NewStream()
	// Record the work, without running it: y = 2*x + y, ten times.
	g, err := s.Capture(func() error {
		if err := fill.LaunchOn(s, x, float32(1)); err != nil {
			return err
		}
		for range 10 {
			if err := axpy.LaunchOn(s, float32(2), x, y); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	for range 3 {
		g.LaunchOn(s) // all eleven launches, enqueued with one call
	}
	out, _ := y.ToSlice()
	fmt.Println(out)

	// A host wait inside a capture is refused, and the capture with it.
	_, err = s.Capture(func() error { return s.Synchronize() })
	fmt.Println(errors.Is(err, qd.ErrCapturing))
	// Output:
	// [60 60 60]
	// true
}

func ExampleGraph_Update() {
	p, fill, _ := exampleProgram()
	defer p.Close()
	x, _ := qd.NewNdarray[float32](p, 2)
	y, _ := qd.NewNdarray[float32](p, 2)
	s, _ := p.NewStream()
	g, err := s.Capture(func() error { return fill.LaunchOn(s, x, float32(1)) })
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	// The same launch with another array and value: updated in place.
	if err := g.Update(func() error { return fill.LaunchOn(s, y, float32(7)) }); err != nil {
		log.Fatal(err)
	}
	g.LaunchOn(s)
	xs, _ := x.ToSlice()
	ys, _ := y.ToSlice()
	fmt.Println(xs, ys)
	// Output: [0 0] [7 7]
}
