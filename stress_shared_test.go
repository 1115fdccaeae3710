package qd

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
)

// The shared world of the stress test (stress_test.go): objects every
// worker uses, whose outcomes race.
//
// S is one stream that every worker launches and copies on, captures
// graphs on (catching the other workers' work in them, as documented) and
// replays them on. The shared arrays are closed and replaced by any worker
// at any time; graphs captured on S are replayed, updated and closed by
// any worker; victim streams are closed and replaced by any worker while
// the others use them (stress_private_test.go). A call may succeed or fail
// with the sentinels its race allows, and what the shared arrays hold must
// stay all-equal and even: inc2 adds 2 in two tasks, and every copy moves
// whole arrays of such values (zeros, hConst's fours, another shared
// array).
//
// The test's own discipline keeps it free of data races whatever the
// runtime does: all work on shared arrays is enqueued on S (a graph's
// forks join back into it), under sMu held shared; host reads and writes
// of shared arrays hold sMu exclusively, so no work is enqueued while they
// copy, and the runtime must have waited for the work enqueued before.
// Closes take no lock: they race everything.
//
// Races that expose a defect left off (stressDefects) are kept out by
// locks rather than by leaving the calls out (race):
//
//   - capMu: a capture on S holds it exclusively, the calls whose race with
//     it is left off hold it shared;
//   - pcapMu: private captures hold it shared, an early Program.Close
//     exclusively (defect 102);
//   - trMu: opTrace holds it exclusively, and an early Program.Close too
//     (5); a launch on S shared, to know whether it is traced (103);
//   - victimMu: private operations (which may use a victim stream) hold it
//     shared, the Close of a victim exclusively (106);
//   - streamMu: Program.Synchronize and StopTrace hold it exclusively, every
//     Stream.Close shared (105);
//   - closeMu: host copies of a shared array hold it shared, its Close
//     exclusively (4);
//   - sMu: a launch on S holds it exclusively, not shared (108).
//
// The order is victimMu, trMu, capMu, pcapMu, streamMu, closeMu, sMu.

const sharedLen = 64

type stressShared struct {
	S        *Stream
	sMu      sync.RWMutex
	victimMu sync.RWMutex
	capMu    sync.RWMutex // see race
	pcapMu   sync.RWMutex
	streamMu sync.RWMutex
	closeMu  sync.RWMutex
	arrays   [4]atomic.Pointer[Ndarray[int32]]
	graphs   [3]atomic.Pointer[Graph]
	victims  [2]atomic.Pointer[Stream]
	hConst   *HostArray[int32] // fours, never written after setup
	event    *Event            // recorded on S

	trMu    sync.RWMutex // opTrace holds it, so that it knows whether a trace is on
	tracing bool
}

// setupShared makes the shared objects, before the workers start.
func (r *stressRound) setupShared(traced bool) {
	t, p, sh := r.t, r.p, &r.shared
	sh.S = must(p.NewStream())(t)
	for i := range sh.arrays {
		sh.arrays[i].Store(must(NewNdarray[int32](p, sharedLen))(t))
	}
	for i := range sh.victims {
		sh.victims[i].Store(must(p.NewStream())(t))
	}
	sh.hConst = must(NewHostArray[int32](p, sharedLen))(t)
	d := must(sh.hConst.Data())(t)
	for i := range d {
		d[i] = 4
	}
	sh.event = must(p.NewEvent())(t)
	sh.tracing = traced
}

// closeShared closes the shared objects once the workers are done.
func (r *stressRound) closeShared(rng *rand.Rand) {
	sh := &r.shared
	var errs []error
	for i := range sh.graphs {
		if g := sh.graphs[i].Swap(nil); g != nil {
			errs = append(errs, g.Close())
		}
	}
	for i := range sh.arrays {
		errs = append(errs, sh.arrays[i].Load().Close())
	}
	for i := range sh.victims {
		errs = append(errs, sh.victims[i].Load().Close())
	}
	errs = append(errs, sh.hConst.Close(), sh.event.Close(), sh.S.Close())
	if err := errors.Join(errs...); err != nil {
		r.failf("closing the shared objects: %v", err)
	}
	if r.cfg.defects[5] && rng.IntN(2) == 0 {
		// A trace replaced right before Program.Close: the replaced
		// trace's timing events must be released too.
		if err := errors.Join(r.p.StartTrace(), r.p.StartTrace()); err != nil {
			r.failf("StartTrace twice before Program.Close: %v", err)
		}
	}
}

func (w *stressWorker) setupShared() {
	h, err := NewHostArray[int32](w.r.p, sharedLen)
	if w.expect("NewHostArray (sink)", err) {
		w.sink = h
	}
}

func (w *stressWorker) finishShared(closeAll func(string, error)) {
	if w.sink != nil {
		closeAll("final Close of the sink", w.sink.Close())
	}
}

func (w *stressWorker) sharedArray() *Ndarray[int32] {
	return w.r.shared.arrays[w.pick(len(w.r.shared.arrays))].Load()
}

// enabled reports whether every defect of ds is on.
func (r *stressRound) enabled(ds ...int) bool {
	for _, d := range ds {
		if !r.cfg.defects[d] {
			return false
		}
	}
	return true
}

// race runs call, which races what mu guards in a way that exposes the
// known defects ds: freely when they are all on, otherwise holding mu
// (exclusively when excl), so that the test passes on today's code. In a
// capture on S the capture holds capMu already.
func (w *stressWorker) race(mu *sync.RWMutex, excl bool, ds []int, call func()) {
	if w.r.enabled(ds...) || mu == &w.r.shared.capMu && w.inCapture {
		call()
		return
	}
	if excl {
		mu.Lock()
		defer mu.Unlock()
	} else {
		mu.RLock()
		defer mu.RUnlock()
	}
	call()
}

// Which known defects each race exposes.
var (
	raceLaunchCapture    = []int{1, 2} // a launch on S racing a capture on S (103 too if traced)
	raceCopyCapture      = []int{1}    // a copy on S racing a capture on S
	raceReplayCapture    = []int{8}    // Graph.LaunchOn(S) racing a capture on S
	raceSyncCapture      = []int{8}    // S.Synchronize, S.Query racing a capture on S
	raceEventCapture     = []int{104}  // an event recorded on S, waited for, racing a capture on S
	raceFreeCapture      = []int{3}    // a free in the order of S racing a capture on S
	raceReadClose        = []int{4}    // a host copy racing Close of the array
	raceSyncClose        = []int{105}  // Program.Synchronize, StopTrace racing Stream.Close
	raceCloseCapture     = []int{102}  // an early Program.Close racing captures
	raceVictimClose      = []int{106}  // calls on a stream racing its Close
	raceLaunchInterleave = []int{108}  // work on S enqueued between the tasks of a launch on S
)

// checkShared checks the invariant of what shared memory holds.
func (w *stressWorker) checkShared(call string, got []int32) {
	if !w.checking() {
		return
	}
	for i, v := range got {
		if v != got[0] || v%2 != 0 {
			w.fail("%s = %v...: element %d is %d, element 0 is %d: every element must be equal and even (a launch split across a capture's boundary, a read not ordered after a write, or memory not zeroed)",
				call, got[:min(8, len(got))], i, v, got[0])
		}
	}
}

// onS enqueues on S holding sMu (exclusively when excl), kept out of
// captures on S unless the defects ds are on. The array may have been
// closed by another worker, and a capture on S may refuse the call.
func (w *stressWorker) onS(call string, ds []int, excl bool, do func() error) error {
	var err error
	w.race(&w.r.shared.capMu, false, ds, func() {
		if excl {
			w.r.shared.sMu.Lock()
			defer w.r.shared.sMu.Unlock()
		} else {
			w.r.shared.sMu.RLock()
			defer w.r.shared.sMu.RUnlock()
		}
		err = do()
	})
	w.expect(call, err, ErrClosed, ErrCapturing)
	return err
}

// hostS runs a host copy of a shared array, holding sMu exclusively and
// kept out of that array's Close unless defect 4 is on.
func (w *stressWorker) hostS(do func()) {
	w.race(&w.r.shared.closeMu, false, raceReadClose, func() {
		w.r.shared.sMu.Lock()
		defer w.r.shared.sMu.Unlock()
		do()
	})
}

// opSharedLaunch launches inc2, of two tasks, on S. Unless defect 108 is
// on, it holds sMu exclusively, so that no copy or replay on S that another
// worker enqueues runs between its tasks.
func (w *stressWorker) opSharedLaunch() {
	x := w.sharedArray()
	excl := !w.r.enabled(raceLaunchInterleave...)
	w.launchOnS("inc2(shared) on S", excl, func() error { return w.r.k.inc2.LaunchOn(w.r.shared.S, x) })
}

// launchOnS is onS for a launch. A traced launch racing a capture exposes
// defect 103 besides 1 and 2: unless 103 is on, the trace is kept from
// starting or stopping meanwhile (trMu) so that a traced launch stays out
// of captures.
func (w *stressWorker) launchOnS(call string, excl bool, do func() error) {
	ds := raceLaunchCapture
	if !w.r.enabled(103) {
		w.r.shared.trMu.RLock()
		defer w.r.shared.trMu.RUnlock()
		if w.r.p.Tracing() {
			ds = append(slices.Clone(ds), 103)
		}
	}
	w.onS(call, ds, excl, do)
}

func (w *stressWorker) opSharedCopy() {
	x, y := w.sharedArray(), w.sharedArray()
	if x != y {
		w.onS("shared CopyFromOn on S", raceCopyCapture, false, func() error { return y.CopyFromOn(w.r.shared.S, x) })
	}
}

func (w *stressWorker) opSharedHostIn() {
	x := w.sharedArray()
	w.onS("shared CopyFromHostOn(hConst) on S", raceCopyCapture, false, func() error { return x.CopyFromHostOn(w.r.shared.S, w.r.shared.hConst) })
}

func (w *stressWorker) opSharedHostOut() {
	if x := w.sharedArray(); w.sink != nil {
		w.onS("shared CopyToHostOn(sink) on S", raceCopyCapture, false, func() error { return x.CopyToHostOn(w.r.shared.S, w.sink) })
	}
}

// opSharedHostRead reads the worker's sink, which replays of graphs that
// captured a copy into it write too.
func (w *stressWorker) opSharedHostRead() {
	if w.sink == nil {
		return
	}
	var got []int32
	var err error
	w.hostS(func() {
		var d []int32
		d, err = w.sink.Data()
		got = slices.Clone(d)
	})
	if w.expect("sink.Data", err, ErrCapturing) {
		w.checkShared("sink.Data", got)
	}
}

func (w *stressWorker) opSharedRead() {
	x := w.sharedArray()
	call := "shared ToSlice"
	var got []int32
	var err error
	toSlice := w.pick(2) == 0
	if !toSlice {
		call = "shared CopyToHost"
	}
	w.hostS(func() {
		if toSlice {
			got, err = x.ToSlice()
		} else {
			got = make([]int32, sharedLen)
			err = x.CopyToHost(got)
		}
	})
	if w.expect(call, err, ErrClosed, ErrCapturing) {
		w.checkShared(call, got)
	}
}

func (w *stressWorker) opSharedWrite() {
	x, v := w.sharedArray(), 2*w.value()
	src := make([]int32, sharedLen)
	for i := range src {
		src[i] = v
	}
	var err error
	w.hostS(func() { err = x.CopyFromHost(src) })
	w.expect("shared CopyFromHost", err, ErrClosed, ErrCapturing)
}

// newShared makes a shared array: from NewNdarray, or in the order of S,
// where a capture in progress on S makes it memory of that capture's
// graph (closed when the capture ends).
func (w *stressWorker) newShared() *Ndarray[int32] {
	if w.pick(2) == 0 {
		var x *Ndarray[int32]
		var err error
		w.race(&w.r.shared.capMu, false, raceFreeCapture, func() { x, err = NewNdarrayOn[int32](w.r.shared.S, sharedLen) })
		if w.expect("NewNdarrayOn(S)", err, ErrCapturing) {
			return x
		}
	}
	x, err := NewNdarray[int32](w.r.p, sharedLen)
	if !w.expect("NewNdarray (shared)", err) {
		return nil
	}
	return x
}

func (w *stressWorker) opSharedClose() {
	slot := &w.r.shared.arrays[w.pick(len(w.r.shared.arrays))]
	x := slot.Load()
	var err error
	w.race(&w.r.shared.capMu, false, raceFreeCapture, func() {
		w.race(&w.r.shared.closeMu, true, raceReadClose, func() { err = x.Close() })
	})
	w.expect("shared Ndarray.Close", err)
	if nx := w.newShared(); nx != nil && !slot.CompareAndSwap(x, nx) {
		w.race(&w.r.shared.capMu, false, raceFreeCapture, func() { err = nx.Close() })
		w.expect("Close of a replacement not needed", err)
	}
}

// opSharedAlloc makes a stream-ordered array on S, maybe uses it, and
// closes it: its free is enqueued on S, which may begin a capture.
func (w *stressWorker) opSharedAlloc() {
	var x *Ndarray[int32]
	var err error
	w.race(&w.r.shared.capMu, false, raceFreeCapture, func() { x, err = NewNdarrayOn[int32](w.r.shared.S, sharedLen) })
	if !w.expect("NewNdarrayOn(S)", err, ErrCapturing) {
		return
	}
	if w.pick(2) == 0 {
		w.launchOnS("inc2(temporary) on S", false, func() error { return w.r.k.inc2.LaunchOn(w.r.shared.S, x) })
	}
	w.race(&w.r.shared.capMu, false, raceFreeCapture, func() { err = x.Close() })
	w.expect("Close of a NewNdarrayOn(S) array", err)
}

// sharedBody is the body of a capture on S: work on shared arrays, maybe
// forked onto a stream of the worker and joined back.
func (w *stressWorker) sharedBody() error {
	S := w.r.shared.S
	var errs []error
	for range 1 + w.pick(3) {
		x, y := w.sharedArray(), w.sharedArray()
		var call string
		var do func() error
		excl := false
		switch w.pick(5) {
		case 0:
			call, do = "inc2(shared)", func() error { return w.r.k.inc2.LaunchOn(S, x) }
			excl = !w.r.enabled(raceLaunchInterleave...) // as opSharedLaunch
		case 1:
			if x == y {
				continue
			}
			call, do = "shared CopyFromOn", func() error { return y.CopyFromOn(S, x) }
		case 2:
			call, do = "shared CopyFromHostOn(hConst)", func() error { return x.CopyFromHostOn(S, w.r.shared.hConst) }
		case 3:
			call, do = "tmp := NewNdarrayOn(S); shared CopyFromOn(tmp); tmp.Close", func() error {
				tmp, err := NewNdarrayOn[int32](S, sharedLen)
				if err != nil {
					return err
				}
				return errors.Join(x.CopyFromOn(S, tmp), tmp.Close())
			}
		case 4:
			f := w.own(nil)
			if f == nil {
				continue
			}
			f.forked = true
			// Work another worker enqueues on S between the fork and the
			// join is captured too, unordered with the fork's inc2: both
			// would write x at once in every replay. sMu, held alone,
			// keeps it out.
			excl = true
			call, do = "fork to "+f.name+": inc2(shared); join", func() error {
				// f joins the capture: it must be in it after the wait.
				err := f.s.WaitStream(S)
				// checking comes last: an early Program.Close may end the
				// capture between the two reads.
				if c := f.s.c.capturing(); err == nil && (c == nil || c != S.c.capturing()) && w.checking() {
					w.fail("%s.WaitStream(S) in a capture on S succeeded, and %s is not in the capture", f.name, f.name)
				}
				return errors.Join(err, w.r.k.inc2.LaunchOn(f.s, x), S.WaitStream(f.s))
			}
		}
		errs = append(errs, w.onS("in a capture on S: "+call, nil, excl, do))
	}
	return errors.Join(errs...)
}

// sharedCaptureErrs are what a capture on S may fail with: a refusal
// (another worker's host wait, a second capture on S), a closed array, an
// array another worker allocated on S during the capture and did not close
// in it.
var sharedCaptureErrs = []error{ErrCapturing, ErrClosed, ErrInvalidArgument}

// captureS runs a capture on S (Capture or Update) holding capMu
// exclusively: only the calls whose race with it is on run meanwhile.
func (w *stressWorker) captureS(do func(body func() error) error) error {
	w.r.shared.capMu.Lock()
	defer w.r.shared.capMu.Unlock()
	w.inCapture = true
	defer func() { w.inCapture = false }()
	return do(w.sharedBody)
}

func (w *stressWorker) opSharedCapture() {
	var g *Graph
	err := w.captureS(func(body func() error) (err error) {
		g, err = w.r.shared.S.Capture(body)
		return err
	})
	if !w.expect("Capture on S", err, sharedCaptureErrs...) {
		return
	}
	if old := w.r.shared.graphs[w.pick(len(w.r.shared.graphs))].Swap(g); old != nil {
		w.expect("Close of a replaced shared graph", old.Close())
	}
}

func (w *stressWorker) opSharedReplay() {
	if g := w.r.shared.graphs[w.pick(len(w.r.shared.graphs))].Load(); g != nil {
		w.onS("shared Graph.LaunchOn(S)", raceReplayCapture, false, func() error { return g.LaunchOn(w.r.shared.S) })
	}
}

func (w *stressWorker) opSharedUpdate() {
	if g := w.r.shared.graphs[w.pick(len(w.r.shared.graphs))].Load(); g != nil {
		w.expect("shared Graph.Update", w.captureS(g.Update), sharedCaptureErrs...)
	}
}

func (w *stressWorker) opSharedCloseGraph() {
	if g := w.r.shared.graphs[w.pick(len(w.r.shared.graphs))].Swap(nil); g != nil {
		w.expect("shared Graph.Close", g.Close())
	}
}

func (w *stressWorker) opSharedSync() {
	S := w.r.shared.S
	var err error
	if w.pick(2) == 0 {
		w.race(&w.r.shared.capMu, false, raceSyncCapture, func() { err = S.Synchronize() })
		w.expect("S.Synchronize", err, ErrCapturing)
		return
	}
	w.race(&w.r.shared.capMu, false, raceSyncCapture, func() { _, err = S.Query() })
	w.expect("S.Query", err, ErrCapturing)
}

func (w *stressWorker) opSharedEvent() {
	e, S := w.r.shared.event, w.r.shared.S
	var err error
	call := "shared event Record(S)"
	w.race(&w.r.shared.capMu, false, raceEventCapture, func() {
		if err = e.Record(S); err != nil {
			return
		}
		switch w.pick(3) {
		case 0:
			call, err = "shared event Synchronize", e.Synchronize()
		case 1:
			call = "shared event Query"
			_, err = e.Query()
		case 2:
			call, err = "S.WaitEvent(shared event)", S.WaitEvent(e)
		}
	})
	w.expect(call, err, ErrCapturing)
}

func (w *stressWorker) opCloseVictim() {
	slot := &w.r.shared.victims[w.pick(len(w.r.shared.victims))]
	v := slot.Load()
	var err error
	w.race(&w.r.shared.victimMu, true, raceVictimClose, func() { err = w.closeStream(v) })
	w.expect("Close of a victim stream", err)
	ns, err := w.r.p.NewStream()
	if w.expect("NewStream (victim)", err) && !slot.CompareAndSwap(v, ns) {
		w.expect("Close of a victim not needed", w.closeStream(ns))
	}
}

// opProgramSync waits for every stream; it refuses, and fails, every
// capture in progress.
func (w *stressWorker) opProgramSync() {
	var err error
	w.race(&w.r.shared.streamMu, true, raceSyncClose, func() { err = w.r.p.Synchronize() })
	w.expect("Program.Synchronize", err, ErrCapturing)
}

// closeStream closes s, kept out of Program.Synchronize and StopTrace
// unless defect 105 is on.
func (w *stressWorker) closeStream(s *Stream) error {
	var err error
	w.race(&w.r.shared.streamMu, false, raceSyncClose, func() { err = s.Close() })
	return err
}

// opTrace starts, replaces or stops the trace, knowing whether one is on;
// a stopped trace must be valid JSON.
func (w *stressWorker) opTrace() {
	sh := &w.r.shared
	sh.trMu.Lock()
	defer sh.trMu.Unlock()
	churn := []error(nil)
	if w.r.cfg.defects[101] {
		churn = []error{errAny} // opTraceChurn stops traces behind the model's back
	}
	// Replacing a trace (StartTrace while one is on) is left out unless
	// defect 5 is on: the replaced trace is released by a goroutine, which
	// a Program.Close soon after outruns.
	replace := sh.tracing && w.r.enabled(5) && w.pick(3) == 0
	if !sh.tracing || replace {
		if w.expect("StartTrace", w.r.p.StartTrace()) {
			sh.tracing = true
		}
		return
	}
	var buf bytes.Buffer
	var err error
	w.race(&w.r.shared.streamMu, true, raceSyncClose, func() { err = w.r.p.StopTrace(&buf) })
	sh.tracing = false // even if it failed: the trace is gone
	if w.expect("StopTrace", err, churn...) && !json.Valid(buf.Bytes()) && w.checking() {
		w.fail("StopTrace wrote %d bytes of invalid JSON", buf.Len())
	}
}

// opTraceChurn starts or stops the trace without knowing whether one is
// on: StopTrace may find none.
func (w *stressWorker) opTraceChurn() {
	if !w.r.enabled(5) {
		return // it replaces traces too
	}
	if w.pick(2) == 0 {
		w.expect("StartTrace (churn)", w.r.p.StartTrace())
		return
	}
	w.expect("StopTrace (churn)", w.r.p.StopTrace(nil), errAny)
}
