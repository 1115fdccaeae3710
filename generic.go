package qd

import (
	"errors"
	"fmt"
	"go/types"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/quadrants-go/qd/internal/frontend"
	"github.com/quadrants-go/qd/internal/lower"
)

// Generic kernels.
//
// A kernel with type parameters, //qd:kernel func saxpy[T qd.Float](a T,
// x, y []T), is compiled per list of type arguments, which a launch infers
// from its arguments' Go types as a Go call would: the element type and
// dimensions of an *Ndarray or a Go slice, the type of a scalar. An int or
// a float64 scalar may be an untyped constant (Go passes 2 and 0.5 to
// LaunchOn as those), so those bind a type parameter only when no other
// argument does: saxpy.Launch(2.0, x, y) with float32 arrays runs
// saxpy[float32], and 2.0 is converted as for any float32 parameter.
//
// Each instance is an ordinary kernel of the Program, compiled at its
// first launch and kept until the Module closes; the handle remembers the
// instance of its last launch, so a loop launching one instance pays one
// type comparison per argument.

// genericKernel is a generic kernel of a Module.
type genericKernel struct {
	p    *Program
	m    *Module
	g    *frontend.Generic
	name string

	mu        sync.Mutex
	instances map[string]*kernelCore // by InstanceName
	byArgs    map[string]*genericInstance
	last      atomic.Pointer[genericInstance]
}

// genericInstance is an instance and the argument types that select it.
type genericInstance struct {
	args []argType
	kc   *kernelCore
}

// argType is what of a launch argument selects an instance: its Go type
// and, for an Ndarray, its number of dimensions (a slice's are in its
// type).
type argType struct {
	t    reflect.Type
	dims int
}

// ndarrayArg is implemented by *Ndarray[T].
type ndarrayArg interface {
	elemType() (reflect.Type, int)
}

func (a *Ndarray[T]) elemType() (reflect.Type, int) {
	if a == nil || a.c == nil {
		return reflect.TypeFor[T](), 0
	}
	return reflect.TypeFor[T](), a.c.dims
}

func argTypeOf(v any) argType {
	if a, ok := v.(ndarrayArg); ok {
		_, dims := a.elemType()
		return argType{t: reflect.TypeOf(v), dims: dims}
	}
	return argType{t: reflect.TypeOf(v)}
}

// instance returns the kernel that a launch with args runs.
func (gk *genericKernel) instance(args []any) (*kernelCore, error) {
	if in := gk.last.Load(); in != nil && len(in.args) == len(args) {
		same := true
		for i, a := range args {
			if argTypeOf(a) != in.args[i] {
				same = false
				break
			}
		}
		if same {
			return in.kc, nil
		}
	}
	ats := make([]argType, len(args))
	var key strings.Builder
	for i, a := range args {
		ats[i] = argTypeOf(a)
		fmt.Fprintf(&key, "%p/%d,", ats[i].t, ats[i].dims)
	}
	gk.mu.Lock()
	defer gk.mu.Unlock()
	in := gk.byArgs[key.String()]
	if in == nil {
		kc, err := gk.instantiate(args)
		if err != nil {
			return nil, err
		}
		in = &genericInstance{args: ats, kc: kc}
		gk.byArgs[key.String()] = in
	}
	gk.last.Store(in)
	return in.kc, nil
}

// instantiate infers the type arguments of a launch with args, and
// compiles that instance unless an earlier launch did. The caller holds
// gk.mu.
func (gk *genericKernel) instantiate(args []any) (*kernelCore, error) {
	g := gk.g
	strong := make([]types.Type, len(args))
	weak := make([]types.Type, len(args))
	for i, a := range args {
		t, untyped, err := gk.goType(a)
		if err != nil {
			return nil, fmt.Errorf("%w: kernel %s: argument %d: %v", ErrInvalidArgument, gk.name, i, err)
		}
		if untyped {
			weak[i] = t
		} else {
			strong[i] = t
		}
	}
	targs, err := g.Infer(strong)
	if err != nil {
		// A type parameter only the int and float64 scalars bind: take
		// their types, as Go takes an untyped constant's default type.
		for i, t := range weak {
			if t != nil {
				strong[i] = t
			}
		}
		if targs, err = g.Infer(strong); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidArgument, err)
		}
	}
	name := g.InstanceName(targs...)
	if kc := gk.instances[name]; kc != nil {
		return kc, nil
	}
	k, err := g.Instantiate(targs...)
	if err != nil {
		// The arguments' types chose an instance the kernel cannot be.
		return nil, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	plan, err := lower.Lower(k)
	if err != nil {
		return nil, err
	}
	// As Compile, the instance is compiled holding the Program: a Close
	// meanwhile waits, or comes first and the launch fails with ErrClosed.
	if err := gk.p.enter(); err != nil {
		return nil, err
	}
	kc, err := gk.p.newKernel(plan)
	gk.p.exit()
	if err != nil {
		return nil, err
	}
	kc.name, kc.call = name, "kernel "+name
	gk.instances[name] = kc
	return kc, nil
}

// goType is the go/types type that argument v stands for in the kernel's
// file: a slice of the element type for an array (as many as its
// dimensions), the scalar's type otherwise. untyped reports an int or a
// float64, which may be an untyped constant.
func (gk *genericKernel) goType(v any) (t types.Type, untyped bool, err error) {
	if v == nil {
		return nil, false, errors.New("nil")
	}
	var et reflect.Type
	var dims int
	if a, ok := v.(ndarrayArg); ok {
		if et, dims = a.elemType(); dims == 0 {
			return nil, false, errors.New("nil Ndarray")
		}
	} else {
		for et = reflect.TypeOf(v); et.Kind() == reflect.Slice; et = et.Elem() {
			dims++
		}
		untyped = dims == 0 && et.PkgPath() == "" && (et.Kind() == reflect.Int || et.Kind() == reflect.Float64)
	}
	if t, err = gk.g.TypeFor(et); err != nil {
		return nil, false, err
	}
	for range dims {
		t = types.NewSlice(t)
	}
	return t, untyped, nil
}

// close closes the instances ([Module.Close]).
func (gk *genericKernel) close() error {
	gk.mu.Lock()
	defer gk.mu.Unlock()
	var errs []error
	for _, kc := range gk.instances {
		errs = append(errs, gk.p.closeObject(kc))
	}
	gk.last.Store(nil)
	clear(gk.byArgs)
	return errors.Join(errs...)
}
