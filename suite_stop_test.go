package qd

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// Stopping work: LaunchContext and Program.Close stop CPU kernels that
// would run for ever. GPU kernels cannot be stopped once enqueued, so the
// tests that need a running kernel skip there.

// finishes fails the test if f has not returned after a minute: a guard
// that turns a hang (the bug) into a failure, not a timing assertion.
func finishes(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return", what)
	}
}

// spinUntilStarted waits (boundedly) until a runaway kernel launched with
// the slice started has raised started[0]. On the CPU the kernel works on
// the slice's own memory, so the host sees its atomic writes.
func spinUntilStarted(t *testing.T, started []int32) {
	t.Helper()
	for i := 0; atomic.LoadInt32(&started[0]) == 0; i++ {
		if i > 200_000_000 {
			t.Fatal("the kernel never started")
		}
		runtime.Gosched()
	}
}

// TestCloseStopsRunawayKernel: Program.Close returns while a kernel that
// never ends is running, also when another goroutine waits for it
// (Synchronize) or launched it with slices, and those calls return
// ErrClosed. Close itself reports no error for the work it stopped.
func TestCloseStopsRunawayKernel(t *testing.T) {
	for _, kind := range suitekernels.RunawayKinds {
		for _, waiter := range []string{"none", "synchronize", "slices"} {
			t.Run(kind+"/"+waiter, func(t *testing.T) {
				p := initProgram(t, WithArch(CPU))
				k := build(t, p, suitekernels.Runaway(kind))
				s := newStream(t, p)
				started := make([]int32, 3)
				waited := make(chan error, 1)
				switch waiter {
				case "slices":
					go func() { waited <- k.LaunchOn(s, started) }()
					spinUntilStarted(t, started)
				default:
					arr := newNdarray[int32](t, p, 3)
					check(t, k.LaunchOn(s, arr))
					if waiter == "synchronize" {
						go func() { waited <- s.Synchronize() }()
					} else {
						waited <- ErrClosed
					}
				}
				finishes(t, "Program.Close", func() { check(t, p.Close()) })
				finishes(t, "the waiting call", func() { wantErr(t, <-waited, ErrClosed) })
			})
		}
	}
}

// TestLaunchContext: a nil context is an argument error; a context already
// done enqueues nothing; a live one changes nothing.
func TestLaunchContext(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := build(t, p, suitekernels.Fill(ir.F32))
		x := newNdarray[float32](t, p, arrayLen)
		s := newStream(t, p)
		wantErr(t, k.LaunchContext(nil, s, x, float32(1)), ErrInvalidArgument)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		wantErr(t, k.LaunchContext(ctx, s, x, float32(2)), context.Canceled)
		check(t, s.Synchronize())
		allEqual(t, "x after a launch with a done context", toSlice(t, x), 0)
		check(t, k.LaunchContext(context.Background(), s, x, float32(3)))
		check(t, s.Synchronize())
		allEqual(t, "x", toSlice(t, x), 3)
	})
}

// TestLaunchContextStopsKernel: cancelling the context of a launch whose
// kernel never ends stops it; the launch fails with the context's cause,
// once, and the stream then runs later work as usual.
func TestLaunchContextStopsKernel(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		if p.Arch() != CPU {
			t.Skipf("%s kernels cannot be stopped once enqueued", p.Arch())
		}
		fill := build(t, p, suitekernels.Fill(ir.F32))
		x := newNdarray[float32](t, p, arrayLen)
		s := newStream(t, p)
		cause := errors.New("the user gave up")
		for _, kind := range suitekernels.RunawayKinds {
			t.Run(kind, func(t *testing.T) {
				k := build(t, p, suitekernels.Runaway(kind))
				// Running, with slices: the launch itself reports the stop.
				ctx, cancel := context.WithCancelCause(context.Background())
				started := make([]int32, 3)
				done := make(chan error, 1)
				go func() { done <- k.LaunchContext(ctx, s, started) }()
				spinUntilStarted(t, started)
				cancel(cause)
				var err error
				finishes(t, "the stopped launch", func() { err = <-done })
				wantErr(t, err, cause)
				check(t, s.Synchronize())
				// Queued or running, with an Ndarray: Synchronize reports it.
				ctx, cancel2 := context.WithCancel(context.Background())
				arr := newNdarray[int32](t, p, 3)
				check(t, k.LaunchContext(ctx, s, arr))
				check(t, fill.LaunchOn(s, x, float32(5)))
				cancel2()
				finishes(t, "Synchronize", func() { err = s.Synchronize() })
				wantErr(t, err, context.Canceled)
				check(t, s.Synchronize())
				allEqual(t, "x after the stopped launch", toSlice(t, x), 5)
			})
		}
	})
}
