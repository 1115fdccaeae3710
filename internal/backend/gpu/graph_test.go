package gpu_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/gpu/fakedriver"
	"github.com/quadrants-go/qd/internal/backend/gpu/gputest"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/trace"
)

// Graph capture on the driver (graph.go), per driver with a device.

// captureGraph captures what work enqueues on s; the graph is closed when
// the test ends.
func captureGraph(t testing.TB, d *gpu.Device, s backend.Stream, work func() error) backend.Graph {
	t.Helper()
	if err := d.BeginCapture(s); err != nil {
		t.Fatalf("BeginCapture: %v", err)
	}
	werr := work()
	g, err := d.EndCapture(s)
	if werr != nil || err != nil {
		t.Fatalf("capture: work %v, EndCapture %v", werr, err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// captureOn captures what work enqueues on s, instantiated.
func captureOn(t testing.TB, d *gpu.Device, s backend.Stream, work func() error) backend.GraphExec {
	t.Helper()
	x, err := captureGraph(t, d, s, work).Instantiate()
	if err != nil {
		t.Fatalf("Instantiate: %v", err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func mustEvent(t testing.TB, d *gpu.Device) backend.Event {
	t.Helper()
	e, err := d.NewEvent(false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestGraphChainReplay: a zero fill and two dependent kernels, replayed on
// the capturing stream and on another one.
func TestGraphChainReplay(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		s, s2 := mustStream(t, d, 0), mustStream(t, d, 0)
		const n = 1000
		a, b := mustAlloc(t, d, 4*n), mustAlloc(t, d, 4*n)
		add1 := build(t, d, add1Kernel())
		writeU32(t, a, s, make([]uint32, n))
		x := captureOn(t, d, s, func() error {
			if err := b.(backend.Zeroer).Zero(s); err != nil {
				return err
			}
			if err := add1.launch(s, &backend.Args{Arrays: []backend.ArrayArg{arr(a, n), arr(b, n)}}); err != nil {
				return err
			}
			return add1.launch(s, &backend.Args{Arrays: []backend.ArrayArg{arr(b, n), arr(a, n)}})
		})
		if got := readU32(t, a, s, n); got[0] != 0 {
			t.Fatalf("the capture ran: a[0] = %d", got[0])
		}
		for r := 1; r <= 5; r++ {
			on := s
			if r%2 == 0 {
				on = s2
			}
			if err := x.Launch(on); err != nil {
				t.Fatal(err)
			}
			if got := readU32(t, a, on, n); computes(t, d) && (got[0] != uint32(2*r) || got[n-1] != uint32(2*r)) {
				t.Fatalf("replay %d: a = %d..%d, want %d", r, got[0], got[n-1], 2*r)
			}
		}
	})
}

// TestGraphForkJoin: a stream joins by waiting for an event recorded in
// the capture and is joined back; one not joined back fails EndCapture,
// and every stream leaves capture mode either way.
func TestGraphForkJoin(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		s, s2 := mustStream(t, d, 0), mustStream(t, d, 0)
		e0, e1 := mustEvent(t, d), mustEvent(t, d)
		const n = 256
		a, b := mustAlloc(t, d, 4*n), mustAlloc(t, d, 4*n)
		fill, add1 := build(t, d, fillKernel()), build(t, d, add1Kernel())
		x := captureOn(t, d, s, func() error {
			for _, f := range []func() error{
				func() error {
					return fill.launch(s, &backend.Args{Scalars: []uint64{0, 41}, Arrays: []backend.ArrayArg{arr(a, n)}})
				},
				func() error { return e0.Record(s) },
				func() error { return s2.WaitEvent(e0) },
				func() error { return add1.launch(s2, &backend.Args{Arrays: []backend.ArrayArg{arr(a, n), arr(b, n)}}) },
				func() error { return e1.Record(s2) },
				func() error { return s.WaitEvent(e1) },
			} {
				if err := f(); err != nil {
					return err
				}
			}
			return nil
		})
		if err := x.Launch(s); err != nil {
			t.Fatal(err)
		}
		if got := readU32(t, b, s, n); computes(t, d) && got[0] != 42 {
			t.Fatalf("b[0] = %d after the replay, want 42", got[0])
		}
		// Not joined back.
		if err := d.BeginCapture(s); err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(e0.Record(s), s2.WaitEvent(e0),
			add1.launch(s2, &backend.Args{Arrays: []backend.ArrayArg{arr(a, n), arr(b, n)}})); err != nil {
			t.Fatal(err)
		}
		if g, err := d.EndCapture(s); err == nil {
			g.Close()
			t.Fatal("EndCapture with a stream not joined back succeeded")
		}
		for _, st := range []backend.Stream{s, s2} {
			if err := st.Synchronize(); err != nil {
				t.Fatalf("a stream after the failed capture: %v", err)
			}
		}
	})
}

// TestGraphRefusals: host waits for a capturing stream or an event
// recorded in the capture, and waits across the capture's boundary, fail
// without breaking the capture.
func TestGraphRefusals(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		s, o := mustStream(t, d, 0), mustStream(t, d, 0)
		in, out := mustEvent(t, d), mustEvent(t, d)
		const n = 64
		a := mustAlloc(t, d, 4*n)
		fill := build(t, d, fillKernel())
		if err := out.Record(o); err != nil {
			t.Fatal(err)
		}
		x := captureOn(t, d, s, func() error {
			if err := fill.launch(s, &backend.Args{Scalars: []uint64{0, 9}, Arrays: []backend.ArrayArg{arr(a, n)}}); err != nil {
				return err
			}
			if err := in.Record(s); err != nil {
				return err
			}
			_, qerr := s.Query()
			_, eqerr := in.Query()
			for what, err := range map[string]error{
				"Synchronize": s.Synchronize(), "Query": qerr, "event Synchronize": in.Synchronize(),
				"event Query": eqerr, "wait outside": s.WaitEvent(out), "Close": s.Close(),
			} {
				if err == nil {
					t.Errorf("%s of a capturing stream succeeded", what)
				}
			}
			return nil
		})
		if err := x.Launch(o); err != nil {
			t.Fatal(err)
		}
		if got := readU32(t, a, o, n); computes(t, d) && got[0] != 9 {
			t.Fatalf("a[0] = %d, want 9", got[0])
		}
		if err := in.Synchronize(); err == nil {
			t.Error("Synchronize of an event last recorded in an ended capture succeeded")
		}
	})
}

// TestGraphStreamOrderedMemory: an allocation and its free in a capture
// become memory of the graph (never a cached block), and a launch with
// temporaries takes them from the graph's memory too.
func TestGraphStreamOrderedMemory(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		if !d.Props().MemPools {
			t.Skip("the device has no memory pools: a graph cannot allocate memory there")
		}
		s := mustStream(t, d, 0)
		const n = 512
		// A block freed on s sits in s's cache: the capture must not take it.
		pre, err := d.AllocOn(s, 4*n)
		if err != nil {
			t.Fatal(err)
		}
		if err := pre.FreeOn(s); err != nil {
			t.Fatal(err)
		}
		out, res := mustAlloc(t, d, 4*n), mustAlloc(t, d, 8)
		fill, add1, temps := build(t, d, fillKernel()), build(t, d, add1Kernel()), build(t, d, tempsKernel())
		x := captureOn(t, d, s, func() error {
			tmp, err := d.AllocOn(s, 4*n)
			if err != nil {
				return err
			}
			return errors.Join(
				fill.launch(s, &backend.Args{Scalars: []uint64{0, 6}, Arrays: []backend.ArrayArg{arr(tmp, n)}}),
				add1.launch(s, &backend.Args{Arrays: []backend.ArrayArg{arr(tmp, n), arr(out, n)}}),
				temps.launch(s, &backend.Args{Scalars: []uint64{0, 77}, Arrays: []backend.ArrayArg{arr(res, 1)}}),
				tmp.FreeOn(s))
		})
		for range 3 {
			writeU32(t, out, s, make([]uint32, n))
			if err := x.Launch(s); err != nil {
				t.Fatal(err)
			}
			if !computes(t, d) {
				continue
			}
			if got := readU32(t, out, s, n); got[0] != 7 || got[n-1] != 7 {
				t.Fatalf("out = %d..%d, want 7", got[0], got[n-1])
			}
			if got := readU32(t, res, s, 2); got[0] != 77 {
				t.Fatalf("temporaries through the graph: %d, want 77", got[0])
			}
		}
	})
}

// TestGraphUpdateInPlace: a capture of the same kernel with other
// arguments updates the exec; another shape does not.
func TestGraphUpdateInPlace(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		s := mustStream(t, d, 0)
		const n = 128
		a, b := mustAlloc(t, d, 4*n), mustAlloc(t, d, 4*n)
		fill := build(t, d, fillKernel())
		x := captureOn(t, d, s, func() error {
			return fill.launch(s, &backend.Args{Scalars: []uint64{0, 1}, Arrays: []backend.ArrayArg{arr(a, n)}})
		})
		same := captureGraph(t, d, s, func() error {
			return fill.launch(s, &backend.Args{Scalars: []uint64{0, 5}, Arrays: []backend.ArrayArg{arr(b, n)}})
		})
		if ok, err := x.Update(same); !ok || err != nil {
			t.Fatalf("Update with the same shape: %v, %v; want an update in place", ok, err)
		}
		if err := x.Launch(s); err != nil {
			t.Fatal(err)
		}
		if got := readU32(t, b, s, n); computes(t, d) && got[0] != 5 {
			t.Fatalf("b[0] = %d after the updated replay, want 5", got[0])
		}
		other := captureGraph(t, d, s, func() error {
			args := &backend.Args{Scalars: []uint64{0, 3}, Arrays: []backend.ArrayArg{arr(a, n)}}
			return errors.Join(fill.launch(s, args), fill.launch(s, args))
		})
		if ok, err := x.Update(other); ok || err != nil {
			t.Fatalf("Update with another shape: %v, %v; want false, nil", ok, err)
		}
	})
}

// TestGraphDebugRefused: a kernel built with Debug carries a violation
// record the host reads: it cannot be captured.
func TestGraphDebugRefused(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		s := mustStream(t, d, 0)
		plan, err := lower.Lower(fillKernel())
		if err != nil {
			t.Fatal(err)
		}
		m, err := d.Compile(plan, backend.CompileOptions{Debug: true})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		a := mustAlloc(t, d, 64)
		if err := d.BeginCapture(s); err != nil {
			t.Fatal(err)
		}
		_, berr := m.Begin(s, &backend.Args{Scalars: []uint64{0, 1}, Arrays: []backend.ArrayArg{arr(a, 16)}})
		g, err := d.EndCapture(s)
		if err != nil {
			t.Fatal(err)
		}
		g.Close()
		if berr == nil || !strings.Contains(berr.Error(), "WithDebug") || !errors.Is(berr, backend.ErrUnsupported) {
			t.Fatalf("Begin of a Debug kernel in a capture: %v", berr)
		}
	})
}

// TestGraphRawLaunchCost: the bench reference runs.
func TestGraphRawLaunchCost(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		s := mustStream(t, d, 0)
		a := mustAlloc(t, d, 64)
		fill := build(t, d, fillKernel())
		x := captureOn(t, d, s, func() error {
			return fill.launch(s, &backend.Args{Scalars: []uint64{0, 1}, Arrays: []backend.ArrayArg{arr(a, 16)}})
		})
		cost, err := x.(backend.RawGraphLauncher).RawLaunchCost(s, 20, 8)
		if err != nil || cost <= 0 {
			t.Fatalf("RawLaunchCost: %v, %v", cost, err)
		}
	})
}

// BenchmarkGraphLaunch100: the host cost of one replay of 100 dependent
// small kernels (ns/replay), and of the 100 launches themselves.
func BenchmarkGraphLaunch100(b *testing.B) {
	forEachDriverB(b, func(b *testing.B, d *gpu.Device) {
		s := mustStream(b, d, 0)
		const n = 1024
		a, c := mustAlloc(b, d, 4*n), mustAlloc(b, d, 4*n)
		add1 := build(b, d, add1Kernel())
		chain := func() error {
			for i := range 100 {
				src, dst := a, c
				if i%2 == 1 {
					src, dst = c, a
				}
				if err := add1.launch(s, &backend.Args{Arrays: []backend.ArrayArg{arr(src, n), arr(dst, n)}}); err != nil {
					return err
				}
			}
			return nil
		}
		x := captureOn(b, d, s, chain)
		b.Run("replay", func(b *testing.B) {
			cost, err := x.(backend.RawGraphLauncher).RawLaunchCost(s, b.N, syncEvery)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(cost.Nanoseconds()), "ns/replay")
		})
		b.Run("launches", func(b *testing.B) {
			for range b.N {
				if err := chain(); err != nil {
					b.Fatal(err)
				}
				s.Synchronize()
			}
		})
	})
}

// Inside a capture, a launch of an entry that waits for its predecessors
// (the fake's all do, as sm_90's) is a programmatic dependent launch, so
// that a replay starts each kernel while the one before still runs;
// outside a capture it stays a plain launch, which costs the host less.
// The fake checks the configuration and the attribute, and that the entry
// waits.
func TestCapturedLaunchesAreDependent(t *testing.T) {
	tg := fakeTarget(t)
	before := misuseCount(tg)
	d := openFor(t, tg, true)
	t.Cleanup(func() { d.Close() })
	s := mustStream(t, d, 0)
	const n = 1000
	a, b := mustAlloc(t, d, 4*n), mustAlloc(t, d, 4*n)
	add1 := build(t, d, add1Kernel())
	args := &backend.Args{Arrays: []backend.ArrayArg{arr(a, n), arr(b, n)}}
	plain, ex := tg.in.Count("LaunchKernel"), tg.in.Count("LaunchKernelEx")
	if err := add1.launch(s, args); err != nil {
		t.Fatal(err)
	}
	if p, e := tg.in.Count("LaunchKernel")-plain, tg.in.Count("LaunchKernelEx")-ex; p != 1 || e != 0 {
		t.Errorf("a launch outside a capture: %d LaunchKernel, %d LaunchKernelEx; want 1, 0", p, e)
	}
	plain, ex = tg.in.Count("LaunchKernel"), tg.in.Count("LaunchKernelEx")
	x := captureOn(t, d, s, func() error {
		if err := add1.launch(s, args); err != nil {
			return err
		}
		return add1.launch(s, args)
	})
	if p, e := tg.in.Count("LaunchKernel")-plain, tg.in.Count("LaunchKernelEx")-ex; p != 0 || e != 2 {
		t.Errorf("two launches in a capture: %d LaunchKernel, %d LaunchKernelEx; want 0, 2", p, e)
	}
	if err := x.Launch(s); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	for _, m := range tg.misuses()[before:] {
		t.Errorf("misuse of the fake driver: %s", m)
	}

	// Entries that do not wait (GPUs before sm_90) are launched plainly in
	// a capture too.
	fake, err := fakedriver.New()
	if err != nil {
		t.Skip(err)
	}
	fake.SetPlainEntries(true)
	pd := gputest.Open(t, fake)
	ps := mustStream(t, pd, 0)
	pa, pb := mustAlloc(t, pd, 4*n), mustAlloc(t, pd, 4*n)
	padd := build(t, pd, add1Kernel())
	captureOn(t, pd, ps, func() error {
		return padd.launch(ps, &backend.Args{Arrays: []backend.ArrayArg{arr(pa, n), arr(pb, n)}})
	})
	if p, e := fake.Count("LaunchKernel"), fake.Count("LaunchKernelEx"); p != 1 || e != 0 {
		t.Errorf("a launch of a plain entry in a capture: %d LaunchKernel, %d LaunchKernelEx; want 1, 0", p, e)
	}
	if m := fake.Misuses(); len(m) > 0 {
		t.Errorf("misuses of the fake driver: %v", m)
	}
}

// TestGraphTracePoints: trace marks on a capturing stream become trace
// points of the graph; each traced replay records one span per captured
// pair with the replay's own times, replays may overlap, a plain replay
// records nothing, and no replay touches the trace's events once the
// timer is closed.
func TestGraphTracePoints(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		rec := trace.NewRecorder("graph", 0)
		bt, err := d.NewTraceTimer(rec)
		if err != nil {
			t.Fatal(err)
		}
		if ct, ok := bt.(backend.CaptureTracer); !ok || !ct.TracesCaptures() {
			bt.Close()
			t.Skip("the driver cannot trace captures")
		}
		s := mustStream(t, d, 0)
		const n = 1000
		a, b := mustAlloc(t, d, 4*n), mustAlloc(t, d, 4*n)
		add1 := build(t, d, add1Kernel())
		writeU32(t, a, s, make([]uint32, n))
		x := captureOn(t, d, s, func() error {
			for i, ab := range [2][2]backend.Buffer{{a, b}, {b, a}} {
				m, err := bt.Begin(s)
				if err != nil {
					return err
				}
				if err := add1.launch(s, &backend.Args{Arrays: []backend.ArrayArg{arr(ab[0], n), arr(ab[1], n)}}); err != nil {
					return err
				}
				if err := bt.End(s, m, trace.Span{Kernel: "captured", Launch: uint64(i + 1)}); err != nil {
					return err
				}
			}
			return nil
		})
		tx, ok := x.(backend.TracedExec)
		if !ok || tx.TracedSpans() != 2 {
			t.Fatalf("the exec is a %T with spans %v, want a TracedExec of 2", x, ok)
		}
		if len(rec.Spans()) != 0 {
			t.Fatalf("the capture recorded spans: %v", rec.Spans())
		}
		spans := func(r int) []trace.Span {
			return []trace.Span{{Kernel: "first", Launch: uint64(10*r + 1)}, {Kernel: "second", Launch: uint64(10*r + 2)}}
		}
		for r := range 3 {
			if err := tx.LaunchTraced(s, bt, spans(r)); err != nil {
				t.Fatal(err)
			}
		}
		if err := x.Launch(s); err != nil { // untraced: nothing recorded
			t.Fatal(err)
		}
		if err := errors.Join(s.Synchronize(), bt.Flush()); err != nil {
			t.Fatal(err)
		}
		got := rec.Spans()
		if len(got) != 6 {
			t.Fatalf("%d spans, want 6 (2 per traced replay): %+v", len(got), got)
		}
		seen := map[uint64]bool{}
		for _, sp := range got {
			seen[sp.Launch] = true
			if sp.End < sp.Start {
				t.Errorf("span %+v ends before it starts", sp)
			}
		}
		if len(seen) != 6 {
			t.Errorf("launches %v, want 6 distinct", seen)
		}
		if err := bt.Close(); err != nil {
			t.Fatal(err)
		}
		// The trace's events are gone: a replay records the graph's own.
		if err := x.Launch(s); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if runsKernels(d.Driver()) {
			if got := readU32(t, a, s, n); got[0] != 2*5 {
				t.Errorf("a[0] = %d after 5 replays, want 10", got[0])
			}
		}
	})
}

// A traced replay whose nodes cannot be pointed back at the graph's own
// events is still enqueued, with its spans; the exec then refuses every
// later replay (they would record the trace's events). LaunchTraced of a
// closed exec is refused before any driver call.
func TestGraphTracePointsFailures(t *testing.T) {
	tg := fakeTarget(t)
	before := misuseCount(tg)
	d := openFor(t, tg, true)
	t.Cleanup(func() { d.Close() })
	rec := trace.NewRecorder("graph", 0)
	bt, err := d.NewTraceTimer(rec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bt.Close() })
	s := mustStream(t, d, 0)
	const n = 100
	a, b := mustAlloc(t, d, 4*n), mustAlloc(t, d, 4*n)
	add1 := build(t, d, add1Kernel())
	capture := func() backend.GraphExec {
		return captureOn(t, d, s, func() error {
			m, err := bt.Begin(s)
			if err != nil {
				return err
			}
			if err := add1.launch(s, &backend.Args{Arrays: []backend.ArrayArg{arr(a, n), arr(b, n)}}); err != nil {
				return err
			}
			return bt.End(s, m, trace.Span{Kernel: "captured"})
		})
	}
	x := capture()
	tx := x.(backend.TracedExec)
	spans := []trace.Span{{Kernel: "add1", Launch: 1}}
	// Two SetEvent calls point the nodes at the trace's events, two point
	// them back: the third fails.
	code, _ := fakedriver.CodeFor(tg.drv, gpu.Failed)
	tg.in.Inject(fakedriver.Fault{Call: "GraphExecEventRecordNodeSetEvent", N: 3, Code: code})
	err = tx.LaunchTraced(s, bt, spans)
	tg.in.Reset()
	if err != nil {
		t.Fatalf("LaunchTraced whose reset failed: %v, want the replay enqueued", err)
	}
	if err := errors.Join(s.Synchronize(), bt.Flush()); err != nil {
		t.Fatal(err)
	}
	if got := len(rec.Spans()); got != 1 {
		t.Errorf("%d spans of the replay, want 1", got)
	}
	if err := x.Launch(s); err == nil || !strings.Contains(err.Error(), "could not be reset") {
		t.Errorf("Launch after a failed reset: %v, want the exec refused", err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}

	y := capture()
	if err := y.Close(); err != nil {
		t.Fatal(err)
	}
	calls := tg.in.Count("GraphExecEventRecordNodeSetEvent")
	if err := y.(backend.TracedExec).LaunchTraced(s, bt, spans); !errors.Is(err, gpu.ErrGraphClosed) {
		t.Errorf("LaunchTraced of a closed exec: %v, want it refused", err)
	}
	if tg.in.Count("GraphExecEventRecordNodeSetEvent") != calls {
		t.Errorf("LaunchTraced of a closed exec called the driver")
	}
	for _, m := range tg.misuses()[before:] {
		t.Errorf("misuse of the fake driver: %s", m)
	}
}
