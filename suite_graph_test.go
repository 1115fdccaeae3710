package qd

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/suitekernels"
	"github.com/quadrants-go/qd/internal/trace"
)

// Graphs: replay equals direct execution, on every backend.

// graphKernels are the kernels of the graph tests, built on p.
type graphKernels struct {
	fill, axpb, copy, add *Kernel
}

func newGraphKernels(t *testing.T, p *Program) graphKernels {
	t.Helper()
	return graphKernels{
		fill: build(t, p, suitekernels.Fill(ir.F32)),
		axpb: build(t, p, suitekernels.Axpb()),
		copy: build(t, p, suitekernels.Copy()),
		add:  build(t, p, suitekernels.Add()),
	}
}

func wantAll(t *testing.T, what string, a *Ndarray[float32], want float32) {
	t.Helper()
	allEqual(t, what, toSlice(t, a), want)
}

// TestGraphChain: a chain of dependent kernels, replayed several times on
// the capturing stream, on another stream and on the default stream,
// equals the same launches made directly and plain Go.
func TestGraphChain(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := newGraphKernels(t, p)
		const n, steps = 1000, 20
		x := newNdarray[float32](t, p, n)
		y := newNdarray[float32](t, p, n)
		s := newStream(t, p)
		s2 := newStream(t, p)
		body := func(a *Ndarray[float32], on *Stream) error {
			for i := range steps {
				if err := k.axpb.LaunchOn(on, a, float32(1+i%2), float32(1)); err != nil {
					return err
				}
			}
			return nil
		}
		g := captureGraph(t, s, func() error { return body(x, s) })
		defer g.Close()
		wantAll(t, "x after the capture (nothing ran)", x, 0)
		ref := float32(0) // plain Go
		for _, on := range []*Stream{s, s2, p.DefaultStream()} {
			check(t, g.LaunchOn(on))
			check(t, body(y, on))
			for i := range steps {
				ref = ref*float32(1+i%2) + 1
			}
			check(t, on.Synchronize())
			wantAll(t, "x (replayed)", x, ref)
			wantAll(t, "y (launched)", y, ref)
		}
	})
}

// TestGraphDiamond: work forked from s onto two streams by an event and
// joined back by two, replayed: each replay reads x on both branches
// before s increments it.
func TestGraphDiamond(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := newGraphKernels(t, p)
		const n = 512
		arr := func() *Ndarray[float32] { return newNdarray[float32](t, p, n) }
		x, y, z, w := arr(), arr(), arr(), arr()
		s, s1, s2 := newStream(t, p), newStream(t, p), newStream(t, p)
		e0, e1, e2 := newEvent(t, p), newEvent(t, p), newEvent(t, p)
		check(t, x.CopyFromHost(slicesOf(n, float32(1))))
		g := captureGraph(t, s, func() error {
			for _, err := range []error{
				e0.Record(s), s1.WaitEvent(e0), s2.WaitEvent(e0),
				k.copy.LaunchOn(s1, x, y), k.axpb.LaunchOn(s1, y, float32(2), float32(0)), e1.Record(s1),
				k.copy.LaunchOn(s2, x, z), k.axpb.LaunchOn(s2, z, float32(3), float32(0)), e2.Record(s2),
				s.WaitEvent(e1), s.WaitEvent(e2),
				k.add.LaunchOn(s, y, z, w), k.axpb.LaunchOn(s, x, float32(1), float32(1)),
			} {
				if err != nil {
					return err
				}
			}
			return nil
		})
		defer g.Close()
		for r := 1; r <= 4; r++ {
			check(t, g.LaunchOn(s))
			wantAll(t, "w", w, float32(5*r))
			wantAll(t, "x", x, float32(r+1))
		}
		// The branches' streams left the capture: they run their own work.
		check(t, k.fill.LaunchOn(s1, y, float32(-1)))
		check(t, s1.Synchronize())
		wantAll(t, "y", y, -1)
	})
}

func slicesOf[T any](n int, v T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestGraphStreamParallelOverlap: a 4-group stream-parallel kernel whose
// groups meet in a rendezvous, captured with the fills that reset its
// flags: every replay's groups run at once.
func TestGraphStreamParallelOverlap(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		needs(t, p, needConcurrentStreams)
		const G = 4
		k := build(t, p, suitekernels.RendezvousGroups(G))
		flags := newNdarray[int32](t, p, G)
		seen := newNdarray[int32](t, p, G)
		s := newStream(t, p)
		g := captureGraph(t, s, func() error {
			if err := flags.FillOn(s, 0); err != nil {
				return err
			}
			if err := seen.FillOn(s, -1); err != nil {
				return err
			}
			return k.LaunchOn(s, flags, seen, spinBound(p))
		})
		defer g.Close()
		if out := p.pool.Out(); out != 0 {
			t.Fatalf("%d pooled streams still out after the capture", out)
		}
		for range 3 {
			check(t, g.LaunchOn(s))
			allEqual(t, "seen", toSlice(t, seen), int32(G))
		}
	})
}

// TestGraphCopiesAndFills: copies from and to a HostArray, a device copy
// and a fill, replayed: each replay reads the host array as it is then.
func TestGraphCopiesAndFills(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := newGraphKernels(t, p)
		const n = 300
		in := newHostArray[float32](t, p, n)
		out := newHostArray[float32](t, p, n)
		x := newNdarray[float32](t, p, n)
		y := newNdarray[float32](t, p, n)
		z := newNdarray[float32](t, p, n)
		s := newStream(t, p)
		g := captureGraph(t, s, func() error {
			for _, err := range []error{
				x.CopyFromHostOn(s, in), k.axpb.LaunchOn(s, x, float32(2), float32(1)),
				y.CopyFromOn(s, x), z.FillOn(s, 7), y.CopyToHostOn(s, out),
			} {
				if err != nil {
					return err
				}
			}
			return nil
		})
		defer g.Close()
		for r := range 3 {
			data := hostData(t, in)
			for i := range data {
				data[i] = float32(i + r)
			}
			check(t, g.LaunchOn(s))
			got := hostData(t, out) // waits for the replay's copy
			for i, v := range got {
				if want := float32(2*(i+r) + 1); v != want {
					t.Fatalf("replay %d: out[%d] = %v, want %v", r, i, v, want)
				}
			}
			wantAll(t, "z", z, 7)
		}
	})
}

// TestGraphManyReplays: 1000 replays on one stream while other goroutines
// launch directly on other streams and read; the race detector watches.
func TestGraphManyReplays(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := newGraphKernels(t, p)
		const n = 256
		x := newNdarray[float32](t, p, n)
		s := newStream(t, p)
		g := captureGraph(t, s, func() error { return k.axpb.LaunchOn(s, x, float32(1), float32(1)) })
		defer g.Close()
		var wg sync.WaitGroup
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				y := newNdarray[float32](t, p, n)
				o := newStream(t, p)
				defer o.Close()
				for i := range 200 {
					if err := k.fill.LaunchOn(o, y, float32(i+w)); err != nil {
						t.Error(err)
						return
					}
					if i%50 == 49 {
						got, err := y.ToSlice()
						if err != nil || got[0] != float32(i+w) {
							t.Errorf("direct launches: y[0] = %v (%v), want %v", got[0], err, i+w)
							return
						}
					}
				}
			}()
		}
		for r := 1; r <= 1000; r++ {
			check(t, g.LaunchOn(s))
			if r%250 == 0 {
				wantAll(t, "x", x, float32(r))
			}
		}
		wg.Wait()
	})
}

// TestGraphOutlivesClosedArray: closing an array a graph uses waits for
// the replay in flight; the graph's next LaunchOn fails naming it.
func TestGraphOutlivesClosedArray(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		slow := build(t, p, suitekernels.SlowWrite())
		x := newNdarray[float32](t, p, 8)
		state := newNdarray[int64](t, p, 1)
		s := newStream(t, p)
		g := captureGraph(t, s, func() error { return slow.LaunchOn(s, x, float32(1), state, int64(300000)) })
		defer g.Close()
		check(t, g.LaunchOn(s))
		check(t, x.Close()) // waits for the replay
		if done := must(s.Query())(t); !done {
			t.Fatal("x.Close returned while the replay that uses x was still running")
		}
		err := g.LaunchOn(s)
		wantErr(t, err, ErrClosed)
		if !strings.Contains(err.Error(), "x to kernel slow_write") {
			t.Errorf("error %q does not name the array", err)
		}
		// The graph still holds state and closes cleanly.
		check(t, s.Synchronize())
	})
}

// TestGraphUpdate: new scalars and arrays, and a capture of another
// shape, are replayed after Update; a failed capture leaves the graph as
// it was. (Which Update is in place: TestGraphUpdateInPlace here for the
// CPU, TestGPUGraphUpdateInPlace for the GPU runtime.)
func TestGraphUpdate(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := newGraphKernels(t, p)
		const n = 64
		x := newNdarray[float32](t, p, n)
		y := newNdarray[float32](t, p, n)
		s := newStream(t, p)
		g := captureGraph(t, s, func() error { return k.axpb.LaunchOn(s, x, float32(2), float32(1)) })
		defer g.Close()
		check(t, g.LaunchOn(s))
		wantAll(t, "x", x, 1)

		check(t, k.fill.LaunchOn(s, y, float32(1)))
		check(t, g.Update(func() error { return k.axpb.LaunchOn(s, y, float32(3), float32(0.5)) }))
		check(t, g.LaunchOn(s))
		wantAll(t, "y", y, 3.5)
		wantAll(t, "x", x, 1)

		check(t, g.Update(func() error {
			if err := k.axpb.LaunchOn(s, x, float32(1), float32(1)); err != nil {
				return err
			}
			return k.add.LaunchOn(s, x, x, y)
		}))
		check(t, g.LaunchOn(s))
		wantAll(t, "y", y, 4)

		boom := errors.New("boom")
		if err := g.Update(func() error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("Update with a failing function: %v", err)
		}
		check(t, g.LaunchOn(s))
		wantAll(t, "y", y, 6) // still the second capture: x = 3, y = 6
		check(t, g.Close())
		wantErr(t, g.Update(func() error { return nil }), ErrClosed)
	})
}

// TestGraphStreamOrderedMemory: an array allocated and freed inside the
// capture is allocated, zeroed and freed again by every replay; one left
// open fails the capture; one used outside the capture is refused.
func TestGraphStreamOrderedMemory(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := newGraphKernels(t, p)
		const n = 128
		x := newNdarray[float32](t, p, n)
		s := newStream(t, p)
		o := newStream(t, p)
		g := captureGraph(t, s, func() error {
			tmp, err := NewNdarrayOn[float32](s, n)
			if err != nil {
				return err
			}
			if err := k.axpb.LaunchOn(s, tmp, float32(1), float32(1)); err != nil { // 1 if zeroed
				return err
			}
			if err := k.copy.LaunchOn(s, tmp, x); err != nil {
				return err
			}
			return tmp.Close()
		})
		defer g.Close()
		for range 3 {
			check(t, g.LaunchOn(s))
			wantAll(t, "x", x, 1)
		}

		var kept *Ndarray[float32]
		_, err := s.Capture(func() error {
			var err error
			kept, err = NewNdarrayOn[float32](s, 4, 2)
			return err
		})
		wantErr(t, err, ErrInvalidArgument)
		if !strings.Contains(err.Error(), "NewNdarrayOn") || !strings.Contains(err.Error(), "[4 2]") {
			t.Errorf("error %q does not name the array left open", err)
		}
		wantErr(t, kept.FillOn(s, 1), ErrClosed)

		_, err = s.Capture(func() error {
			tmp, err := NewNdarrayOn[float32](s, n)
			if err != nil {
				return err
			}
			defer tmp.Close()
			return k.fill.LaunchOn(o, tmp, float32(1))
		})
		wantErr(t, err, ErrCapturing)
		check(t, o.Synchronize())
		check(t, s.Synchronize())

		// Graph memory exists only while the graph runs: host copies of it
		// are refused, and the capture goes on.
		g = captureGraph(t, s, func() error {
			tmp, err := NewNdarrayOn[float32](s, n)
			if err != nil {
				return err
			}
			_, err = tmp.ToSlice()
			wantErr(t, err, ErrCapturing)
			wantErr(t, tmp.CopyFromHost(make([]float32, n)), ErrCapturing)
			wantErr(t, tmp.CopyToHost(make([]float32, n)), ErrCapturing)
			if err := k.fill.LaunchOn(s, tmp, float32(3)); err != nil {
				return err
			}
			if err := k.copy.LaunchOn(s, tmp, x); err != nil {
				return err
			}
			return tmp.Close()
		})
		defer g.Close()
		check(t, g.LaunchOn(s))
		wantAll(t, "x", x, 3)
	})
}

// TestGraphUnjoinedStream: a stream forked into the capture and not joined
// back fails the capture, named; it runs its own work afterwards.
func TestGraphUnjoinedStream(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := newGraphKernels(t, p)
		y := newNdarray[float32](t, p, 16)
		s := newStream(t, p)
		o := newStream(t, p)
		e := newEvent(t, p)
		_, err := s.Capture(func() error {
			if err := e.Record(s); err != nil {
				return err
			}
			if err := o.WaitEvent(e); err != nil {
				return err
			}
			return k.fill.LaunchOn(o, y, float32(2))
		})
		wantErr(t, err, ErrInvalidArgument)
		if name := fmt.Sprintf("stream %#x", o.Handle()); !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
		wantAll(t, "y (the captured launch never ran)", y, 0)
		check(t, k.fill.LaunchOn(o, y, float32(3)))
		check(t, o.Synchronize())
		wantAll(t, "y", y, 3)
	})
}

// TestGraphConcurrentCaptures: goroutines capture on their own streams at
// once, with stream-parallel kernels (which borrow pooled streams), and
// replay.
func TestGraphConcurrentCaptures(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := newGraphKernels(t, p)
		groups := build(t, p, suitekernels.ThreeGroups())
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := p.NewStream()
				if err != nil {
					t.Error(err)
					return
				}
				defer s.Close()
				x := newNdarray[float32](t, p, 3)
				y := newNdarray[float32](t, p, 64)
				for r := range 10 {
					g, err := s.Capture(func() error {
						if err := groups.LaunchOn(s, x); err != nil {
							return err
						}
						return k.fill.LaunchOn(s, y, float32(w*100+r))
					})
					if err != nil {
						t.Error(err)
						return
					}
					err = g.LaunchOn(s)
					got, err2 := x.ToSlice()
					gy, err3 := y.ToSlice()
					g.Close()
					if err := errors.Join(err, err2, err3); err != nil {
						t.Error(err)
						return
					}
					if got[0] != 1 || got[1] != 2 || got[2] != 3 || gy[63] != float32(w*100+r) {
						t.Errorf("worker %d round %d: x = %v, y[63] = %v", w, r, got, gy[63])
						return
					}
				}
			}()
		}
		wg.Wait()
		if out := p.pool.Out(); out != 0 {
			t.Fatalf("%d pooled streams still out", out)
		}
	})
}

// TestGraphProgramCloseDuringCapture: Close in another goroutine ends a
// capture in progress; the capture fails with ErrClosed.
func TestGraphProgramCloseDuringCapture(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := newGraphKernels(t, p)
		x := newNdarray[float32](t, p, 8)
		s := newStream(t, p)
		started, closed := make(chan struct{}), make(chan struct{})
		res := make(chan error, 1)
		go func() {
			_, err := s.Capture(func() error {
				if err := k.fill.LaunchOn(s, x, float32(1)); err != nil {
					return err
				}
				close(started)
				<-closed
				return k.fill.LaunchOn(s, x, float32(2))
			})
			res <- err
		}()
		<-started
		check(t, p.Close())
		close(closed)
		wantErr(t, <-res, ErrClosed)
	})
}

// TestGraphProgramCloseDuringUnjoinedCapture: the driver refuses to end a
// capture whose fork was not joined back; Close, which discards the
// capture, succeeds all the same (stress defect 102).
func TestGraphProgramCloseDuringUnjoinedCapture(t *testing.T) {
	onCPUAndFake(t, func(t *testing.T, p *Program) {
		k := newGraphKernels(t, p)
		x := newNdarray[float32](t, p, 8)
		s, o := newStream(t, p), newStream(t, p)
		started, closed := make(chan struct{}), make(chan struct{})
		res := make(chan error, 1)
		go func() {
			_, err := s.Capture(func() error {
				if err := o.WaitStream(s); err != nil { // o joins the capture
					return err
				}
				if err := k.fill.LaunchOn(o, x, float32(1)); err != nil {
					return err
				}
				close(started)
				<-closed
				return nil
			})
			res <- err
		}()
		<-started
		check(t, p.Close())
		close(closed)
		wantErr(t, <-res, ErrClosed)
	})
}

// TestGraphPanicInCapture: a panic in the capture function ends the
// capture and goes on; the stream works afterwards.
func TestGraphPanicInCapture(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := newGraphKernels(t, p)
		x := newNdarray[float32](t, p, 8)
		s := newStream(t, p)
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Errorf("recovered %v, want the capture function's panic", r)
				}
			}()
			s.Capture(func() error {
				k.fill.LaunchOn(s, x, float32(1))
				panic("boom")
			})
		}()
		check(t, s.Synchronize())
		wantAll(t, "x", x, 0)
		g := captureGraph(t, s, func() error { return k.fill.LaunchOn(s, x, float32(2)) })
		check(t, g.LaunchOn(s))
		wantAll(t, "x", x, 2)
		check(t, g.Close())
		check(t, g.Close()) // idempotent
		wantErr(t, g.LaunchOn(s), ErrClosed)
	})
}

// TestGraphMisc: an empty capture, a capture on the default stream with
// Launch, a host read of an array the capture does not use while the
// stream that last used it captures, a graph of another Program, and a
// leaked graph released by its cleanup.
func TestGraphMisc(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := newGraphKernels(t, p)
		x := newNdarray[float32](t, p, 8)
		y := newNdarray[float32](t, p, 8)
		s := newStream(t, p)

		empty := captureGraph(t, s, func() error { return nil })
		check(t, empty.LaunchOn(s))
		check(t, s.Synchronize())
		check(t, empty.Close())

		def := p.DefaultStream()
		g := captureGraph(t, def, func() error { return k.fill.Launch(x, float32(9)) })
		check(t, g.LaunchOn(s))
		wantAll(t, "x", x, 9)

		check(t, k.fill.LaunchOn(s, y, float32(4)))
		g2 := captureGraph(t, s, func() error {
			if err := k.fill.LaunchOn(s, x, float32(5)); err != nil {
				return err
			}
			got, err := y.ToSlice() // y's last use is on s, before the capture
			if err == nil && got[0] != 4 {
				err = fmt.Errorf("y read during the capture: %v, want 4", got[0])
			}
			return err
		})
		check(t, g2.Close())

		q := initProgram(t, WithArch(p.Arch()))
		defer q.Close()
		wantErr(t, g.LaunchOn(q.DefaultStream()), ErrForeign)
		check(t, g.Close())

		count := func() int {
			p.mu.Lock()
			defer p.mu.Unlock()
			return len(p.graphs)
		}
		before := count()
		func() {
			for range 5 {
				captureGraph(t, s, func() error { return k.fill.LaunchOn(s, x, float32(1)) })
			}
		}()
		deadline := time.Now().Add(10 * time.Second)
		for count() > before && time.Now().Before(deadline) {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
		if got := count(); got != before {
			t.Fatalf("%d graphs still registered after GC, want %d", got, before)
		}
	})
}

// TestGraphTrace: a replay is one span of the trace on its stream.
func TestGraphTrace(t *testing.T) {
	forEachArchWith(t, []InitOption{WithTrace()}, func(t *testing.T, p *Program) {
		needs(t, p, needTrace)
		k := newGraphKernels(t, p)
		x := newNdarray[float32](t, p, 8)
		s := newStream(t, p)
		g := captureGraph(t, s, func() error { return k.fill.LaunchOn(s, x, float32(1)) })
		defer g.Close()
		check(t, g.LaunchOn(s))
		var buf bytes.Buffer
		check(t, p.StopTrace(&buf))
		if !strings.Contains(buf.String(), `"name":"graph: fill"`) {
			t.Errorf("the trace has no span of the graph's replay named after its kernel: %.400s", buf.String())
		}
	})
}

// TestGraphTraceTasks: a graph captured while a trace is on traces each
// task of each replay, as a launch would: a chain of two kernels and a
// stream-parallel kernel of 4 groups, replayed 3 times, give every task
// of every replay a span on its stream's lane (the groups on pooled
// streams), each replay's launches numbered afresh, besides one "graph"
// span per replay. A replay in a later trace names its lanes there; a
// graph captured with no trace on is one span per replay.
func TestGraphTraceTasks(t *testing.T) {
	forEachArchWith(t, []InitOption{WithTrace()}, func(t *testing.T, p *Program) {
		needs(t, p, needTrace)
		k := newGraphKernels(t, p)
		groups := build(t, p, suitekernels.Groups(4))
		x := newNdarray[float32](t, p, 8)
		gx := newNdarray[float32](t, p, 4)
		s := newStream(t, p)
		g := captureGraph(t, s, func() error {
			return errors.Join(k.fill.LaunchOn(s, x, float32(2)), k.axpb.LaunchOn(s, x, float32(3), float32(1)),
				groups.LaunchOn(s, gx))
		})
		defer g.Close()
		const replays = 3
		for range replays {
			check(t, g.LaunchOn(s))
		}
		var buf bytes.Buffer
		check(t, p.StopTrace(&buf))
		wantAll(t, "x", x, 7)
		tr := must(trace.ReadChrome(&buf))(t)
		count := map[string]int{}
		launches := map[string]map[uint64]bool{}
		lanes := map[string]map[string]bool{}
		for _, l := range tr.Lanes {
			for _, sp := range l.Spans {
				if sp.End < sp.Start {
					t.Errorf("span %s on %s ends before it starts", sp.Kernel, l.Name)
				}
				count[sp.Kernel]++
				if launches[sp.Kernel] == nil {
					launches[sp.Kernel], lanes[sp.Kernel] = map[uint64]bool{}, map[string]bool{}
				}
				launches[sp.Kernel][sp.Launch] = true
				lanes[sp.Kernel][l.Name] = true
			}
		}
		if count["fill"] != replays || count["axpb"] != replays || count["groups4"] != 4*replays {
			t.Errorf("spans per kernel %v, want fill and axpb %d each, groups4 %d", count, replays, 4*replays)
		}
		for _, name := range []string{"fill", "axpb", "groups4"} {
			if len(launches[name]) != replays {
				t.Errorf("%s's spans carry launches %v, want %d distinct ones", name, launches[name], replays)
			}
		}
		if n := len(lanes["groups4"]); n != 4 {
			t.Errorf("groups4's spans are on lanes %v, want 4 (its stream and 3 pooled ones)", lanes["groups4"])
		}
		if n := count["graph: fill, axpb, groups4"]; n != replays {
			t.Errorf("%d graph spans, want %d: %v", n, replays, count)
		}

		// A later trace names the lanes afresh.
		check(t, p.StartTrace())
		check(t, g.LaunchOn(s))
		buf.Reset()
		check(t, p.StopTrace(&buf))
		tr = must(trace.ReadChrome(&buf))(t)
		n := 0
		for _, l := range tr.Lanes {
			if l.Name == "" {
				t.Errorf("an unnamed lane in the second trace: %+v", l)
			}
			n += len(l.Spans)
		}
		if n != 1+2+4 {
			t.Errorf("%d spans in the second trace, want 7 (the graph's and its 6 tasks')", n)
		}

		// Updated while a trace is on: the new capture's tasks are traced
		// (on a GPU the exec is rebuilt).
		check(t, p.StartTrace())
		check(t, g.Update(func() error {
			return errors.Join(k.fill.LaunchOn(s, x, float32(5)), k.axpb.LaunchOn(s, x, float32(1), float32(1)))
		}))
		check(t, g.LaunchOn(s))
		wantAll(t, "x after the update", x, 6)
		if n := tracedSpans(t, p); n != 3 {
			t.Errorf("%d spans of a replay of the updated graph, want 3 (the graph's, fill's and axpb's)", n)
		}

		// Captured with no trace on: one span per replay.
		plain := captureGraph(t, s, func() error { return k.fill.LaunchOn(s, x, float32(1)) })
		defer plain.Close()
		check(t, p.StartTrace())
		check(t, plain.LaunchOn(s))
		if n := tracedSpans(t, p); n != 1 {
			t.Errorf("%d spans of a replay of a graph captured untraced, want 1", n)
		}
	})
}

// tracedSpans stops p's trace and counts its spans.
func tracedSpans(t *testing.T, p *Program) int {
	t.Helper()
	var buf bytes.Buffer
	check(t, p.StopTrace(&buf))
	n := 0
	for _, l := range must(trace.ReadChrome(&buf))(t).Lanes {
		n += len(l.Spans)
	}
	return n
}

// TestGraphReplayErrors: an index out of range in a replay (the CPU checks
// every index) is reported by the replay's stream, at every replay.
func TestGraphReplayErrors(t *testing.T) {
	p := initProgram(t, WithArch(CPU))
	defer p.Close()
	k := build(t, p, suitekernels.BadGroup())
	arr := newNdarray[float32](t, p, 4)
	s := newStream(t, p)
	g := captureGraph(t, s, func() error { return k.LaunchOn(s, arr) })
	defer g.Close()
	for range 2 {
		check(t, g.LaunchOn(s))
		if err := s.Synchronize(); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Fatalf("Synchronize after a replay = %v, want the group's index error", err)
		}
	}
	check(t, s.Synchronize())
}
