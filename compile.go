package qd

import (
	"container/list"
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/frontend"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/native"
)

// Module is the set of kernels compiled from one Go source file. It owns
// the compiled kernels; Kernel hands out handles to them.
type Module struct {
	p        *Program
	kernels  map[string]*kernelCore
	generics map[string]*genericKernel // generic.go
	names    []string
	closed   atomic.Bool
}

// CompileOption configures Compile.
type CompileOption func(*compileConfig)

type compileConfig struct{ filename string }

// WithFilename names the source file in error positions (default
// "kernels.go"); use the name of the embedded file.
func WithFilename(name string) CompileOption { return func(c *compileConfig) { c.filename = name } }

// Compile compiles the functions marked //qd:kernel in src, Go source that
// also compiles with the user's package (usually embedded with //go:embed).
// Functions the kernels call are inlined. Errors give file:line:col and say
// what is supported instead.
//
// Compiling the same source again is cheap: the parsed and lowered kernels
// are cached by the source's hash for the process, and compiled modules by
// the kernel IR's hash for the Program.
//
// On a GPU, Compile loads the compiled code onto the device, and the
// driver loads a module only once the kernels running on the device are
// done: a Compile beside a long kernel returns after it (measured on an
// H200, docs/cuda.md). Compile before starting long work. A kernel's first
// launch loads nothing (Compile loads every function), so launches never
// wait for it.
func Compile[S ~string | ~[]byte](p *Program, src S, opts ...CompileOption) (*Module, error) {
	cfg := compileConfig{filename: "kernels.go"}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if p == nil {
		return nil, fmt.Errorf("%w: Compile: nil Program", ErrInvalidArgument)
	}
	plans, generics, err := parseCached(cfg.filename, []byte(src))
	if err != nil {
		return nil, err
	}
	if len(plans) == 0 && len(generics) == 0 {
		return nil, fmt.Errorf("%w: Compile: %s has no kernel; mark each kernel function with a //qd:kernel comment on the line directly above its func",
			ErrInvalidArgument, cfg.filename)
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	m := &Module{p: p, kernels: make(map[string]*kernelCore, len(plans))}
	cores := make([]*kernelCore, 0, len(plans))
	for _, plan := range plans {
		c, err := p.newKernel(plan)
		if err != nil {
			for _, c := range cores {
				c.close()
			}
			return nil, err
		}
		m.kernels[plan.Kernel.Name] = c
		m.names = append(m.names, plan.Kernel.Name)
		cores = append(cores, c)
	}
	for _, g := range generics {
		if m.generics == nil {
			m.generics = map[string]*genericKernel{}
		}
		m.generics[g.Name] = &genericKernel{p: p, m: m, g: g, name: g.Name,
			instances: map[string]*kernelCore{}, byArgs: map[string]*genericInstance{}}
		m.names = append(m.names, g.Name)
	}
	// Handles keep their Module reachable, so once it is unreachable no
	// handle can launch its kernels any more.
	runtime.AddCleanup(m, func(cores []*kernelCore) {
		for _, c := range cores {
			go c.p.closeLeaked(c)
		}
	}, cores)
	return m, nil
}

// sourceCache maps a source's hash to its lowered kernels: parsing and type
// checking dominate a compile, and lowered plans are immutable, so every
// Program can share them. It is bounded, so that a process compiling ever
// new sources (generated kernels) levels off: it keeps the most recently
// used sources, at most maxSources of them and maxSourceBytes of source
// text (the plans' memory grows with their source's length).
var sourceCache = planCache{maxEntries: maxSources, maxBytes: maxSourceBytes}

const (
	maxSources     = 256
	maxSourceBytes = 32 << 20
)

// planCache is a least-recently-used map from a source's hash to its plans.
type planCache struct {
	maxEntries, maxBytes int

	mu    sync.Mutex
	bytes int // source bytes of the entries held
	m     map[[32]byte]*list.Element
	lru   list.List // *planEntry, most recently used first
}

// planEntry is a source's lowered kernels and its generic kernels, which
// each Module instantiates as its launches need.
type planEntry struct {
	key      [32]byte
	plans    []*lower.Plan
	generics []*frontend.Generic
	bytes    int
}

func (c *planCache) get(key [32]byte) (planEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[key]
	if !ok {
		return planEntry{}, false
	}
	c.lru.MoveToFront(el)
	return *el.Value.(*planEntry), true
}

// put adds an entry for a source of the given length, evicting the least
// recently used entries beyond the bounds (never the new one).
func (c *planCache) put(key [32]byte, e planEntry, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[[32]byte]*list.Element)
	}
	if _, ok := c.m[key]; ok {
		return // another goroutine parsed the same source meanwhile
	}
	e.key, e.bytes = key, bytes
	c.m[key] = c.lru.PushFront(&e)
	c.bytes += bytes
	for c.lru.Len() > 1 && (c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes) {
		e := c.lru.Remove(c.lru.Back()).(*planEntry)
		delete(c.m, e.key)
		c.bytes -= e.bytes
	}
}

func (c *planCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

func (c *planCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
	c.lru.Init()
	c.bytes = 0
}

func parseCached(filename string, src []byte) ([]*lower.Plan, []*frontend.Generic, error) {
	h := sha256.New()
	h.Write([]byte(filename))
	h.Write([]byte{0})
	h.Write(src)
	var key [32]byte
	h.Sum(key[:0])
	if e, ok := sourceCache.get(key); ok {
		return e.plans, e.generics, nil
	}
	f, err := frontend.ParseFile(filename, src)
	if err != nil {
		return nil, nil, err
	}
	var plans []*lower.Plan
	var errs []error
	for _, k := range f.Kernels {
		plan, err := lower.Lower(k)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plans = append(plans, plan)
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	if gen, ok := native.Lookup(src); ok {
		for _, plan := range plans {
			if f := gen.Kernels[plan.Kernel.Name]; f != nil {
				plan.Native, plan.NativeFile = f, gen.File
			}
		}
	}
	sourceCache.put(key, planEntry{plans: plans, generics: f.Generics}, len(filename)+len(src))
	return plans, f.Generics, nil
}

// Kernel returns a new handle to the kernel of that name. Handles share
// the compiled kernel; closing one leaves the others working. After
// [Module.Close] or [Program.Close] it returns [ErrClosed].
func (m *Module) Kernel(name string) (*Kernel, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil Module", ErrInvalidArgument)
	}
	c, ok := m.kernels[name]
	if !ok {
		if g := m.generics[name]; g != nil {
			if m.closed.Load() {
				return nil, closedErr("module (Kernel " + strconv.Quote(name) + ")")
			}
			return &Kernel{g: g, m: m}, nil
		}
		return nil, fmt.Errorf("%w: no kernel %q in the module (kernels: %v); mark kernels with a //qd:kernel comment", ErrInvalidArgument, name, m.names)
	}
	if m.closed.Load() || c.closed.Load() {
		return nil, closedErr("module (Kernel " + strconv.Quote(name) + ")")
	}
	return &Kernel{c: c, m: m}, nil
}

// Kernels lists the module's kernel names in source order.
func (m *Module) Kernels() []string {
	if m == nil {
		return nil
	}
	return slices.Clone(m.names)
}

// Close releases the module's compiled kernels: every handle from Kernel
// then returns [ErrClosed]. It is idempotent.
func (m *Module) Close() error {
	if m == nil || !m.closed.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	for _, c := range m.kernels {
		errs = append(errs, m.p.closeObject(c))
	}
	for _, g := range m.generics {
		errs = append(errs, g.close())
	}
	return errors.Join(errs...)
}

// cachedModule is a compiled module shared by the kernels of one Program
// with the same IR hash.
type cachedModule struct {
	hash ir.Hash
	mod  backend.Module
}

// moduleCache is the Program's compile cache, keyed by the IR hash, which
// covers the kernel's structure, types and stream-parallel grouping. It is
// the only module cache: backends compile and load on every Compile they
// are asked for. Modules stay loaded until the Program closes (closeAll):
// a module may be in use by enqueued work long after its last Kernel
// handle is closed, and a Program compiles a bounded set of kernels.
type moduleCache struct {
	mu   sync.Mutex
	m    map[moduleKey]*cachedModule
	opts backend.CompileOptions // the Program's (WithFastMath)
}

// moduleKey is a kernel's IR hash, and whether the kernel runs as `qd
// gen` generated it (lower.Plan.Native) on the CPU.
type moduleKey struct {
	hash   ir.Hash
	native bool // the module may run the generated code
}

func (mc *moduleCache) init() { mc.m = make(map[moduleKey]*cachedModule) }

func (mc *moduleCache) get(dev backend.Device, plan *lower.Plan) (*cachedModule, error) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	key := moduleKey{plan.Hash, plan.Native != nil && mc.opts.Native != backend.NativeOff}
	if m := mc.m[key]; m != nil {
		return m, nil
	}
	mod, err := dev.Compile(plan, mc.opts)
	if err != nil {
		return nil, fmt.Errorf("qd: compiling kernel %s: %w", plan.Kernel.Name, err)
	}
	m := &cachedModule{hash: plan.Hash, mod: mod}
	mc.m[key] = m
	return m, nil
}

// closeAll unloads every module; the Program has waited for all its work.
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
