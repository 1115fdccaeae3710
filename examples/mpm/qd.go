package main

import (
	"fmt"
	"io"
	"time"

	"github.com/quadrants-go/qd"
)

// runQD simulates through qd: the kernels compiled for cfg.arch, the
// particles and the grid in device arrays, one frame's substeps captured
// once as a graph and replayed on a stream per frame. Frame 1 is checked
// against the kernels run as plain Go; then every frame is copied back and
// drawn, and the substep is timed both as a graph replay and as launches
// one by one, over the same frames.
func runQD(w io.Writer, cfg config, start []Particle) error {
	p, err := qd.Init(qd.WithArch(cfg.arch))
	if err != nil {
		return err
	}
	defer p.Close() // also closes everything made below
	frames := cfg.framesOn(p.Arch())
	fmt.Fprintf(w, "mpm on %s: %s\n", p.Device(), cfg.describe(frames))

	t0 := time.Now()
	mod, err := compileKernels(p)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "compiled %d kernels from kernels.go in %v\n", len(mod.Kernels()), time.Since(t0).Round(time.Microsecond))
	k := map[string]*qd.Kernel{}
	for _, name := range []string{"clearGrid", "p2g", "gridUpdate", "g2p"} {
		if k[name], err = mod.Kernel(name); err != nil {
			return err
		}
	}
	dev, err := newDeviceState(p, start)
	if err != nil {
		return err
	}
	ps, grid := dev.args()
	s, err := p.NewStream()
	if err != nil {
		return err
	}
	// frame enqueues one frame: substeps × (clear, scatter, update, gather).
	substep := []struct {
		k    *qd.Kernel
		args []any
	}{{k["clearGrid"], []any{grid}}, {k["p2g"], []any{ps, grid}}, {k["gridUpdate"], []any{grid}}, {k["g2p"], []any{ps, grid}}}
	frame := func() error {
		for range cfg.substeps {
			for _, l := range substep {
				if err := l.k.LaunchOn(s, l.args...); err != nil {
					return err
				}
			}
		}
		return nil
	}
	g, err := s.Capture(frame) // recorded, not run
	if err != nil {
		return err
	}
	t0s, err := p.NewEvent(qd.WithTiming())
	if err != nil {
		return err
	}
	t1s, err := p.NewEvent(qd.WithTiming())
	if err != nil {
		return err
	}
	// timed enqueues one frame with next between two timing events and
	// returns the device's time for it once the host has read the particles
	// back into buf (which waits for the frame).
	buf := make([]Particle, cfg.n)
	timed := func(next func() error) (time.Duration, error) {
		if err := t0s.Record(s); err != nil {
			return 0, err
		}
		if err := next(); err != nil {
			return 0, err
		}
		if err := t1s.Record(s); err != nil {
			return 0, err
		}
		if err := dev.read(buf); err != nil {
			return 0, err
		}
		return qd.Elapsed(t0s, t1s)
	}
	replay := func() error { return g.LaunchOn(s) }

	// Frame 1, replayed from the graph, against plain Go.
	want, native := reference(start, cfg.substeps)
	if _, err := timed(replay); err != nil {
		return err
	}
	d := compare(buf, want)
	if err := d.check(); err != nil {
		return err
	}
	an := newAnimation(cfg, frames)
	an.add(start)
	an.add(buf)

	// Frames 2 to frames, one graph replay each, drawn as they come back.
	// Frame 1 is left out of the timings (it may load the module), as
	// testdata/mpm.cu leaves it out of its own.
	replayed := make([]time.Duration, frames+1) // by frame
	for f := 2; f <= frames; f++ {
		if replayed[f], err = timed(replay); err != nil {
			return err
		}
		an.add(buf)
	}
	// The same frames again from the start, launched one kernel at a time:
	// all of them on a GPU, where it is quick, the first few on the CPU.
	last := frames
	if p.Arch() == qd.CPU {
		last = min(frames, 4)
	}
	var launched time.Duration
	if last >= 2 {
		if err := dev.reset(start); err != nil {
			return err
		}
		for f := 1; f <= last; f++ {
			el, err := timed(frame)
			if err != nil {
				return err
			}
			if f >= 2 {
				launched += el
			}
		}
	}

	steps := cfg.substeps
	row(w, "plain Go, one goroutine (frame 1)", native, steps, "")
	if frames >= 2 {
		graph := sum(replayed[2:])
		row(w, fmt.Sprintf("qd, a graph replay per frame (2-%d)", frames), graph, (frames-1)*steps,
			fmt.Sprintf("  %.1f× plain Go", ratio(native, steps, graph, (frames-1)*steps)))
		row(w, fmt.Sprintf("qd, 4 launches per substep (2-%d)", last), launched, (last-1)*steps,
			fmt.Sprintf("  the graph is %.2f× faster", ratio(launched, 1, sum(replayed[2:last+1]), 1)))
	}
	fmt.Fprintf(w, "frame 1 matches plain Go: %v\n", d)
	return an.write(w)
}

// sum returns the total of ds.
func sum(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t
}

// ratio returns how many times faster b is than a, per unit of work: a
// took a for an units, b took b for bn.
func ratio(a time.Duration, an int, b time.Duration, bn int) float64 {
	if b <= 0 || an <= 0 {
		return 0
	}
	return (float64(a) / float64(an)) / (float64(b) / float64(bn))
}
