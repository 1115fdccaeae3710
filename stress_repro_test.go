package qd

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu/fakedriver"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/trace"
)

// Minimal reproductions of what TestStress found on the code of bc1e48b
// (issue 23). Each failed there and passes since the fixes; they stay as
// regression tests. The deterministic ones stop a launch
// at a chosen task (hookDevice) and begin a capture there; the others race
// two goroutines for a bounded number of rounds, which reproduces them
// within a second on a two-core machine.

// hookDevice is a backend.Device that calls hook (when set) before each
// task of a launch runs, and before each replay of a graph, so that a test
// can begin a capture in the middle of a launch. It forwards what package
// qd asks of a device besides backend.Device.
type hookDevice struct {
	backend.Device
	hook   atomic.Pointer[func(task int)] // before Launch.Run
	replay atomic.Pointer[func()]         // before GraphExec.Launch
	closed atomic.Pointer[func()]         // before Graph.Close
}

type hookModule struct {
	backend.Module
	d *hookDevice
}

type hookLaunch struct {
	backend.Launch
	d *hookDevice
}

type hookGraph struct {
	backend.Graph
	d *hookDevice
}

type hookExec struct {
	backend.GraphExec
	d *hookDevice
}

func (d *hookDevice) Compile(plan *lower.Plan, opts backend.CompileOptions) (backend.Module, error) {
	m, err := d.Device.Compile(plan, opts)
	if err != nil {
		return nil, err
	}
	return &hookModule{m, d}, nil
}

func (m *hookModule) Begin(s backend.Stream, args *backend.Args) (backend.Launch, error) {
	l, err := m.Module.Begin(s, args)
	if err != nil {
		return nil, err
	}
	return &hookLaunch{l, m.d}, nil
}

func (l *hookLaunch) Run(task int, s backend.Stream) error {
	if h := l.d.hook.Load(); h != nil {
		(*h)(task)
	}
	return l.Launch.Run(task, s)
}

func (d *hookDevice) BeginCapture(s backend.Stream) error {
	return d.Device.(backend.Capturer).BeginCapture(s)
}

func (d *hookDevice) EndCapture(s backend.Stream) (backend.Graph, error) {
	g, err := d.Device.(backend.Capturer).EndCapture(s)
	if err != nil {
		return nil, err
	}
	return &hookGraph{g, d}, nil
}

func (g *hookGraph) Instantiate() (backend.GraphExec, error) {
	x, err := g.Graph.Instantiate()
	if err != nil {
		return nil, err
	}
	return &hookExec{x, g.d}, nil
}

func (g *hookGraph) Close() error {
	if h := g.d.closed.Load(); h != nil {
		(*h)()
	}
	return g.Graph.Close()
}

func (x *hookExec) Launch(s backend.Stream) error {
	if h := x.d.replay.Load(); h != nil {
		(*h)()
	}
	return x.GraphExec.Launch(s)
}

func (d *hookDevice) NewTraceTimer(rec *trace.Recorder) (backend.TraceTimer, error) {
	return d.Device.(backend.Tracing).NewTraceTimer(rec)
}

func (d *hookDevice) Stop(cause error) {
	if st, ok := d.Device.(backend.Stopper); ok {
		st.Stop(cause)
	}
}

func (d *hookDevice) WrapHost(p unsafe.Pointer, bytes int) (backend.Buffer, error) {
	return d.Device.(backend.HostWrapper).WrapHost(p, bytes)
}

// hookedProgram opens a Program on backend ("cpu" or "fake") over a
// hookDevice, closed when t ends.
func hookedProgram(t *testing.T, name string, opts ...InitOption) (*Program, *hookDevice, *fakedriver.Driver, stressBase) {
	t.Helper()
	var d *hookDevice
	p, fake, base := stressOpenOn(t, name, func(dev backend.Device) backend.Device {
		d = &hookDevice{Device: dev}
		return d
	}, opts...)
	return p, d, fake, base
}

// reproducing bounds the loop of a reproduction by a race: it goes on
// for reproTime, far longer than any of them needed on the code of
// bc1e48b (under a second on a two-core machine).
func reproducing() func() bool {
	end := time.Now().Add(reproTime())
	return func() bool { return time.Now().Before(end) }
}

// reproTime is a second, or five with QD_STRESS set (a full stress run).
func reproTime() time.Duration {
	if os.Getenv("QD_STRESS") != "" {
		return 5 * time.Second
	}
	return time.Second
}

// stressKernel compiles stressSrc on p and returns its kernel name.
func stressKernel(t *testing.T, p *Program, name string) *Kernel {
	t.Helper()
	m := must(Compile(p, stressSrc))(t)
	return must(m.Kernel(name))(t)
}

// captureFrom begins a capture of nothing on s in another goroutine, from
// a hook in the middle of a launch on s, and watches for a while whether it
// begins there: it must not (the launch holds s's gate, gate.go), and when
// it does the test fails. end lets the capture's function return, once the
// capture has begun (after the launch), and gives Capture's results.
func captureFrom(t *testing.T, s *Stream) (end func() (*Graph, error)) {
	type result struct {
		g   *Graph
		err error
	}
	res := make(chan result, 1)
	gate := make(chan struct{})
	go func() {
		g, err := s.Capture(func() error { <-gate; return nil })
		res <- result{g, err}
	}()
	waitInFunc(t, "qd.(*Program).beginCapture")
	for range 2000 {
		if s.c.capturing() != nil {
			t.Error("a capture began on a stream in the middle of a launch on it")
			break
		}
		runtime.Gosched()
	}
	return func() (*Graph, error) {
		for deadline := time.Now().Add(10 * time.Second); s.c.capturing() == nil; runtime.Gosched() {
			if time.Now().After(deadline) {
				t.Error("the capture did not begin after the launch")
				break
			}
		}
		close(gate)
		r := <-res
		return r.g, r.err
	}
}

// once makes f a hook that runs its body once, at task.
func once(task int, f func()) *func(int) {
	var done atomic.Bool
	h := func(t int) {
		if t == task && done.CompareAndSwap(false, true) {
			f()
		}
	}
	return &h
}

// Defect 1: a launch that checked for a capture before another goroutine
// began one on its stream is recorded by the backend into the graph, but
// qd does not know: the graph does not hold the launch's array, so after
// the array's Close a replay runs on freed memory instead of failing with
// ErrClosed. TestStress: "inc2(shared) on S" racing "Capture on S".
func TestReproLaunchRacingCapture(t *testing.T) {
	for _, b := range []string{"cpu", "fake"} {
		t.Run(b, func(t *testing.T) {
			p, d, _, _ := hookedProgram(t, b)
			fill := stressKernel(t, p, "fill")
			x := must(NewNdarray[int32](p, 64))(t)
			s := must(p.NewStream())(t)
			var end func() (*Graph, error)
			d.hook.Store(once(0, func() { end = captureFrom(t, s) }))
			check(t, fill.LaunchOn(s, x, int32(7)))
			g := must(end())(t)
			defer g.Close()
			check(t, x.Close())
			// The launch was wholly outside the capture: the graph holds
			// nothing and replays nothing.
			if err := g.LaunchOn(s); err != nil || len(g.c.held) != 0 {
				t.Errorf("LaunchOn of the graph of a capture begun during a launch, after the launch's array closed: %v (the graph holds %d arrays), want nil and none", err, len(g.c.held))
			}
		})
	}
}

// Defect 1, with a copy: an asynchronous copy racing a capture on its
// stream (enqueueHeld reads the capture state before it enqueues) is
// recorded into the graph without the graph holding its arrays; the
// fake driver sees the replay copy freed memory. TestStress: "shared:
// CopyFromOn on S" racing "Capture on S".
func TestReproCopyRacingCapture(t *testing.T) {
	p, fake, base := stressOpen(t, "fake")
	defer p.Close()
	s := must(p.NewStream())(t)
	for i, more := 0, reproducing(); more(); i++ {
		x := must(NewNdarray[int32](p, 64))(t)
		y := must(NewNdarray[int32](p, 64))(t)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := y.CopyFromOn(s, x); err != nil && !errors.Is(err, ErrCapturing) {
				t.Errorf("CopyFromOn: %v", err)
			}
		}()
		g, err := s.Capture(func() error { return nil })
		wg.Wait()
		if err != nil {
			continue
		}
		check(t, errors.Join(x.Close(), y.Close()))
		err = g.LaunchOn(s)
		g.Close()
		if m := fake.Misuses()[base.misuses:]; len(m) > 0 || err != nil && !errors.Is(err, ErrClosed) {
			t.Fatalf("iteration %d: LaunchOn after the copy's arrays closed: %v; the fake saw %q", i, err, m)
		}
	}
	t.Logf("not reproduced in %v", reproTime())
}

// Defect 2: a CPU launch of two tasks, with a capture begun on its stream
// between them by another goroutine, runs its first task and leaves the
// second in the graph: the array holds 1, where a launch wholly outside
// the capture leaves 2 and one wholly inside leaves 0. TestStress: the
// shared arrays' "every element must be equal and even".
func TestReproLaunchSplitByCapture(t *testing.T) {
	p, d, _, _ := hookedProgram(t, "cpu")
	inc2 := stressKernel(t, p, "inc2")
	x := must(NewNdarray[int32](p, 64))(t)
	s := must(p.NewStream())(t)
	var end func() (*Graph, error)
	d.hook.Store(once(1, func() { end = captureFrom(t, s) }))
	check(t, inc2.LaunchOn(s, x))
	g := must(end())(t)
	defer g.Close()
	if got := must(x.ToSlice())(t); got[0] != 0 && got[0] != 2 {
		t.Errorf("after a launch of inc2 (+1, +1) and a capture begun during it, x = %d, want 0 or 2", got[0])
	}
}

// New (103): the trace's marks of a traced launch straddle a capture begun
// by another goroutine during the launch: Begin outside the capture, End
// inside it, and the launch fails with the backend's raw error ("fake:
// trace End in a capture with a mark *gpu.event made outside it"; the
// CPU's "trace End with a foreign mark"). The launch-split race of defects
// 1 and 2, seen through the trace. TestStress: "inc2(shared) on S" racing
// "Capture on S" while a trace is on, over the fake driver.
func TestReproTracedLaunchSplitByCapture(t *testing.T) {
	for _, b := range []string{"fake"} { // the CPU gets around it today
		t.Run(b, func(t *testing.T) {
			p, d, _, _ := hookedProgram(t, b, WithTrace())
			fill := stressKernel(t, p, "fill")
			x := must(NewNdarray[int32](p, 64))(t)
			s := must(p.NewStream())(t)
			var end func() (*Graph, error)
			d.hook.Store(once(0, func() { end = captureFrom(t, s) }))
			err := fill.LaunchOn(s, x, int32(7))
			if g, _ := end(); g != nil {
				g.Close()
			}
			if why := stressBadError(err); err != nil && why != "" {
				t.Errorf("a traced launch during which a capture began: %s: %v", why, err)
			}
		})
	}
}

// Defect 3: Close of an array from NewNdarrayOn(s) racing a capture begun
// on s: the free, enqueued on s after freeInOrder found s not capturing,
// lands in the capture (the fake: "FreeOn outside a capture of memory a
// capture allocated", "... is not an allocation of the capture"), or the
// free's wait is refused as a wait across the capture's boundary
// (ErrCapturing from Close, which also fails the capture), and the memory
// may be left allocated. An allocation racing the capture's begin likewise
// lands in the graph, and its array's Close fails with the raw error.
// TestStress: "shared: NewNdarrayOn S, Close" racing "Capture on S".
func TestReproCloseRacingCaptureOnHome(t *testing.T) {
	p, fake, base := stressOpen(t, "fake")
	fill := stressKernel(t, p, "fill")
	s := must(p.NewStream())(t)
	other := must(p.NewStream())(t)
	for i, more := 0, reproducing(); more(); i++ {
		x := must(NewNdarrayOn[int32](s, 64))(t)
		check(t, other.WaitStream(s))
		check(t, fill.LaunchOn(other, x, int32(1))) // a use on another stream: the free waits for it
		errc := make(chan error, 1)
		go func() { errc <- x.Close() }()
		g, cerr := s.Capture(func() error { return nil })
		if err := <-errc; err != nil {
			t.Fatalf("iteration %d: Close racing a capture on the array's home stream: %v (the capture: %v)", i, err, cerr)
		}
		if g != nil {
			g.Close()
		}
		if m := fake.Misuses()[base.misuses:]; len(m) > 0 {
			t.Fatalf("iteration %d: the fake saw %q", i, m)
		}
	}
	check(t, errors.Join(s.Close(), other.Close(), p.Close()))
	if live := fake.Live(); live != base.live {
		t.Fatalf("after Close the fake holds %v; before the Program: %v", live, base.live)
	}
	t.Logf("not reproduced in %v", reproTime())
}

// Defect 4: a host read racing Close of the same array copies from freed
// memory (the fake: "fakeCopyDtoHAsync: [...) is not inside a live
// allocation") and returns the driver's raw error, where it must succeed
// or fail with ErrClosed. TestStress: "shared: ToSlice / CopyToHost"
// racing "shared: Ndarray.Close and replace".
func TestReproHostCopyRacingClose(t *testing.T) {
	p, fake, base := stressOpen(t, "fake")
	defer p.Close()
	src := make([]int32, 1024)
	for i, more := 0, reproducing(); more(); i++ {
		x := must(NewNdarray[int32](p, len(src)))(t)
		go x.Close()
		var err error
		switch i % 3 {
		case 0:
			_, err = x.ToSlice()
		case 1:
			err = x.CopyToHost(src)
		case 2:
			err = x.CopyFromHost(src)
		}
		if m := fake.Misuses()[base.misuses:]; len(m) > 0 || err != nil && !errors.Is(err, ErrClosed) {
			t.Fatalf("iteration %d: a host copy racing Close: %v; the fake saw %q", i, err, m)
		}
	}
	t.Logf("not reproduced in %v", reproTime())
}

// Defect 5: StartTrace replacing a trace releases the old one on a
// goroutine of its own, which Program.Close outruns: the old trace's
// timing events outlive the Program (the fake counts them live).
func TestReproTraceReplacedBeforeClose(t *testing.T) {
	p, fake, base := stressOpen(t, "fake")
	check(t, errors.Join(p.StartTrace(), p.StartTrace(), p.Close()))
	time.Sleep(100 * time.Millisecond) // the release goroutine has run by now
	if live := fake.Live(); live != base.live {
		t.Errorf("after StartTrace, StartTrace, Program.Close the fake holds %v; before the Program: %v", live, base.live)
	}
}

// Defect 5, with StopTrace: a StopTrace that has taken the trace when
// Program.Close begins closes the trace's timer only after Close has
// closed the device (its deferred Close runs once p.enter fails): the
// timing events outlive the Program. The Program's lifetime lock, held
// here as an operation in flight would, keeps Close waiting until the
// StopTrace is past its swap. (Since the fix StopTrace holds the Program
// before it takes the trace, so it waits behind Close instead: the test
// gives it a moment to get there, and the trace must not outlive Close.)
func TestReproStopTraceOvertakenByClose(t *testing.T) {
	p, fake, base := stressOpen(t, "fake")
	check(t, p.StartTrace())
	p.life.RLock() // an operation in flight: Close waits for it
	closed := make(chan error)
	go func() { closed <- p.Close() }()
	for p.life.TryRLock() { // Close is not waiting yet
		p.life.RUnlock()
		runtime.Gosched()
	}
	stopped := make(chan error)
	go func() { stopped <- p.StopTrace(nil) }()
	for deadline := time.Now().Add(20 * time.Millisecond); p.tracer.Load() != nil && time.Now().Before(deadline); {
		runtime.Gosched() // StopTrace has not taken the trace yet
	}
	p.life.RUnlock()
	t.Logf("Close: %v; StopTrace: %v", <-closed, <-stopped)
	time.Sleep(50 * time.Millisecond)
	if live := fake.Live(); live != base.live {
		t.Errorf("after a StopTrace overtaken by Program.Close the fake holds %v; before the Program: %v", live, base.live)
	}
}

// Defect 8: Graph.LaunchOn checks that its stream is not capturing, then
// replays; a capture begun on the stream in between (here by a hook right
// before the backend's replay) makes it fail with the backend's raw error
// ("cpu backend: the stream is capturing a graph"; over the fake driver a
// misuse: a graph launched on a capturing stream). TestStress: "shared:
// Graph.LaunchOn S" racing "Capture on S".
func TestReproReplayRacingCapture(t *testing.T) {
	for _, b := range []string{"cpu", "fake"} {
		t.Run(b, func(t *testing.T) {
			p, d, fake, base := hookedProgram(t, b)
			fill := stressKernel(t, p, "fill")
			x := must(NewNdarray[int32](p, 64))(t)
			s := must(p.NewStream())(t)
			g := must(s.Capture(func() error { return fill.LaunchOn(s, x, int32(1)) }))(t)
			var end func() (*Graph, error)
			h := func() { d.replay.Store(nil); end = captureFrom(t, s) }
			d.replay.Store(&h)
			err := g.LaunchOn(s)
			if g2, _ := end(); g2 != nil {
				g2.Close()
			}
			if why := stressBadError(err); err != nil && why != "" {
				t.Errorf("Graph.LaunchOn during which a capture began on its stream: %s: %v", why, err)
			}
			if fake != nil {
				for _, m := range fake.Misuses()[base.misuses:] {
					t.Errorf("misuse of the fake driver: %s", m)
				}
			}
		})
	}
}

// Defect 8: Stream.Synchronize and Stream.Query read the capture state,
// then call the backend, which by then may capture: the backend's raw
// error ("cpu backend: the stream is capturing a graph"; "fake:
// Synchronize: the stream is capturing a graph") instead of ErrCapturing.
// TestStress: "shared: S.Synchronize / Query" racing "Capture on S".
func TestReproSynchronizeRacingCapture(t *testing.T) {
	for _, b := range []string{"cpu", "fake"} {
		t.Run(b, func(t *testing.T) {
			p, _, _ := stressOpen(t, b)
			s := must(p.NewStream())(t)
			for i, more := 0, reproducing(); more(); i++ {
				errc := make(chan error, 1)
				go func() {
					if i%2 == 0 {
						errc <- s.Synchronize()
					} else {
						_, err := s.Query()
						errc <- err
					}
				}()
				if g, err := s.Capture(func() error { return nil }); err == nil {
					g.Close()
				}
				if err := <-errc; err != nil && !errors.Is(err, ErrCapturing) {
					t.Fatalf("iteration %d: Synchronize or Query racing a capture: %v", i, err)
				}
			}
			t.Logf("not reproduced in %v", reproTime())
		})
	}
}

// New (101): StopTrace without a trace in progress returns "qd:
// StopTrace: no trace in progress", which matches no sentinel; every
// error must (doc.go). Two goroutines that each stop "their" trace meet
// it whenever the other stopped first. TestStress: "StopTrace racing
// StartTrace".
func TestReproStopTraceWithoutTrace(t *testing.T) {
	p, _, _ := stressOpen(t, "cpu")
	if err := p.StopTrace(nil); stressBadError(err) != "" {
		t.Errorf("StopTrace without a trace: %v, matching no sentinel", err)
	}
}

// New (102): Program.Close ends a capture in progress (abort), and returns
// the backend's raw error when the capture's fork was not joined back yet
// ("cpu backend: work recorded on stream N was not joined back into the
// capturing stream M"; over the fake "FAKE_ERROR_STREAM_CAPTURE_UNJOINED"):
// the capture is the other goroutine's, and half done is its normal state.
// TestStress: a round that closes the Program while its workers capture.
func TestReproCloseDuringCapture(t *testing.T) {
	for _, b := range []string{"cpu", "fake"} {
		t.Run(b, func(t *testing.T) {
			p, _, _ := stressOpen(t, b)
			fill := stressKernel(t, p, "fill")
			x := must(NewNdarray[int32](p, 64))(t)
			s := must(p.NewStream())(t)
			s2 := must(p.NewStream())(t)
			var cerr error
			_, err := s.Capture(func() error {
				check(t, s2.WaitStream(s))
				check(t, fill.LaunchOn(s2, x, int32(1)))
				cerr = p.Close() // as another goroutine would, in the middle of the capture
				return nil
			})
			t.Logf("Capture: %v", err)
			if why := stressBadError(cerr); cerr != nil && why != "" {
				t.Errorf("Program.Close during a capture: %s: %v", why, cerr)
			}
		})
	}
}

// New (104): Event.Record reads the stream's capture state (mark), then
// records; a capture begun on the stream in between makes the event a
// point of the capture without qd knowing, so the event's Synchronize or
// Query reaches the backend and fails with its raw error ("cpu backend:
// the event was recorded inside a capture ..."; over the fake a misuse:
// EventSynchronize of an event recorded in a capture in progress, or a
// StreamGetCaptureInfo the runtime should not make). TestStress: "shared:
// event on S" racing "Capture on S".
func TestReproEventRecordRacingCapture(t *testing.T) {
	for _, b := range []string{"cpu", "fake"} {
		t.Run(b, func(t *testing.T) {
			p, fake, base := stressOpen(t, b)
			s := must(p.NewStream())(t)
			e := must(p.NewEvent())(t)
			for i, more := 0, reproducing(); more(); i++ {
				errc := make(chan error, 1)
				go func() {
					err := e.Record(s)
					if err == nil {
						err = e.Synchronize()
					}
					errc <- err
				}()
				if g, err := s.Capture(func() error { return nil }); err == nil {
					g.Close()
				}
				err := <-errc
				var misuses []string
				if fake != nil {
					misuses = fake.Misuses()[base.misuses:]
				}
				if err != nil && !errors.Is(err, ErrCapturing) || len(misuses) > 0 {
					t.Fatalf("iteration %d: Record and Synchronize racing a capture: %v; the fake saw %q", i, err, misuses)
				}
			}
			t.Logf("not reproduced in %v", reproTime())
		})
	}
}

// New (105): Program.Synchronize (and StopTrace, which waits the same
// way) racing Stream.Close of another goroutine synchronizes a stream the
// Close is destroying, and returns the raw "gpu: stream closed".
// TestStress: "Program.Synchronize" racing "Stream.Close" and "shared:
// close a victim stream".
func TestReproSynchronizeRacingStreamClose(t *testing.T) {
	p, _, _ := stressOpen(t, "fake")
	for i, more := 0, reproducing(); more(); i++ {
		s := must(p.NewStream())(t)
		go s.Close()
		if err := p.Synchronize(); err != nil {
			t.Fatalf("iteration %d: Program.Synchronize racing Stream.Close: %v", i, err)
		}
	}
	t.Logf("not reproduced in %v", reproTime())
}

// New (106): calls on a stream racing its Close in another goroutine pass
// the stream's closed check and then reach the backend after Close has
// destroyed it: the fake sees calls on a dead stream ("fakeEventRecord:
// stream ... is not live", "fakeStreamSynchronize: ..."), and the call
// returns the raw error (or "gpu: stream closed"), where it must succeed
// or fail with ErrClosed. Only launches and copies hold the stream
// (streamCore.hold); Event.Record, WaitStream, WaitEvent and Synchronize do
// not. TestStress: private operations on a victim stream racing "shared:
// close a victim stream".
func TestReproStreamUseRacingClose(t *testing.T) {
	p, fake, base := stressOpen(t, "fake")
	other := must(p.NewStream())(t)
	e := must(p.NewEvent())(t)
	for i, more := 0, reproducing(); more(); i++ {
		s := must(p.NewStream())(t)
		go s.Close()
		var err error
		switch i % 4 {
		case 0:
			err = e.Record(s)
		case 1:
			err = other.WaitStream(s)
		case 2:
			err = s.WaitStream(other)
		case 3:
			err = s.Synchronize()
		}
		if m := fake.Misuses()[base.misuses:]; len(m) > 0 || err != nil && !errors.Is(err, ErrClosed) {
			t.Fatalf("iteration %d: a call racing Stream.Close: %v; the fake saw %q", i, err, m)
		}
	}
	t.Logf("not reproduced in %v", reproTime())
}

// Defect 3, with an allocation: NewNdarrayOn on a stream whose capture
// ends meanwhile gives the capture the array (own), the capture's release
// closes it, and only then is the array registered with the Program
// (newArray): a closed array the Program keeps until it closes, whose
// Close does nothing. TestStress: "everything closed, but the Program
// holds 1 arrays [... allocated in a capture true]".
func TestReproNewNdarrayOnRacingCaptureEnd(t *testing.T) {
	p, _, _ := stressOpen(t, "cpu")
	s := must(p.NewStream())(t)
	for i, more := 0, reproducing(); more(); i++ {
		gate := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			g, err := s.Capture(func() error { <-gate; return nil })
			if err == nil {
				g.Close()
			}
		}()
		for s.c.capturing() == nil {
			runtime.Gosched()
		}
		close(gate)
		if x, err := NewNdarrayOn[int32](s, 64); err == nil {
			x.Close()
		}
		<-done
		p.mu.Lock()
		n := len(p.arrays)
		p.mu.Unlock()
		if n != 0 {
			t.Fatalf("iteration %d: every array closed, but the Program holds %d", i, n)
		}
	}
	t.Logf("not reproduced in %v", reproTime())
}

// New (107): Event.SynchronizeContext waits on a goroutine that holds the
// Program's lifetime lock (untilDone) and calls Event.Synchronize, which
// takes the lock again (a recursive read lock). A Program.Close arriving
// between the two waits for the first, and the second waits for it:
// Close never returns, and the goroutine never ends (a SynchronizeContext
// with a deadline returns at the deadline; one without never does).
// TestStress: its watchdog, with workers in "Event record / wait" and an
// early Program.Close. Stream.SynchronizeContext does not call back into
// the API and is not affected.
func TestReproEventSynchronizeContextRacingClose(t *testing.T) {
	for i, more := 0, reproducing(); more(); i++ {
		// Not stressOpen: its cleanup would wait for the deadlocked Close.
		p := must(Init(WithArch(CPU)))(t)
		fill := stressKernel(t, p, "fill")
		// Goroutines wait for events in a loop, so that Close lands
		// between the two locks of one of them.
		for range 4 {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				x, err1 := NewNdarray[int32](p, 1<<12)
				e, err2 := p.NewEvent()
				s, err3 := p.NewStream()
				for err := errors.Join(err1, err2, err3); err == nil; {
					err = errors.Join(fill.LaunchOn(s, x, int32(1)), e.Record(s), e.SynchronizeContext(ctx))
				}
			}()
		}
		time.Sleep(time.Millisecond)
		closed := make(chan error)
		go func() { closed <- p.Close() }()
		select {
		case <-closed:
		case <-time.After(3 * time.Second):
			t.Fatalf("iteration %d: Program.Close racing Event.SynchronizeContext has not returned in 3 s", i)
		}
	}
	t.Logf("not reproduced in %v", reproTime())
}

// New (108): a launch enqueues its tasks one by one, and work another
// goroutine enqueues on the same stream meanwhile runs between them: a
// copy of x enqueued by another goroutine while inc2(x) (+1, +1) is being
// enqueued copies x with one of the two increments. A launch, one call,
// should be one unit in its stream's order, as a copy or a graph replay
// (enqueued at once) is. The race of defect 2 with another enqueue in
// place of the capture's begin. TestStress: the shared arrays' "every
// element must be equal and even", with "shared: inc2 on S" and
// "shared: CopyFromOn on S" (or a replay of a graph that copies) racing.
func TestReproLaunchInterleaved(t *testing.T) {
	p, d, _, _ := hookedProgram(t, "cpu")
	inc2 := stressKernel(t, p, "inc2")
	x := must(NewNdarray[int32](p, 64))(t)
	y := must(NewNdarray[int32](p, 64))(t)
	s := must(p.NewStream())(t)
	done := make(chan error, 1)
	d.hook.Store(once(1, func() {
		// Another goroutine enqueues a copy of x on s, and has had time to
		// before the launch enqueues its second task. (Since the fix, the
		// copy waits for the launch to be enqueued.)
		go func() { done <- y.CopyFromOn(s, x) }()
		for deadline := time.Now().Add(20 * time.Millisecond); time.Now().Before(deadline); {
			runtime.Gosched()
		}
	}))
	check(t, inc2.LaunchOn(s, x))
	check(t, <-done)
	if got := must(y.ToSlice())(t); got[0] != 0 && got[0] != 2 {
		t.Errorf("a copy of x enqueued on the stream while inc2(x) was being enqueued = %d, want 0 or 2", got[0])
	}
}

// New (TestStress, third session of 2026-12-02: a round that closed its
// Program early left one driver graph live): Graph.Update closed the
// captured backend graph after it had let the Program go, so a
// Program.Close could run in between; the device's Close then skipped the
// graph that Update was closing, and Update's destroy came after the device
// had closed. Every backend graph must be closed while the Program is held
// (p.life shared), which shuts Close out: the hook checks that at each
// Graph.Close, on every path that makes and drops one.
func TestReproGraphClosedOutsideProgram(t *testing.T) {
	for _, b := range []string{"cpu", "fake"} {
		t.Run(b, func(t *testing.T) {
			p, d, fake, base := hookedProgram(t, b)
			var closes, outside atomic.Int32
			h := func() {
				closes.Add(1)
				if p.life.TryLock() { // no holder: Close could have run here
					p.life.Unlock()
					outside.Add(1)
				}
			}
			d.closed.Store(&h)
			fill := stressKernel(t, p, "fill")
			s := must(p.NewStream())(t)
			x := must(NewNdarrayOn[int32](s, 64))(t)
			body := func() error { return fill.LaunchOn(s, x, int32(1)) }
			g := must(s.Capture(body))(t)
			check(t, g.Update(body))                        // same shape: updated in place
			check(t, g.Update(func() error { return nil })) // another shape: rebuilt
			if _, err := s.Capture(func() error { return errors.New("fn failed") }); err == nil {
				t.Error("a capture whose function failed gave a graph")
			}
			func() {
				defer func() { recover() }()
				s.Capture(func() error { panic("in the capture") })
			}()
			check(t, errors.Join(g.Close(), x.Close(), s.Close(), p.Close()))
			if n := outside.Load(); n > 0 {
				t.Errorf("%d of %d backend graphs were closed while Program.Close could run", n, closes.Load())
			}
			if closes.Load() < 3 {
				t.Errorf("the hook saw %d graph closes; the test makes at least 3", closes.Load())
			}
			if fake != nil {
				if live := fake.Live(); live != base.live {
					t.Errorf("after Close the fake holds %v; before the Program: %v", live, base.live)
				}
			}
		})
	}
}
