package qd

import (
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
	// g is the generic kernel of a handle to one (c is nil): each launch
	// runs the instance its arguments' types select (generic.go).
	g *genericKernel
	// m is the Module the handle came from (nil for buildKernel): it keeps
	// the Module, which owns c, reachable while the handle is.
	m      *Module
	closed atomic.Bool // this handle's Close
}

type kernelCore struct {
	p      *Program
	name   string
	call   string // "kernel " + name, for messages, made once
	plan   *lower.Plan
	mod    *cachedModule
	closed atomic.Bool
	calls  sync.Pool // *call: per-launch argument storage, reused
	// sig is the argument types the fast bind reads (fastbind.go), once
	// a launch taught them.
	sig atomic.Pointer[argSig]
	// memo is the launch a launch with the same arguments enqueues again
	// (relaunch.go).
	memo memoSlot
	// written marks the parameters the kernel writes, for the alias
	// check of slice arguments (alias.go).
	written []bool
	// fills: the built-in fill kernel (FillOn), which writes every
	// element of its array argument (zerofill.go).
	fills bool
}

// Name is the kernel's name.
func (k *Kernel) Name() string {
	switch {
	case k == nil:
		return ""
	case k.g != nil:
		return k.g.name
	case k.c == nil:
		return ""
	}
	return k.c.name
}

func (p *Program) newKernel(plan *lower.Plan) (*kernelCore, error) {
	m, err := p.modules.get(p.dev, plan)
	if err != nil {
		return nil, err
	}
	c := &kernelCore{p: p, name: plan.Kernel.Name, call: "kernel " + plan.Kernel.Name, plan: plan, mod: m, written: writtenParams(plan.Kernel)}
	p.mu.Lock()
	p.kernels[c] = struct{}{}
	p.mu.Unlock()
	return c, nil
}

// Close closes this handle: its launches then return [ErrClosed]. Other
// handles to the same kernel (each [Module.Kernel] call returns a new one)
// keep working. The compiled code stays in the Program's module cache until
// the Program closes, so compiling the same kernel again is a cache hit and
// no launch in flight can see its code unloaded. Close is idempotent.
func (k *Kernel) Close() error {
	if k == nil || k.c == nil && k.g == nil || !k.closed.CompareAndSwap(false, true) {
		return nil
	}
	if k.m != nil {
		return nil
	}
	return k.c.p.closeObject(k.c)
}

// core returns the kernel of an open handle that a launch with args runs:
// for a generic kernel, the instance their types select.
func (k *Kernel) core(args []any) (*kernelCore, error) {
	if k == nil || k.c == nil && k.g == nil {
		return nil, fmt.Errorf("%w: nil Kernel", ErrInvalidArgument)
	}
	if k.closed.Load() {
		return nil, closedErr("kernel " + k.Name())
	}
	if k.g != nil {
		if k.m.closed.Load() {
			return nil, closedErr("kernel " + k.g.name)
		}
		return k.g.instance(args)
	}
	return k.c, nil
}

func (kc *kernelCore) close() error {
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
