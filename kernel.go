package qd

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/quadrants-go/qd/internal/lower"
)

// Kernel is a handle to a compiled kernel of a Program. Launch and
// LaunchOn may be called from any goroutine, at once, on any streams: every
// call has its own argument memory.
type Kernel struct {
	c *kernelCore
	// m is the Module the handle came from (nil for buildKernel): it keeps
	// the Module, which owns c, reachable while the handle is.
	m      *Module
	closed atomic.Bool // this handle's Close
}

type kernelCore struct {
	p      *Program
	name   string
	plan   *lower.Plan
	mod    *cachedModule
	closed atomic.Bool
	calls  sync.Pool // *call: per-launch argument storage, reused
	// sig is the argument types the fast bind reads (fastbind.go), once
	// a launch taught them.
	sig atomic.Pointer[argSig]
	// memo is the launch a launch with the same arguments enqueues again
	// (relaunch.go); memoMade says the kernel made its one memo.
	memo     atomic.Pointer[launchMemo]
	memoMade atomic.Bool
	// written marks the parameters the kernel writes, for the alias
	// check of slice arguments (alias.go).
	written []bool
	// fills: the built-in fill kernel (FillOn), which writes every
	// element of its array argument (zerofill.go).
	fills bool
}

// Name is the kernel's name.
func (k *Kernel) Name() string {
	if k == nil || k.c == nil {
		return ""
	}
	return k.c.name
}

func (p *Program) newKernel(plan *lower.Plan) (*kernelCore, error) {
	m, err := p.modules.get(p.dev, plan)
	if err != nil {
		return nil, err
	}
	c := &kernelCore{p: p, name: plan.Kernel.Name, plan: plan, mod: m, written: writtenParams(plan.Kernel)}
	p.mu.Lock()
	p.kernels[c] = struct{}{}
	p.mu.Unlock()
	return c, nil
}

// Close closes this handle: its launches then return ErrClosed. Other
// handles to the same kernel (each Module.Kernel call returns a new one)
// keep working. The compiled code stays in the Program's module cache until
// the Program closes, so compiling the same kernel again is a cache hit and
// no launch in flight can see its code unloaded. Close is idempotent.
func (k *Kernel) Close() error {
	if k == nil || k.c == nil || !k.closed.CompareAndSwap(false, true) {
		return nil
	}
	if k.m != nil {
		return nil
	}
	return k.c.p.closeObject(k.c)
}

// core returns the kernel of an open handle.
func (k *Kernel) core() (*kernelCore, error) {
	if k == nil || k.c == nil {
		return nil, fmt.Errorf("%w: nil Kernel", ErrInvalidArgument)
	}
	if k.closed.Load() {
		return nil, closedErr("kernel " + k.c.name)
	}
	return k.c, nil
}

func (kc *kernelCore) leakClose() error {
	if !kc.closed.CompareAndSwap(false, true) {
		return nil
	}
	kc.p.mu.Lock()
	delete(kc.p.kernels, kc)
	kc.p.mu.Unlock()
	return nil
}

func (kc *kernelCore) release() error {
	kc.closed.Store(true)
	return nil // Program.Close unloads every module
}

// Launch runs the kernel on the Program's default stream. See LaunchOn.
func (k *Kernel) Launch(args ...any) error {
	return k.launch(nil, onDefault, args)
}

// onDefault stands for the Program's default stream in launch.
var onDefault = new(Stream)

// LaunchOn enqueues the kernel on stream s with the given arguments, one per
// parameter: for a scalar parameter a value of its exact Go type (an int32
// for an int parameter is refused, as in a Go call), or an untyped constant
// such as 2 or 0.5, which Go passes as an int or a float64 and LaunchOn
// converts as a Go call of the kernel would, so it must fit (2 for a
// float32, but not 1<<40 for an int32 nor 2.5 for an int); for an array
// parameter a *Ndarray of its element type and number of dimensions, or a
// Go slice of the parameter's type ([]T, [][]T, [][][]T; rectangular). Ndarray launches
// return without waiting for the kernel. Slices are copied to the device
// before the kernel and back after it, in the order of s, and LaunchOn then
// waits for the copy back, so the slices hold the results when it returns.
// Slices of one launch (and the rows of one multi-dimensional slice) must
// not overlap in memory when the kernel writes either of them: the copies
// would lose writes that natively show through both. Such a launch fails
// with an *ArgumentError naming both; slices the kernel only reads may
// overlap.
//
// Errors in arguments are *ArgumentError values naming the kernel and the
// parameter. Errors raised while the kernel runs (an index out of range on
// the CPU) are reported once, whichever stream-parallel group raised them:
// by the next Synchronize of s, by Program.Synchronize, or by this call when it
// waits for slices. Streams that wait for s (WaitStream, WaitEvent) are
// ordered after the failed work but do not report its error.
func (k *Kernel) LaunchOn(s *Stream, args ...any) error {
	return k.launch(nil, s, args)
}

// LaunchContext is LaunchOn with a context that can stop the launch. When
// ctx is already done, nothing is enqueued and the error wraps ctx's
// (errors.Is(err, context.Canceled), or DeadlineExceeded).
//
// On the CPU, once ctx is done the launch's work stops: tasks not started
// are skipped, and a running task ends at its next check (every iteration
// of a loop in the kernel, and every 65,536 iterations of a parallel
// range), leaving its arrays partly written. The launch then fails like a
// kernel that raised an error: the next Synchronize of s (or this call,
// when it waits for slices) returns an error naming the kernel and
// wrapping context.Cause(ctx) (ctx.Err() unless a cause was given). Later
// work on s runs as usual.
//
// On a GPU the context is checked only before the launch is enqueued: a
// GPU kernel, once enqueued, runs to its end, and nothing short of ending
// the process stops it. Give kernels that may run long a bound: a maximum
// iteration count, or a flag array that their loops read with an atomic
// (qd.AtomicAdd(&stop[0], 0)) and that a one-line kernel launched on
// another stream sets. Stream.SynchronizeContext stops waiting for such work.
func (k *Kernel) LaunchContext(ctx context.Context, s *Stream, args ...any) error {
	c, err := k.core()
	if err != nil {
		return err
	}
	if ctx == nil {
		return fmt.Errorf("%w: kernel %s: nil context", ErrInvalidArgument, c.name)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("qd: kernel %s: not launched: %w", c.name, context.Cause(ctx))
	}
	return k.launch(ctx, s, args)
}
