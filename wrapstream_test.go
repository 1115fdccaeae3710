package qd

import (
	"context"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// Wrapped foreign streams and stream priorities.
//
// A wrapped stream is a second qd handle on a CUstream qd does not own: it
// must run kernels in the order of that stream, and its Close must only
// forget it. The handle here comes from a qd stream (of the same Program,
// and of a second Program, which shares the device's primary context the
// way another library would), so the test can check afterwards, through
// the owner's handle, that the CUstream is still alive.

// gpuArchsOnly lists the GPU archs of the suite; without one it skips (or,
// under QD_GPU_RUN=1, suiteArchs has already failed the test).
func gpuArchsOnly(t *testing.T) []Arch {
	t.Helper()
	var archs []Arch
	for _, a := range suiteArchs(t)[1:] {
		if a != Vulkan { // no stream objects to wrap (TestWrapStreamUnsupported)
			archs = append(archs, a)
		}
	}
	if len(archs) == 0 {
		t.Skip("no GPU backend: wrapped foreign streams exist only on CUDA (QD_GPU_RUN=1 makes this a failure)")
	}
	return archs
}

// TestWrapStreamUnsupported: the CPU and Vulkan have no stream objects
// made outside qd to wrap.
func TestWrapStreamUnsupported(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		if p.Arch() != CPU && p.Arch() != Vulkan {
			t.Skipf("%v wraps foreign streams (TestWrapStreamForeign)", p.Arch())
		}
		s := newStream(t, p)
		_, err := p.WrapStream(s.Handle())
		wantErr(t, err, ErrUnsupported)
		// The refusal leaves the stream alone.
		check(t, s.Synchronize())
		check(t, s.Close())
	})
}

func TestWrapStreamForeign(t *testing.T) {
	for _, a := range gpuArchsOnly(t) {
		t.Run(a.String(), func(t *testing.T) {
			p := initProgram(t, WithArch(a))
			defer p.Close()
			t.Run("same program", func(t *testing.T) { wrapStreamCheck(t, p, p) })
			q := initProgram(t, WithArch(a))
			defer q.Close()
			t.Run("other program", func(t *testing.T) { wrapStreamCheck(t, p, q) })
			t.Run("default streams refused", func(t *testing.T) {
				// Handle 0 is the legacy default stream, which synchronizes
				// implicitly with other streams: wrapping it is refused.
				if _, err := p.WrapStream(0); err == nil {
					t.Fatal("WrapStream(0) accepted the legacy default stream")
				}
			})
		})
	}
}

// wrapStreamCheck wraps a stream of owner in p and checks the wrapped
// stream's behaviour and that closing it leaves the stream to its owner.
func wrapStreamCheck(t *testing.T, p, owner *Program) {
	s := newStream(t, owner)
	defer s.Close()
	w := must(p.WrapStream(s.Handle()))(t)
	if w.Handle() != s.Handle() {
		t.Fatalf("wrapped handle %#x, want %#x", w.Handle(), s.Handle())
	}
	slow := build(t, p, suitekernels.SlowWrite())
	cp := build(t, p, suitekernels.Copy())
	fill := build(t, owner, suitekernels.Fill(ir.F32))
	state := newNdarray[int64](t, p, 1)
	x := newNdarray[float32](t, p, 256)
	y := newNdarray[float32](t, p, 256)

	// w is the same CUstream as s, so work on w runs in order with no event:
	// a slow writer followed by a copy sees the writer's values.
	check(t, slow.LaunchOn(w, x, float32(7), state, int64(200000)))
	check(t, cp.LaunchOn(w, x, y))
	check(t, w.Synchronize())
	allEqual(t, "y", toSlice(t, y), 7)

	// Events and stream waits work with a wrapped stream on either side.
	e := newEvent(t, p)
	check(t, slow.LaunchOn(w, x, float32(8), state, int64(200000)))
	check(t, e.Record(w))
	o := newStream(t, p)
	defer o.Close()
	check(t, o.WaitEvent(e))
	check(t, cp.LaunchOn(o, x, y))
	check(t, o.Synchronize())
	allEqual(t, "y after WaitEvent", toSlice(t, y), 8)
	check(t, w.WaitStream(o))
	if err := w.SynchronizeContext(context.Background()); err != nil {
		t.Fatal(err)
	}

	// Close waits for qd's work on it and forgets it; it is idempotent.
	check(t, slow.LaunchOn(w, x, float32(9), state, int64(200000)))
	check(t, w.Close())
	if done, err := s.Query(); err != nil || !done {
		t.Fatalf("after w.Close, the owner's stream: Query = %v, %v; want done (Close waits)", done, err)
	}
	allEqual(t, "x after w.Close", toSlice(t, x), 9)
	check(t, w.Close())

	// The stream itself lives on: the owner launches on it and synchronizes.
	z := newNdarray[float32](t, owner, 64)
	for v := range 3 {
		check(t, fill.LaunchOn(s, z, float32(v+1)))
	}
	check(t, s.Synchronize())
	allEqual(t, "z on the owner's stream after w.Close", toSlice(t, z), 3)
	if p != owner {
		// A kernel of p on a fresh wrap of the same handle still works too.
		w2 := must(p.WrapStream(s.Handle()))(t)
		check(t, cp.LaunchOn(w2, x, y))
		check(t, w2.Close())
		allEqual(t, "y through a second wrap", toSlice(t, y), 9)
	}

	// Every method of the closed wrapper reports ErrClosed.
	wantErr(t, w.Synchronize(), ErrClosed)
	_, err := w.Query()
	wantErr(t, err, ErrClosed)
	wantErr(t, w.SynchronizeContext(context.Background()), ErrClosed)
	wantErr(t, w.WaitEvent(e), ErrClosed)
	wantErr(t, w.WaitStream(o), ErrClosed)
	wantErr(t, o.WaitStream(w), ErrClosed)
	wantErr(t, e.Record(w), ErrClosed)
	wantErr(t, cp.LaunchOn(w, x, y), ErrClosed)
	check(t, s.Synchronize())
}

// TestStreamPriorities: priorities outside the device's range are clamped,
// not refused, and kernels run on streams of the extreme priorities.
func TestStreamPriorities(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := build(t, p, suitekernels.Fill(ir.F32))
		for _, prio := range []int{-100, -1, 0, 100} {
			s, err := p.NewStream(WithPriority(prio))
			if err != nil {
				t.Fatalf("NewStream(WithPriority(%d)): %v", prio, err)
			}
			x := newNdarray[float32](t, p, arrayLen)
			check(t, k.LaunchOn(s, x, float32(prio)))
			check(t, s.Synchronize())
			allEqual(t, "x", toSlice(t, x), float32(prio))
			check(t, s.Close())
		}
		// A high-priority stream overlaps an ordinary one (the rendezvous
		// finishes only if both kernels run at once): priorities reorder the
		// scheduling of blocks, they do not serialize streams.
		needs(t, p, needConcurrentStreams)
		hi := newStream(t, p, WithPriority(-100))
		lo := newStream(t, p)
		defer hi.Close()
		defer lo.Close()
		rv := build(t, p, suitekernels.Rendezvous())
		flags := newNdarray[int32](t, p, 2)
		seen := newNdarray[int32](t, p, 2)
		check(t, rv.LaunchOn(lo, flags, seen, int64(0), int64(1), spinBound(p)))
		check(t, rv.LaunchOn(hi, flags, seen, int64(1), int64(0), spinBound(p)))
		check(t, p.Synchronize())
		allEqual(t, "seen", toSlice(t, seen), 1)
	})
}
