package main

import (
	"fmt"
	"io"
	"time"

	"github.com/quadrants-go/qd"
)

// runQD simulates through qd: the kernels compiled for cfg.arch, the
// particles and the grid in device arrays, one frame's substeps captured
// once as a graph and replayed on a stream per frame. The first frame is
// checked against the kernels run as plain Go; then every frame is copied
// back and drawn, and the substep is timed both as a graph replay and as
// launches one by one.
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
	frame := func() error {
		for range cfg.substeps {
			for _, l := range []struct {
				k    *qd.Kernel
				args []any
			}{{k["clearGrid"], []any{grid}}, {k["p2g"], []any{ps, grid}}, {k["gridUpdate"], []any{grid}}, {k["g2p"], []any{ps, grid}}} {
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

	// The first frame, against plain Go.
	want, native := reference(start, cfg.substeps)
	dFirst, err := timed(replay)
	if err != nil {
		return err
	}
	d := compare(buf, want)
	if err := d.check(); err != nil {
		return err
	}
	an := newAnimation(cfg, frames)
	an.add(start)
	an.add(buf)

	// The other frames, one graph replay each, drawn as they come back.
	var replayed time.Duration
	for range frames - 1 {
		dt, err := timed(replay)
		if err != nil {
			return err
		}
		replayed += dt
		an.add(buf)
	}
	if frames == 1 {
		replayed = dFirst // one frame: its replay is the only one timed
	}
	// A few more frames launched one kernel at a time, for the comparison.
	launchFrames := max(1, min(frames, 5))
	var launched time.Duration
	for range launchFrames {
		dt, err := timed(frame)
		if err != nil {
			return err
		}
		launched += dt
	}

	steps := cfg.substeps
	row(w, "plain Go, one goroutine (the check)", native, steps, "")
	row(w, "qd, 4 launches per substep", launched, launchFrames*steps, "")
	row(w, "qd, a graph replay per frame", replayed, max(frames-1, 1)*steps,
		fmt.Sprintf("  (%.2f× the launches, %.1f× plain Go)",
			ratio(launched, launchFrames, replayed, max(frames-1, 1)), ratio(native, 1, replayed, max(frames-1, 1))))
	fmt.Fprintf(w, "first frame matches plain Go: %v\n", d)
	return an.write(w)
}

// ratio returns how many times faster b (over bn frames) is than a (over an).
func ratio(a time.Duration, an int, b time.Duration, bn int) float64 {
	if b <= 0 {
		return 0
	}
	return (float64(a) / float64(an)) / (float64(b) / float64(bn))
}
