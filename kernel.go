package qd

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// Kernel is a compiled kernel of a Program. Launch and LaunchOn may be
// called from any goroutine, at once, on any streams: every call has its own
// argument memory.
type Kernel struct {
	c *kernelCore
}

type kernelCore struct {
	p      *Program
	name   string
	plan   *lower.Plan
	mod    *cachedModule
	closed atomic.Bool
	calls  sync.Pool // *call: per-launch argument storage, reused
}

// Name is the kernel's name.
func (k *Kernel) Name() string {
	if k == nil || k.c == nil {
		return ""
	}
	return k.c.name
}

// BuildKernel compiles a kernel written with the IR builder of package
// internal/ir. It is the entry point for code inside this module that builds
// kernels by hand (tests, benchmarks, the behaviour suite, tools generating
// IR); kernels written in Go come through Compile.
func BuildKernel(p *Program, k *ir.Kernel) (*Kernel, error) {
	if p == nil || k == nil {
		return nil, fmt.Errorf("%w: BuildKernel: nil Program or kernel", ErrInvalidArgument)
	}
	plan, err := lower.Lower(k)
	if err != nil {
		return nil, err
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	return p.newKernel(plan)
}

func (p *Program) newKernel(plan *lower.Plan) (*Kernel, error) {
	m, err := p.modules.get(p.dev, plan)
	if err != nil {
		return nil, err
	}
	c := &kernelCore{p: p, name: plan.Kernel.Name, plan: plan, mod: m}
	p.mu.Lock()
	p.kernels[c] = struct{}{}
	p.mu.Unlock()
	k := &Kernel{c: c}
	runtime.AddCleanup(k, func(c *kernelCore) { go c.p.releaseLeaked(c) }, c)
	return k, nil
}

// Close releases the kernel; its module is unloaded when no kernel of the
// Program uses it. It is idempotent.
func (k *Kernel) Close() error {
	if k == nil || k.c == nil {
		return nil
	}
	return k.c.p.closeObject(k.c)
}

func (c *kernelCore) leakClose() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	c.p.mu.Lock()
	delete(c.p.kernels, c)
	c.p.mu.Unlock()
	return c.p.modules.put(c.mod)
}

func (c *kernelCore) release() error {
	c.closed.Store(true)
	return nil // Program.Close unloads every module
}

// cachedModule is a compiled module shared by the kernels of one Program
// with the same IR hash.
type cachedModule struct {
	hash ir.Hash
	mod  backend.Module
	refs int
}

// moduleCache is the Program's compile cache, keyed by the IR hash, which
// covers the kernel's structure, types and stream-parallel grouping.
type moduleCache struct {
	mu sync.Mutex
	m  map[ir.Hash]*cachedModule
}

func (mc *moduleCache) init() { mc.m = make(map[ir.Hash]*cachedModule) }

func (mc *moduleCache) get(dev backend.Device, plan *lower.Plan) (*cachedModule, error) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if m := mc.m[plan.Hash]; m != nil {
		m.refs++
		return m, nil
	}
	mod, err := dev.Compile(plan)
	if err != nil {
		return nil, fmt.Errorf("qd: compiling kernel %s: %w", plan.Kernel.Name, err)
	}
	m := &cachedModule{hash: plan.Hash, mod: mod, refs: 1}
	mc.m[plan.Hash] = m
	return m, nil
}

func (mc *moduleCache) put(m *cachedModule) error {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	m.refs--
	if m.refs > 0 || mc.m[m.hash] != m {
		return nil
	}
	delete(mc.m, m.hash)
	return m.mod.Close()
}

func (mc *moduleCache) closeAll() error {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	var errs []error
	for h, m := range mc.m {
		errs = append(errs, m.mod.Close())
		delete(mc.m, h)
	}
	return errors.Join(errs...)
}

// Launch runs the kernel on the Program's default stream. See LaunchOn.
func (k *Kernel) Launch(args ...any) error {
	if k == nil || k.c == nil {
		return fmt.Errorf("%w: nil Kernel", ErrInvalidArgument)
	}
	return k.c.launch(k.c.p.def, args)
}

// LaunchOn enqueues the kernel on stream s with the given arguments, one per
// parameter: a scalar of the parameter's Go type, or for an array parameter
// a *Ndarray of its element type and number of dimensions, or a Go slice of
// the parameter's type ([]T, [][]T, [][][]T; rectangular). Ndarray launches
// return without waiting for the kernel. Slices are copied to the device
// before the kernel and back after it, in the order of s, and LaunchOn then
// waits for the copy back, so the slices hold the results when it returns.
//
// Errors in arguments are *ArgumentError values naming the kernel and the
// parameter. Errors raised while the kernel runs (an index out of range on
// the CPU) are reported once, whichever stream-parallel group raised them:
// by the next Synchronize of s, by Program.Sync, or by this call when it
// waits for slices. Streams that wait for s (WaitStream, WaitEvent) are
// ordered after the failed work but do not report its error.
func (k *Kernel) LaunchOn(s *Stream, args ...any) error {
	if k == nil || k.c == nil {
		return fmt.Errorf("%w: nil Kernel", ErrInvalidArgument)
	}
	return k.c.launch(s, args)
}
