package qd

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/quadrants-go/qd/internal/frontend"
	"github.com/quadrants-go/qd/internal/lower"
)

// Module is the set of kernels compiled from one Go source file.
type Module struct {
	p       *Program
	kernels map[string]*Kernel
	names   []string
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
	plans, err := parseCached(cfg.filename, []byte(src))
	if err != nil {
		return nil, err
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	m := &Module{p: p, kernels: make(map[string]*Kernel, len(plans))}
	for _, plan := range plans {
		k, err := p.newKernel(plan)
		if err != nil {
			for _, k := range m.kernels {
				k.c.leakClose()
			}
			return nil, err
		}
		m.kernels[plan.Kernel.Name] = k
		m.names = append(m.names, plan.Kernel.Name)
	}
	return m, nil
}

// sourceCache maps a source's hash to its lowered kernels: parsing and type
// checking dominate a compile, and lowered plans are immutable, so every
// Program can share them.
var sourceCache sync.Map // [32]byte → []*lower.Plan

func parseCached(filename string, src []byte) ([]*lower.Plan, error) {
	h := sha256.New()
	h.Write([]byte(filename))
	h.Write([]byte{0})
	h.Write(src)
	var key [32]byte
	h.Sum(key[:0])
	if v, ok := sourceCache.Load(key); ok {
		return v.([]*lower.Plan), nil
	}
	kernels, err := frontend.Parse(filename, src)
	if err != nil {
		return nil, err
	}
	var plans []*lower.Plan
	var errs []error
	for _, k := range kernels {
		plan, err := lower.Lower(k)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plans = append(plans, plan)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sourceCache.Store(key, plans)
	return plans, nil
}

// Kernel returns the kernel of that name.
func (m *Module) Kernel(name string) (*Kernel, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil Module", ErrInvalidArgument)
	}
	k, ok := m.kernels[name]
	if !ok {
		return nil, fmt.Errorf("%w: no kernel %q in the module (kernels: %v); mark kernels with a //qd:kernel comment", ErrInvalidArgument, name, m.names)
	}
	return k, nil
}

// Kernels lists the module's kernel names in source order.
func (m *Module) Kernels() []string {
	if m == nil {
		return nil
	}
	return slices.Clone(m.names)
}

// Close closes every kernel of the module. It is idempotent.
func (m *Module) Close() error {
	if m == nil {
		return nil
	}
	var errs []error
	for _, k := range m.kernels {
		errs = append(errs, k.Close())
	}
	return errors.Join(errs...)
}
