package qd

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A randomized, model-based test of the API: several goroutines each drive
// a random sequence of calls (streams, events, launches of Ndarray, slice,
// stream-parallel and failing kernels, host copies, closes, use after
// close) on one CPU Program, and check every result and every error
// against a simple sequential model of their own objects. They share the
// Program, its default stream, its stream pool and the kernels, so the
// calls also race each other inside qd; -race checks those.
//
// What keeps the model sequential: each goroutine owns its arrays,
// streams and events; before a launch on stream s uses an array last used
// on another stream, it orders s after that stream (WaitStream, or an event
// recorded there and waited for on s, chosen at random), as a correct
// program must. Host reads and Close need no such care: qd waits for the
// work itself. Kernel errors are raised only on a goroutine's own streams,
// so who reports them is known.

const modelSrc = `package k

import "github.com/quadrants-go/qd"

//qd:kernel
func fill(x []int32, v int32) {
	for i := range x {
		x[i] = v
	}
}

//qd:kernel
func add(x, y []int32) {
	for i := range y {
		y[i] += x[i]
	}
}

//qd:kernel
func two(a, b []int32, v int32) {
	qd.StreamParallel(func() {
		for i := range a {
			a[i] = v
		}
	})
	qd.StreamParallel(func() {
		for i := range b {
			b[i] = 2 * v
		}
	})
}

//qd:kernel
func oob(x []int32) {
	for i := range 1 {
		x[len(x)+i] = 1
	}
}
`

// modelKernels are the compiled kernels every goroutine shares.
type modelKernels struct{ fill, add, two, oob *Kernel }

type modelArray struct {
	a      *Ndarray[int32]
	want   []int32
	closed bool
	last   *modelStream // stream of the last launch that used it
}

type modelStream struct {
	s       *Stream
	shared  bool // the default stream: never closed, never holds errors
	closed  bool
	pending bool // a launch on it failed; its next Synchronize reports it
}

type modelEvent struct {
	e      *Event
	closed bool
}

// modelWorker is one goroutine's objects and their expected state.
type modelWorker struct {
	t       *testing.T
	p       *Program
	m       *Module
	k       modelKernels
	rng     *rand.Rand
	n       int // length of every array of this worker
	arrays  []*modelArray
	streams []*modelStream
	events  []*modelEvent
	log     []string // the calls made, for the failure message
}

// fail reports a mismatch and ends the worker's goroutine (t.Fatal may
// only end the test's own).
func (w *modelWorker) fail(format string, args ...any) {
	w.t.Helper()
	tail := w.log[max(0, len(w.log)-12):]
	w.t.Errorf("%s\nafter calls:\n\t%s", fmt.Sprintf(format, args...), strings.Join(tail, "\n\t"))
	runtime.Goexit()
}

// expect checks err against what the model predicts: nil, or an error
// matching want.
func (w *modelWorker) expect(what string, err, want error) {
	w.t.Helper()
	w.log = append(w.log, what)
	switch {
	case want == nil && err != nil:
		w.fail("%s: unexpected error %v", what, err)
	case want != nil && !errors.Is(err, want):
		w.fail("%s: got %v, want an error matching %v", what, err, want)
	}
}

// expectSync checks a call that reports the stream's pending error.
func (w *modelWorker) expectSync(what string, ms *modelStream, err error) {
	w.t.Helper()
	w.log = append(w.log, what)
	if ms.pending {
		if err == nil || !strings.Contains(err.Error(), "out of range") {
			w.fail("%s: got %v, want the failed launch's index error", what, err)
		}
		ms.pending = false
		return
	}
	if err != nil {
		w.fail("%s: unexpected error %v", what, err)
	}
}

func (w *modelWorker) pick(n int) int { return w.rng.IntN(n) }

func (w *modelWorker) liveArrays() []*modelArray {
	var out []*modelArray
	for _, a := range w.arrays {
		if !a.closed {
			out = append(out, a)
		}
	}
	return out
}

func (w *modelWorker) anyStream() *modelStream { return w.streams[w.pick(len(w.streams))] }

// order makes s wait for the last stream that used a, as a correct program
// must before s touches a.
func (w *modelWorker) order(s *modelStream, a *modelArray) {
	o := a.last
	if o == nil || o == s || o.closed || s.closed {
		return // nothing to wait for (a closed stream's Close waited)
	}
	if w.pick(2) == 0 {
		w.expect("WaitStream", s.s.WaitStream(o.s), nil)
		return
	}
	var ev *modelEvent
	for _, e := range w.events {
		if !e.closed {
			ev = e
		}
	}
	if ev == nil {
		e, err := w.p.NewEvent()
		w.expect("NewEvent", err, nil)
		ev = &modelEvent{e: e}
		w.events = append(w.events, ev)
	}
	w.expect("Event.Record", ev.e.Record(o.s), nil)
	w.expect("WaitEvent", s.s.WaitEvent(ev.e), nil)
}

// launch runs one Ndarray launch on s through k, with the model's effect.
func (w *modelWorker) launch(name string, s *modelStream, k *Kernel, apply func(), args []any, arrays ...*modelArray) {
	w.t.Helper()
	for _, a := range arrays {
		if !a.closed {
			w.order(s, a)
		}
	}
	err := k.LaunchOn(s.s, args...)
	switch {
	case s.closed:
		w.expect(name+" on a closed stream", err, ErrClosed)
	case slices.ContainsFunc(arrays, func(a *modelArray) bool { return a.closed }):
		w.expect(name+" with a closed array", err, ErrClosed)
	default:
		w.expect(name, err, nil)
		apply()
		for _, a := range arrays {
			a.last = s
		}
	}
}

// step makes one random call and checks it.
func (w *modelWorker) step() {
	arrays := w.liveArrays()
	if len(arrays) == 0 || w.pick(12) == 0 {
		a, err := NewNdarray[int32](w.p, w.n)
		w.expect("NewNdarray", err, nil)
		w.arrays = append(w.arrays, &modelArray{a: a, want: make([]int32, w.n)})
		return
	}
	a := arrays[w.pick(len(arrays))]
	if w.pick(8) == 0 {
		a = w.arrays[w.pick(len(w.arrays))] // possibly closed: use after close
	}
	s := w.anyStream()
	v := int32(w.pick(1000))
	switch w.pick(16) {
	case 0, 1, 14:
		w.launch("fill", s, w.k.fill, func() {
			for i := range a.want {
				a.want[i] = v
			}
		}, []any{a.a, v}, a)
	case 2:
		b := w.arrays[w.pick(len(w.arrays))]
		w.launch("add", s, w.k.add, func() {
			for i := range b.want {
				b.want[i] += a.want[i]
			}
		}, []any{a.a, b.a}, a, b)
	case 3:
		b := w.arrays[w.pick(len(w.arrays))]
		if a == b {
			return // two groups writing one array would race
		}
		w.launch("two", s, w.k.two, func() {
			for i := range a.want {
				a.want[i], b.want[i] = v, 2*v
			}
		}, []any{a.a, b.a, v}, a, b)
	case 4, 5:
		got, err := a.a.ToSlice()
		if a.closed {
			w.expect("ToSlice of a closed array", err, ErrClosed)
			return
		}
		w.expect("ToSlice", err, nil)
		if !slices.Equal(got, a.want) {
			w.fail("ToSlice = %v, want %v", got, a.want)
		}
	case 6:
		src := make([]int32, w.n)
		for i := range src {
			src[i] = int32(w.pick(100))
		}
		err := a.a.CopyFromHost(src)
		if a.closed {
			w.expect("CopyFromHost to a closed array", err, ErrClosed)
			return
		}
		w.expect("CopyFromHost", err, nil)
		copy(a.want, src)
	case 7:
		w.expect("Ndarray.Close", a.a.Close(), nil) // idempotent
		a.closed = true
	case 8:
		if s.shared || s.closed {
			err := s.s.Synchronize()
			if s.closed {
				w.expect("Synchronize of a closed stream", err, ErrClosed)
			} else {
				w.expectSync("Synchronize (default)", s, err)
			}
			return
		}
		if w.pick(3) == 0 {
			w.expectSync("Stream.Close", s, s.s.Close())
			s.closed = true
			return
		}
		if w.pick(2) == 0 {
			w.expectSync("Wait", s, s.s.SynchronizeContext(context.Background()))
		} else {
			w.expectSync("Synchronize", s, s.s.Synchronize())
		}
		// Only this goroutine enqueues on its streams: all is done.
		if done, err := s.s.Query(); err != nil || !done {
			w.fail("Query after Synchronize = %v, %v", done, err)
		}
	case 9:
		ns, err := w.p.NewStream()
		w.expect("NewStream", err, nil)
		w.streams = append(w.streams, &modelStream{s: ns})
	case 10:
		// A failing launch, on a private open stream only.
		if s.shared || s.closed || a.closed {
			return
		}
		w.order(s, a)
		w.expect("oob", w.k.oob.LaunchOn(s.s, a.a), nil)
		s.pending = true
		a.last = s
	case 11:
		// Go slices: the launch waits, and reports the stream's errors.
		x := make([]int32, w.n)
		err := w.k.fill.LaunchOn(s.s, x, v)
		if s.closed {
			w.expect("slice fill on a closed stream", err, ErrClosed)
			return
		}
		w.expectSync("slice fill", s, err)
		if !s.pending && slices.ContainsFunc(x, func(e int32) bool { return e != v }) {
			w.fail("slice fill(%d) = %v", v, x)
		}
	case 12:
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		w.expect("LaunchContext with a done context", w.k.fill.LaunchContext(ctx, s.s, a.a, v), context.Canceled)
	case 15:
		// A handle of its own: closing it leaves the shared one working.
		h, err := w.m.Kernel("fill")
		w.expect("Module.Kernel", err, nil)
		w.expect("Kernel.Close", h.Close(), nil)
		w.expect("launch through a closed handle", h.LaunchOn(s.s, a.a, v), ErrClosed)
	case 13:
		if len(w.events) > 0 {
			e := w.events[w.pick(len(w.events))]
			w.expect("Event.Close", e.e.Close(), nil)
			e.closed = true
			w.expect("Record of a closed event", e.e.Record(s.s), ErrClosed)
		}
	}
}

// finish checks every open array, then synchronizes and closes the
// worker's streams and events.
func (w *modelWorker) finish() {
	for _, a := range w.liveArrays() {
		got, err := a.a.ToSlice()
		w.expect("final ToSlice", err, nil)
		if !slices.Equal(got, a.want) {
			w.fail("final ToSlice = %v, want %v", got, a.want)
		}
	}
	for _, s := range w.streams {
		if s.shared || s.closed {
			continue
		}
		w.expectSync("final Stream.Close", s, s.s.Close())
	}
	for _, e := range w.events {
		w.expect("final Event.Close", e.e.Close(), nil)
	}
}

// runModel runs workers goroutines of steps calls each, their random
// choices seeded from seed.
func runModel(t *testing.T, seed []byte, workers, steps int) {
	p := initProgram(t, WithArch(CPU))
	defer p.Close()
	m := compileModule(t, p, modelSrc)
	var k modelKernels
	for _, kk := range []struct {
		dst  **Kernel
		name string
	}{{&k.fill, "fill"}, {&k.add, "add"}, {&k.two, "two"}, {&k.oob, "oob"}} {
		*kk.dst = kernelOf(t, m, kk.name)
	}
	var s1, s2 uint64
	if len(seed) >= 8 {
		s1 = binary.LittleEndian.Uint64(seed)
	}
	for i, b := range seed {
		s2 = s2*31 + uint64(b) + uint64(i)
	}
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(s1, s2+uint64(g)))
			w := &modelWorker{t: t, p: p, m: m, k: k, rng: rng, n: []int{1, 7, 64, 5000}[rng.IntN(4)]}
			w.streams = []*modelStream{{s: p.DefaultStream(), shared: true}}
			ns, err := p.NewStream()
			w.expect("NewStream", err, nil)
			w.streams = append(w.streams, &modelStream{s: ns})
			for range steps {
				w.step()
			}
			w.finish()
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	check(t, p.Synchronize()) // every kernel error was reported, once
	poolClean(t, p)
	check(t, m.Close())
	check(t, p.Close())
	wantErr(t, k.fill.Launch(make([]int32, 1), int32(1)), ErrClosed)
	_, err := p.NewStream()
	wantErr(t, err, ErrClosed)
}

// FuzzAPIModel runs the model with the fuzzer's bytes as the seed of every
// random choice; go test runs the seeds below (well under a second in
// all, about a second under -race -short).
func FuzzAPIModel(f *testing.F) {
	for _, s := range []string{"qd", "streams and events", "close everything", "\x00\x01\x02\x03\x04\x05\x06\x07",
		"model", "pool", "kernels", "slices"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, seed []byte) {
		steps := 1500
		if testing.Short() {
			steps = 300
		}
		runModel(t, seed, 3, steps)
	})
}
