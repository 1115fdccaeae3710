package qd

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// Memory in stream order (docs/semantics.md): HostArrays, asynchronous copies,
// device copies, fills, Rows views and stream-ordered allocation, on every
// backend.

func TestHostArrayBasics(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		h := newHostArray[int64](t, p, 4, 3)
		if got := h.Shape(); len(got) != 2 || got[0] != 4 || got[1] != 3 || h.Len() != 12 {
			t.Fatalf("Shape %v Len %d", got, h.Len())
		}
		data := hostData(t, h)
		allEqual(t, "new HostArray", data, 0)
		for i := range data {
			data[i] = int64(i)
		}
		r := must(h.Rows(1, 3))(t)
		if got := hostData(t, r); len(got) != 6 || got[0] != 3 || got[5] != 8 || r.Shape()[0] != 2 {
			t.Fatalf("Rows(1, 3) = %v, shape %v", got, r.Shape())
		}
		for _, bad := range [][2]int{{-1, 2}, {3, 2}, {0, 5}} {
			_, err := h.Rows(bad[0], bad[1])
			wantErr(t, err, ErrInvalidArgument)
		}
		check(t, r.Close()) // a view frees nothing
		if got := hostData(t, h); got[11] != 11 {
			t.Fatal("closing a view changed its parent")
		}
		_, err := r.Data()
		wantErr(t, err, ErrClosed)
		r2 := must(h.Rows(0, 1))(t)
		check(t, h.Close())
		check(t, h.Close())
		_, err = h.Data()
		wantErr(t, err, ErrClosed)
		_, err = r2.Data()
		wantErr(t, err, ErrClosed) // a view of a closed parent is closed
		for _, shape := range [][]int{{}, {1, 2, 3, 4, 5}, {-1}} {
			_, err := NewHostArray[float32](p, shape...)
			wantErr(t, err, ErrInvalidArgument)
		}
		_, err = NewHostArray[float32](nil, 1)
		wantErr(t, err, ErrInvalidArgument)
		var nilH *HostArray[float32]
		_, err = nilH.Data()
		wantErr(t, err, ErrInvalidArgument)
		check(t, nilH.Close())
	})
}

// host → device → kernel → host, all enqueued on one stream: Slice sees
// the result without an explicit synchronization.
func TestAsyncCopyRoundTrip(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		scale := build(t, p, suitekernels.Double())
		s := newStream(t, p)
		const n = 10007
		h := newHostArray[float32](t, p, n)
		data := hostData(t, h)
		for i := range data {
			data[i] = float32(i)
		}
		a := newNdarrayOn[float32](t, s, n)
		check(t, a.CopyFromHostOn(s, h))
		check(t, scale.LaunchOn(s, a))
		check(t, a.CopyToHostOn(s, h))
		got := hostData(t, h)
		for i, v := range got {
			if v != 2*float32(i) {
				t.Fatalf("h[%d] = %v, want %v", i, v, 2*float32(i))
			}
		}
		// ToSlice of the array waits for the same work.
		if v := toSlice(t, a); v[n-1] != 2*float32(n-1) {
			t.Fatalf("a[n-1] = %v", v[n-1])
		}
		check(t, a.Close())
	})
}

func TestCopyFromAndFill(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		s := newStream(t, p)
		a := newNdarray[int32](t, p, 3, 5, 7)
		b := newNdarrayOn[int32](t, s, 3, 5, 7)
		check(t, a.FillOn(s, -9))
		check(t, b.CopyFromOn(s, a))
		allEqual(t, "copy of a fill", toSlice(t, b), -9)
		// Every element type and rank fills.
		fillAll[bool](t, p, s, true)
		fillAll[int](t, p, s, -3)
		fillAll[uint32](t, p, s, 7)
		fillAll[uint64](t, p, s, 1<<40)
		fillAll[float64](t, p, s, 0.25)
		fillAll[uint8](t, p, s, 0xA7)
		fillAll[int16](t, p, s, -2)
		fillAll[[2]uint16](t, p, s, [2]uint16{1, 0xFFFE})
		fillAll[Vec2[float32]](t, p, s, Vec2[float32]{1.5, -2})
		// A view's fill leaves the rest of its parent alone.
		r := newNdarray[uint16](t, p, 6, 2)
		check(t, must(r.Rows(2, 4))(t).FillOn(s, 9))
		if got, want := toSlice(t, r), []uint16{0, 0, 0, 0, 9, 9, 9, 9, 0, 0, 0, 0}; !slices.Equal(got, want) {
			t.Errorf("fill of rows 2..4: %v, want %v", got, want)
		}
		// An element size without a fill is an error, not a panic.
		odd := newNdarray[[3]uint8](t, p, 4)
		wantErr(t, odd.FillOn(s, [3]uint8{1, 2, 3}), ErrUnsupported)
		// Mismatches are errors, and nothing is enqueued.
		c := newNdarray[int32](t, p, 4)
		wantErr(t, c.CopyFromOn(s, a), ErrInvalidArgument)
		wantErr(t, c.CopyFromOn(s, nil), ErrInvalidArgument)
		h := newHostArray[int32](t, p, 5)
		wantErr(t, c.CopyFromHostOn(s, h), ErrInvalidArgument)
		wantErr(t, c.CopyToHostOn(s, nil), ErrInvalidArgument)
		var nilS *Stream
		h4 := newHostArray[int32](t, p, 4)
		wantErr(t, c.CopyFromHostOn(nilS, h4), ErrInvalidArgument)
		// Another Program's objects: its arrays are copy sources (a copy
		// between Programs, suite_peers_test.go), its host arrays and
		// streams are foreign to this array's host copies and fills.
		q := initProgram(t, WithArch(p.Arch()))
		defer q.Close()
		qs := newStream(t, q)
		qa := newNdarray[int32](t, q, 4)
		qh := newHostArray[int32](t, q, 4)
		check(t, c.CopyFromOn(s, qa))
		allEqual(t, "copy from another Program", toSlice(t, c), 0)
		wantErr(t, c.CopyFromHostOn(s, qh), ErrForeign)
		wantErr(t, c.FillOn(qs, 1), ErrForeign)
		// Closed objects.
		check(t, h4.Close())
		wantErr(t, c.CopyToHostOn(s, h4), ErrClosed)
		check(t, a.Close())
		wantErr(t, b.CopyFromOn(s, a), ErrClosed)
		wantErr(t, a.FillOn(s, 1), ErrClosed)
		check(t, s.Close())
		wantErr(t, c.FillOn(s, 1), ErrClosed)
	})
}

func fillAll[T comparable](t *testing.T, p *Program, s *Stream, v T) {
	t.Helper()
	for _, shape := range [][]int{{0}, {5}, {3, 4}, {2, 3, 4}} {
		a := newNdarrayOn[T](t, s, shape...)
		check(t, a.FillOn(s, v))
		allEqual(t, fmt.Sprintf("FillOn %T %v", v, shape), toSlice(t, a), v)
		check(t, a.Close())
	}
}

// Views are kernel arguments and copy endpoints; closing the parent waits
// for the work on its views.
func TestRowsViews(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		scale := build(t, p, suitekernels.Double())
		s1, s2 := newStream(t, p), newStream(t, p)
		const rows, chunk = 12, 4
		a := newNdarray[float32](t, p, rows)
		h := newHostArray[float32](t, p, rows)
		data := hostData(t, h)
		for i := range data {
			data[i] = float32(i + 1)
		}
		for c := range rows / chunk {
			s := []*Stream{s1, s2}[c%2]
			av := must(a.Rows(c*chunk, (c+1)*chunk))(t)
			hv := must(h.Rows(c*chunk, (c+1)*chunk))(t)
			check(t, av.CopyFromHostOn(s, hv))
			check(t, scale.LaunchOn(s, av))
			check(t, av.CopyToHostOn(s, hv))
		}
		got := hostData(t, h) // waits for both streams' copies
		for i, v := range got {
			if v != 2*float32(i+1) {
				t.Fatalf("h[%d] = %v, want %v", i, v, 2*float32(i+1))
			}
		}
		// Parent Close with view work pending, then the view is closed.
		v := must(a.Rows(2, 5))(t)
		check(t, scale.LaunchOn(s1, v))
		check(t, a.Close())
		_, err := v.ToSlice()
		wantErr(t, err, ErrClosed)
		wantErr(t, scale.LaunchOn(s1, v), ErrClosed)
		_, err = a.Rows(0, 1)
		wantErr(t, err, ErrClosed)
	})
}

// skipFlagCopyRace skips the tests that set a kernel's flag with a copy
// under the race detector on the CPU: there the copy is a memmove of the
// flag that the kernel reads with atomics at the same time, which is the
// point of the test, and the detector rightly calls it a race.
func skipFlagCopyRace(t *testing.T, p *Program) {
	if p.Arch() == CPU && raceEnabled {
		t.Skip("a deliberate copy/atomic race on the CPU under -race")
	}
}

// A copy on one stream overlaps a kernel on another: the kernel waits for
// a flag that only the copy sets, so it sees it only if both run at once.
func TestCopyOverlapsKernel(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		needs(t, p, needConcurrentStreams)
		skipFlagCopyRace(t, p)
		wait := build(t, p, suitekernels.WaitFlag())
		s1, s2 := newStream(t, p), newStream(t, p)
		flag := newNdarray[int32](t, p, 1)
		out := newNdarray[int32](t, p, 1)
		one := newHostArray[int32](t, p, 1)
		hostData(t, one)[0] = 1
		check(t, wait.LaunchOn(s1, flag, out, spinBound(p)))
		check(t, flag.CopyFromHostOn(s2, one))
		if got := toSlice(t, out)[0]; got != 1 {
			t.Fatalf("the kernel on s1 ended with %d (2: it never saw the copy on s2)", got)
		}
	})
}

// Close of a HostArray (and of a pooled Ndarray) with copies in flight
// waits for them, and the data they carry is intact.
func TestCloseWaitsForCopies(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		needs(t, p, needConcurrentStreams)
		skipFlagCopyRace(t, p)
		wait := build(t, p, suitekernels.WaitFlag())
		s, s2 := newStream(t, p), newStream(t, p)
		flag := newNdarray[int32](t, p, 1)
		out := newNdarrayOn[int32](t, s, 1)
		h := newHostArray[int32](t, p, 1)
		one := newHostArray[int32](t, p, 1)
		hostData(t, one)[0] = 1
		check(t, wait.LaunchOn(s, flag, out, spinBound(p)))
		check(t, out.CopyToHostOn(s, h)) // behind the waiting kernel
		done := make(chan error, 1)
		go func() { done <- h.Close() }()
		waitInFunc(t, "qd.(*hostCore).close")
		for range 1000 {
			runtime.Gosched()
		}
		select {
		case err := <-done:
			t.Fatalf("HostArray.Close returned (%v) while a copy into it was still queued", err)
		default:
		}
		check(t, flag.CopyFromHostOn(s2, one))
		check(t, <-done)
		check(t, out.Close()) // stream-ordered free, after the copy
		check(t, p.Synchronize())
	})
}

// waitInFunc spins (boundedly) until a goroutine's stack holds fn.
func waitInFunc(t *testing.T, fn string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for range 100000 {
		if bytes.Contains(buf[:runtime.Stack(buf, true)], []byte(fn)) {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("no goroutine reached %s", fn)
}

// Chains of copy → kernel → copy on several streams under load: every
// element comes back right.
func TestCopyChainsUnderLoad(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		scale := build(t, p, suitekernels.Double())
		const streams, rounds, n = 4, 25, 4099
		var wg sync.WaitGroup
		errs := make(chan error, streams)
		for w := range streams {
			s := newStream(t, p)
			h := newHostArray[float32](t, p, n)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range rounds {
					data, err := h.Data()
					if err != nil {
						errs <- err
						return
					}
					for i := range data {
						data[i] = float32(w*1000 + r + i)
					}
					a, err := NewNdarrayOn[float32](s, n)
					if err != nil {
						errs <- err
						return
					}
					for _, err := range []error{a.CopyFromHostOn(s, h), scale.LaunchOn(s, a), scale.LaunchOn(s, a), a.CopyToHostOn(s, h), a.Close()} {
						if err != nil {
							errs <- err
							return
						}
					}
					got, err := h.Data()
					if err != nil {
						errs <- err
						return
					}
					for i, v := range got {
						if want := 4 * float32(w*1000+r+i); v != want {
							errs <- fmt.Errorf("stream %d round %d: h[%d] = %v, want %v", w, r, i, v, want)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// 1000 stream-ordered allocations and frees interleaved with launches on 8
// streams: nothing leaks, nothing is reused too early.
func TestStreamOrderedAllocChurn(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		fill := build(t, p, suitekernels.Fill(ir.F32))
		const streams, per = 8, 125
		var wg sync.WaitGroup
		errs := make(chan error, streams)
		for w := range streams {
			s := newStream(t, p)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range per {
					a, err := NewNdarrayOn[float32](s, 1000+i)
					if err != nil {
						errs <- err
						return
					}
					if err := fill.LaunchOn(s, a, float32(w+i)); err != nil {
						errs <- err
						return
					}
					if i%25 == 0 {
						v, err := a.ToSlice()
						if err != nil || v[len(v)-1] != float32(w+i) {
							errs <- fmt.Errorf("stream %d alloc %d: %v, %v", w, i, err, v[len(v)-1])
							return
						}
					}
					if err := a.Close(); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		check(t, p.Synchronize())
		p.mu.Lock()
		left := len(p.arrays)
		p.mu.Unlock()
		if left != 0 {
			t.Errorf("%d arrays still registered after the churn", left)
		}
	})
}

// A view keeps its parent's memory alive: dropping the parent's handle (a
// leak cleanup would free it) must not close the view.
func TestRowsKeepParentAlive(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		view := func() (*Ndarray[float32], *HostArray[float32]) {
			a := newNdarray[float32](t, p, 64)
			h := newHostArray[float32](t, p, 64)
			check(t, a.FillOn(p.DefaultStream(), 3))
			return must(a.Rows(8, 16))(t), must(h.Rows(0, 8))(t)
		}
		av, hv := view()
		for range 5 {
			runtime.GC()
		}
		check(t, av.CopyToHostOn(p.DefaultStream(), hv))
		allEqual(t, "view after its parent's handle was dropped", hostData(t, hv), 3)
	})
}
