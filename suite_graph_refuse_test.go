package qd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// graphEnv is what a refused call inside a capture works with: s
// captures, x and h are used by the capture's work before the call, e was
// recorded inside the capture and outside before it, o is a stream
// outside the capture.
type graphEnv struct {
	p        *Program
	k        graphKernels
	s, o     *Stream
	x        *Ndarray[float32]
	h        *HostArray[float32]
	e, eOut  *Event
	t0, t1   *Event // timing events recorded inside the capture
	replayed *Graph // a graph captured before
}

// TestGraphRefusals: every call a capture cannot hold, made inside the
// capture, returns an error matching ErrCapturing that names the call
// and the capture; the capture fails with it; afterwards the stream, the
// arrays and a new capture work.
func TestGraphRefusals(t *testing.T) {
	cases := []struct {
		call string
		do   func(env *graphEnv) error
	}{
		{"Stream.Synchronize", func(e *graphEnv) error { return e.s.Synchronize() }},
		{"Stream.Query", func(e *graphEnv) error { _, err := e.s.Query(); return err }},
		{"Stream.SynchronizeContext", func(e *graphEnv) error { return e.s.SynchronizeContext(context.Background()) }},
		{"Program.Synchronize", func(e *graphEnv) error { return e.p.Synchronize() }},
		{"Ndarray.ToSlice", func(e *graphEnv) error { _, err := e.x.ToSlice(); return err }},
		{"Ndarray.CopyToHost", func(e *graphEnv) error { return e.x.CopyToHost(make([]float32, e.x.Len())) }},
		{"Ndarray.CopyFromHost", func(e *graphEnv) error { return e.x.CopyFromHost(make([]float32, e.x.Len())) }},
		{"HostArray.Data", func(e *graphEnv) error { _, err := e.h.Data(); return err }},
		{"Event.Synchronize", func(e *graphEnv) error { return e.e.Synchronize() }},
		{"Event.Query", func(e *graphEnv) error { _, err := e.e.Query(); return err }},
		{"Elapsed", func(e *graphEnv) error { _, err := Elapsed(e.t0, e.t1); return err }},
		{"kernel fill", func(e *graphEnv) error { return e.k.fill.LaunchOn(e.s, make([]float32, 4), float32(1)) }},
		{"Stream.WaitEvent", func(e *graphEnv) error { return e.s.WaitEvent(e.eOut) }},
		{"Stream.WaitStream", func(e *graphEnv) error { return e.s.WaitStream(e.o) }},
		{"Graph.LaunchOn", func(e *graphEnv) error { return e.replayed.LaunchOn(e.s) }},
		{"Capture", func(e *graphEnv) error {
			_, err := e.s.Capture(func() error { return nil })
			return err
		}},
		{"Stream.Close", func(e *graphEnv) error {
			if err := e.o.WaitStream(e.s); err != nil { // o joins the capture
				return err
			}
			return e.o.Close()
		}},
	}
	forEachArch(t, func(t *testing.T, p *Program) {
		env := &graphEnv{p: p, k: newGraphKernels(t, p),
			x:  newNdarray[float32](t, p, 16),
			h:  newHostArray[float32](t, p, 16),
			e:  newEvent(t, p),
			t0: newEvent(t, p, WithTiming()), t1: newEvent(t, p, WithTiming()),
			eOut: newEvent(t, p),
		}
		for _, tc := range cases {
			t.Run(tc.call, func(t *testing.T) {
				env.s = newStream(t, p)
				env.o = newStream(t, p)
				defer env.s.Close()
				defer env.o.Close()
				env.replayed = captureGraph(t, env.s, func() error { return env.k.fill.LaunchOn(env.s, env.x, float32(1)) })
				defer env.replayed.Close()
				check(t, env.eOut.Record(env.o))
				var callErr error
				_, err := env.s.Capture(func() error {
					for _, err := range []error{
						env.k.fill.LaunchOn(env.s, env.x, float32(2)),
						env.x.CopyToHostOn(env.s, env.h),
						env.e.Record(env.s), env.t0.Record(env.s), env.t1.Record(env.s),
					} {
						if err != nil {
							return err
						}
					}
					callErr = tc.do(env)
					return nil // the capture fails with the refusal all the same
				})
				if !errors.Is(callErr, ErrCapturing) {
					t.Fatalf("%s inside the capture: %v, want an error matching ErrCapturing", tc.call, callErr)
				}
				origin := env.s.c.describe()
				for _, want := range []string{tc.call, "capture on " + origin} {
					if !strings.Contains(callErr.Error(), want) {
						t.Errorf("%s: error %q does not contain %q", tc.call, callErr, want)
					}
				}
				if !errors.Is(err, ErrCapturing) || !strings.Contains(err.Error(), tc.call) {
					t.Errorf("Capture returned %v, want the refusal of %s", err, tc.call)
				}
				// The Program is usable: the streams run work, the
				// arrays read, the capture's events record again, and
				// the same stream captures again.
				check(t, env.k.fill.LaunchOn(env.s, env.x, float32(3)))
				check(t, env.s.Synchronize())
				check(t, env.o.Synchronize())
				check(t, p.Synchronize())
				wantAll(t, "x", env.x, 3)
				check(t, env.e.Record(env.s))
				check(t, env.e.Synchronize())
				g := captureGraph(t, env.s, func() error { return env.k.fill.LaunchOn(env.s, env.x, float32(4)) })
				check(t, g.LaunchOn(env.o))
				wantAll(t, "x", env.x, 4)
				check(t, g.Close())
				if out := p.pool.Out(); out != 0 {
					t.Errorf("%d pooled streams out", out)
				}
			})
		}
	})
}

// TestGraphEventOfEndedCapture: an event last recorded in a capture that
// has ended marks a point of the graph: waiting for it is refused until it
// is recorded again.
func TestGraphEventOfEndedCapture(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		s := newStream(t, p)
		o := newStream(t, p)
		e := newEvent(t, p)
		g := captureGraph(t, s, func() error { return e.Record(s) })
		defer g.Close()
		wantErr(t, e.Synchronize(), ErrCapturing)
		wantErr(t, o.WaitEvent(e), ErrCapturing)
		check(t, e.Record(o))
		check(t, e.Synchronize())
		check(t, o.WaitEvent(e))
	})
}

// TestGraphDebugKernels: a GPU kernel built WithDebug cannot be captured
// (its checks report through the host); the CPU, which always checks,
// captures it.
func TestGraphDebugKernels(t *testing.T) {
	forEachArchWith(t, []InitOption{WithDebug()}, func(t *testing.T, p *Program) {
		k := newGraphKernels(t, p)
		x := newNdarray[float32](t, p, 8)
		s := newStream(t, p)
		g, err := s.Capture(func() error { return k.fill.LaunchOn(s, x, float32(1)) })
		if p.Arch() == CPU {
			check(t, err)
			check(t, g.Close())
			return
		}
		if !errors.Is(err, ErrCapturing) || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "WithDebug") {
			t.Fatalf("capture of a WithDebug kernel: %v, want a refusal naming WithDebug", err)
		}
		check(t, k.fill.LaunchOn(s, x, float32(2)))
		check(t, s.Synchronize())
		wantAll(t, "x", x, 2)
	})
}

// TestGraphAllowedInCapture: calls without a stream run at once inside a
// capture and are not captured: NewNdarray (its fill runs on a pooled
// stream outside the capture, which the host waits for: it never waits
// for a capturing stream), NewHostArray, NewStream, NewEvent and a host
// read of an array the capture does not use.
func TestGraphAllowedInCapture(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := newGraphKernels(t, p)
		x := newNdarray[float32](t, p, 8)
		s := newStream(t, p)
		var made *Ndarray[float32]
		g := captureGraph(t, s, func() error {
			if err := k.fill.LaunchOn(s, x, float32(3)); err != nil {
				return err
			}
			a, err := NewNdarray[float32](p, 8)
			if err != nil {
				return err
			}
			made = a
			if got, err := a.ToSlice(); err != nil || got[0] != 0 {
				return fmt.Errorf("NewNdarray in the capture reads %v, %v; want zeros", got, err)
			}
			h, err := NewHostArray[float32](p, 8)
			if err != nil {
				return err
			}
			o, err := p.NewStream()
			if err != nil {
				return err
			}
			e, err := p.NewEvent()
			if err != nil {
				return err
			}
			return errors.Join(h.Close(), o.Close(), e.Close())
		})
		defer g.Close()
		wantAll(t, "x before the replay", x, 0)
		check(t, g.LaunchOn(s))
		wantAll(t, "x", x, 3)
		wantAll(t, "the array made in the capture", made, 0)
		check(t, made.Close())
	})
}

// TestGraphAcrossPrograms: graphs do not span Programs yet
// (docs/multigpu.md): inside a capture, a wait or copy that involves
// another Program of the same backend fails with ErrCapturing, and so
// does the capture; a stream of the other Program cannot join it either.
func TestGraphAcrossPrograms(t *testing.T) {
	cases := []struct {
		call string
		do   func(s, o *Stream, x, y *Ndarray[float32], e *Event) error
	}{
		{"Stream.WaitStream", func(s, o *Stream, _, _ *Ndarray[float32], _ *Event) error { return s.WaitStream(o) }},
		{"Stream.WaitEvent", func(s, o *Stream, _, _ *Ndarray[float32], e *Event) error {
			if err := e.Record(o); err != nil {
				return err
			}
			return s.WaitEvent(e)
		}},
		{"joining from the other Program", func(s, o *Stream, _, _ *Ndarray[float32], _ *Event) error { return o.WaitStream(s) }},
		{"Ndarray.CopyFromOn", func(s, _ *Stream, x, y *Ndarray[float32], _ *Event) error { return x.CopyFromOn(s, y) }},
	}
	forEachArch(t, func(t *testing.T, p *Program) {
		needs(t, p, needPeers)
		q := initProgram(t, WithArch(p.Arch()))
		defer q.Close()
		k := newGraphKernels(t, p)
		x := newNdarray[float32](t, p, 8)
		y := newNdarray[float32](t, q, 8)
		e := newEvent(t, q)
		for _, tc := range cases {
			t.Run(tc.call, func(t *testing.T) {
				s := newStream(t, p)
				o := newStream(t, q)
				defer s.Close()
				defer o.Close()
				var callErr error
				_, err := s.Capture(func() error {
					if err := k.fill.LaunchOn(s, x, float32(1)); err != nil {
						return err
					}
					callErr = tc.do(s, o, x, y, e)
					return nil
				})
				wantErr(t, callErr, ErrCapturing)
				wantErr(t, err, ErrCapturing)
				check(t, k.fill.LaunchOn(s, x, float32(2)))
				check(t, s.Synchronize())
				check(t, o.Synchronize())
				wantAll(t, "x", x, 2)
			})
		}
	})
}
