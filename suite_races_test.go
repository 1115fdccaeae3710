package qd

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// Regression tests for races between host access, Close and launches in
// different goroutines, found in review.

// TestHostReadConcurrentWithLaunch: one goroutine waits for x's users in a
// loop (what every host read does first; it does not copy, since a copy
// racing with the kernel's writes would be a data race of the test) while
// another launches and then reads; the launcher's own read must include its
// launch: the concurrent waits must not forget the launch's use of x.
func TestHostReadConcurrentWithLaunch(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := build(t, p, suitekernels.Fill(ir.I32))
		x := newNdarray[int32](t, p, 64)
		s := newStream(t, p)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					if err := x.c.st.waitUses(); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
		for v := range int32(300) {
			check(t, k.LaunchOn(s, x, v))
			got := toSlice(t, x)
			if got[0] != v || got[63] != v {
				close(stop)
				wg.Wait()
				t.Fatalf("read after launch %d saw %d", v, got[0])
			}
		}
		close(stop)
		wg.Wait()
	})
}

// TestHostReadWhileStreamCloses: a stream being closed by another goroutine
// still has queued work; host reads and Sync must wait for it.
func TestHostReadWhileStreamCloses(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		needs(t, p, needLongLoops)
		slow := build(t, p, suitekernels.SlowWrite())
		state := newNdarray[int64](t, p, 1)
		for r := range 3 {
			x := newNdarray[float32](t, p, 8)
			s := newStream(t, p)
			check(t, slow.LaunchOn(s, x, float32(r+1), state, int64(300000)))
			done := make(chan error, 1)
			go func() { done <- s.Close() }()
			if r == 2 {
				check(t, p.Synchronize())
			}
			allEqual(t, "x", toSlice(t, x), float32(r+1))
			check(t, <-done)
		}
	})
}

// TestGroupErrorReachesLaunchStream: an index out of range in the second
// stream-parallel group (on a pooled stream) is reported by the launch
// stream, and by a launch with slices (CPU only: GPUs do not check bounds).
func TestGroupErrorReachesLaunchStream(t *testing.T) {
	p := initProgram(t, WithArch(CPU))
	defer p.Close()
	k := build(t, p, suitekernels.BadGroup())
	arr := newNdarray[float32](t, p, 4)
	check(t, k.Launch(arr))
	if err := p.DefaultStream().Synchronize(); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("launch stream Synchronize = %v, want the group's index error", err)
	}
	if err := k.Launch(make([]float32, 4)); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("slice launch = %v, want the group's index error", err)
	}
	// A host copy that borrows the same pooled stream is not blamed.
	check(t, arr.CopyFromHost(make([]float32, 4)))
}

// TestCloseWhileLaunching closes arrays while other goroutines launch on
// them: every launch either runs or fails with ErrClosed; nothing panics.
func TestCloseWhileLaunching(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := build(t, p, suitekernels.Fill(ir.F32))
		for range 20 {
			x := newNdarray[float32](t, p, 4096)
			s := newStream(t, p)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					if err := k.LaunchOn(s, x, float32(1)); err != nil && !errors.Is(err, ErrClosed) {
						t.Error(err)
					}
				}
			}()
			check(t, x.Close())
			wg.Wait()
			check(t, s.Close())
		}
	})
}

// TestNoPanicOnBadInput: huge shapes and a nil Program give errors.
func TestNoPanicOnBadInput(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		if _, err := NewNdarray[bool](p, math.MaxInt); err == nil {
			t.Error("NewNdarray of MaxInt elements succeeded")
		}
		if _, err := NewNdarray[float64](p, 1<<30, 1<<20); err == nil {
			t.Error("NewNdarray of 8 PiB succeeded")
		}
	})
	var p *Program
	check(t, p.Close())
	wantErr(t, p.Synchronize(), ErrInvalidArgument)
	if _, err := p.NewStream(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewStream on nil Program: %v", err)
	}
	if _, err := p.NewEvent(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewEvent on nil Program: %v", err)
	}
	if p.DefaultStream() != nil || p.Arch() != Auto || p.Device().Name != "" || p.Device().Arch != Auto || p.Tracing() {
		t.Error("nil Program accessors")
	}
	wantErr(t, p.StartTrace(), ErrInvalidArgument)
	wantErr(t, p.StopTrace(nil), ErrInvalidArgument)
	_, err := buildKernel(p, suitekernels.Fill(ir.F32))
	wantErr(t, err, ErrInvalidArgument)
	_, err = Compile(p, "package k")
	wantErr(t, err, ErrInvalidArgument)
}

// TestStreamCloseWhileLaunching closes a stream while another goroutine
// launches on it: every launch either is enqueued before the stream goes
// (and runs) or fails with ErrClosed, never with a backend error.
func TestStreamCloseWhileLaunching(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := build(t, p, suitekernels.Fill(ir.F32))
		x := newNdarray[float32](t, p, 1024)
		for range 20 {
			s := newStream(t, p)
			check(t, k.LaunchOn(s, x, float32(2)))
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					if err := k.LaunchOn(s, x, float32(2)); err != nil {
						if !errors.Is(err, ErrClosed) {
							t.Errorf("launch racing Close: %v", err)
						}
						return
					}
				}
			}()
			check(t, s.Close())
			wg.Wait()
		}
		allEqual(t, "x", toSlice(t, x), 2)
	})
}
