package qd

import (
	"math"

	"github.com/quadrants-go/qd/internal/backend"
)

// The fast bind.
//
// Binding is most of qd's own work on the launch path, and it runs right
// after the previous launch's driver call, which leaves the caches and the
// branch predictors cold: on a GPU host the general bind (a type switch and
// an interface assertion per argument, the checks on each parameter's IR)
// cost about 0.2 µs a launch there, against 10 ns warm. Programs launch a
// kernel with the same Go types of arguments again and again, so after a
// launch whose arguments all had their parameter's exact Go type (scalars)
// or were Ndarrays, the kernel keeps those types (an argSig); later
// launches read their arguments with one concrete type assertion each, and
// fall back to the general bind, which gives every error, on any mismatch.
// Both accept the same arguments and bind the same bits
// (TestFastBindMatchesBind).

// argType is the Go type of one argument as the fast bind reads it.
type argType uint8

const (
	argNone argType = iota
	argBool
	argInt
	argInt32
	argInt64
	argUint
	argUint32
	argUint64
	argFloat32
	argFloat64
	argNdBool
	argNdInt
	argNdInt32
	argNdInt64
	argNdUint
	argNdUint32
	argNdUint64
	argNdFloat32
	argNdFloat64
)

// argSig is the argument types of a kernel's earlier launch, and the
// number of dimensions of each array parameter. It is immutable.
type argSig struct {
	types []argType
	dims  []int
}

// argTypeOf is v's argType, argNone for anything but the Go types an
// exactly typed scalar or an Ndarray has.
func argTypeOf(v any) argType {
	switch v.(type) {
	case bool:
		return argBool
	case int:
		return argInt
	case int32:
		return argInt32
	case int64:
		return argInt64
	case uint:
		return argUint
	case uint32:
		return argUint32
	case uint64:
		return argUint64
	case float32:
		return argFloat32
	case float64:
		return argFloat64
	case *Ndarray[bool]:
		return argNdBool
	case *Ndarray[int]:
		return argNdInt
	case *Ndarray[int32]:
		return argNdInt32
	case *Ndarray[int64]:
		return argNdInt64
	case *Ndarray[uint]:
		return argNdUint
	case *Ndarray[uint32]:
		return argNdUint32
	case *Ndarray[uint64]:
		return argNdUint64
	case *Ndarray[float32]:
		return argNdFloat32
	case *Ndarray[float64]:
		return argNdFloat64
	}
	return argNone
}

// learnSig keeps the argument types of a launch that the general bind
// accepted, when the fast bind can read every one: scalars of their
// parameter's exact Go type (not untyped constants converted) and
// Ndarrays. The first such launch sets the signature for good.
func (k *kernelCore) learnSig(args []any) {
	if k.sig.Load() != nil {
		return
	}
	params := k.plan.Kernel.Params
	sig := &argSig{types: make([]argType, len(args)), dims: make([]int, len(args))}
	for i, a := range args {
		t := argTypeOf(a)
		switch {
		case t == argNone:
			return
		case t >= argNdBool:
			if params[i].Dims == 0 {
				return
			}
			sig.dims[i] = params[i].Dims
		default:
			if params[i].Dims != 0 {
				return
			}
			if _, exact := exactScalar(params[i], a); !exact {
				return
			}
		}
		sig.types[i] = t
	}
	k.sig.CompareAndSwap(nil, sig)
}

// bindFast binds args into c as bind would, when they have the types of
// sig; it reports false, having pinned nothing, when they do not or an
// array fails a check, for bind to redo the work and name what is wrong.
func (k *kernelCore) bindFast(c *call, sig *argSig, args []any) bool {
	n := len(sig.types)
	if len(args) != n {
		return false
	}
	c.b.Scalars = resize(c.b.Scalars, n)
	c.b.Arrays = resize(c.b.Arrays, n)
	c.arrays = c.arrays[:0]
	c.hosts = c.hosts[:0]
	c.spans = c.spans[:0]
	ok := true
	for i, t := range sig.types {
		var bits uint64
		var core *ndCore
		switch t {
		case argBool:
			var v bool
			if v, ok = args[i].(bool); ok && v {
				bits = 1
			}
		case argInt:
			var v int
			v, ok = args[i].(int)
			bits = uint64(v)
		case argInt32:
			var v int32
			v, ok = args[i].(int32)
			bits = uint64(int64(v))
		case argInt64:
			var v int64
			v, ok = args[i].(int64)
			bits = uint64(v)
		case argUint:
			var v uint
			v, ok = args[i].(uint)
			bits = uint64(v)
		case argUint32:
			var v uint32
			v, ok = args[i].(uint32)
			bits = uint64(v)
		case argUint64:
			bits, ok = args[i].(uint64)
		case argFloat32:
			var v float32
			v, ok = args[i].(float32)
			bits = uint64(math.Float32bits(v))
		case argFloat64:
			var v float64
			v, ok = args[i].(float64)
			bits = math.Float64bits(v)
		case argNdBool:
			core, ok = ndCoreOf[bool](args[i])
		case argNdInt:
			core, ok = ndCoreOf[int](args[i])
		case argNdInt32:
			core, ok = ndCoreOf[int32](args[i])
		case argNdInt64:
			core, ok = ndCoreOf[int64](args[i])
		case argNdUint:
			core, ok = ndCoreOf[uint](args[i])
		case argNdUint32:
			core, ok = ndCoreOf[uint32](args[i])
		case argNdUint64:
			core, ok = ndCoreOf[uint64](args[i])
		case argNdFloat32:
			core, ok = ndCoreOf[float32](args[i])
		case argNdFloat64:
			core, ok = ndCoreOf[float64](args[i])
		default:
			ok = false
		}
		if !ok {
			break
		}
		if t < argNdBool {
			c.b.Scalars[i] = bits
			c.b.Arrays[i] = backend.ArrayArg{}
			continue
		}
		if core.p != k.p || core.dims != sig.dims[i] || !core.pin() {
			ok = false
			break
		}
		c.b.Scalars[i] = 0
		c.b.Arrays[i].Buf, c.b.Arrays[i].Shape = core.buf, core.shape
		c.arrays = append(c.arrays, core)
	}
	if !ok {
		for i, a := range c.arrays {
			a.unpin()
			c.arrays[i] = nil
		}
		c.arrays = c.arrays[:0]
	}
	return ok
}

// ndCoreOf is the core of v, an *Ndarray[T], if v is one and not nil.
func ndCoreOf[T Elem](v any) (*ndCore, bool) {
	a, ok := v.(*Ndarray[T])
	if !ok || a == nil || a.c == nil {
		return nil, false
	}
	return a.c, true
}
