package qd

import (
	"unsafe"

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
// launches compare each argument's dynamic type with the kept one and read
// the arguments group by group (8-byte scalars, 4-byte ones, bools,
// Ndarrays), and fall back to the general bind, which gives every error,
// on any mismatch.
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

// argSig is what the fast bind knows of a kernel's arguments from an
// earlier launch: the dynamic type of each, and the arguments grouped by
// how their bits are read, so that a launch checks every type in one
// loop and reads each group in another, without a type switch per
// argument. It is immutable.
type argSig struct {
	types   []unsafe.Pointer // per argument: its dynamic type (eface.typ)
	words   []int            // 8-byte scalars: int, int64, uint, uint64, float64
	int32s  []int            // int32: sign-extended
	uint32s []int            // uint32 and float32: zero-extended
	bools   []int
	arrays  []sigArray // Ndarrays
}

type sigArray struct {
	index int
	dims  int // the parameter's
}

// eface is the layout of a value of type any (internal/abi's
// EmptyInterface): its dynamic type, and a word that is the value for
// pointer types and points to it for others. TestEfaceLayout checks what
// the fast bind reads through it.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

func efaceOf(v *any) *eface { return (*eface)(unsafe.Pointer(v)) }

// ndHandle is the layout every *Ndarray[T] points to: its core first
// (TestEfaceLayout).
type ndHandle struct{ c *ndCore }

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
	sig := &argSig{types: make([]unsafe.Pointer, len(args))}
	for i := range args {
		a := args[i]
		t := argTypeOf(a)
		switch {
		case t == argNone:
			return
		case t >= argNdBool:
			if params[i].Dims == 0 {
				return
			}
			sig.arrays = append(sig.arrays, sigArray{index: i, dims: params[i].Dims})
		default:
			if params[i].Dims != 0 {
				return
			}
			if _, exact := exactScalar(params[i], a); !exact {
				return
			}
			switch t {
			case argBool:
				sig.bools = append(sig.bools, i)
			case argInt32:
				sig.int32s = append(sig.int32s, i)
			case argUint32, argFloat32:
				sig.uint32s = append(sig.uint32s, i)
			default:
				sig.words = append(sig.words, i)
			}
		}
		sig.types[i] = efaceOf(&args[i]).typ
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
	for i, t := range sig.types {
		if efaceOf(&args[i]).typ != t {
			return false
		}
	}
	c.b.Scalars = resize(c.b.Scalars, n)
	c.b.Arrays = resize(c.b.Arrays, n)
	c.arrays = c.arrays[:0]
	c.hosts = c.hosts[:0]
	c.spans = c.spans[:0]
	for _, i := range sig.words {
		c.b.Scalars[i] = *(*uint64)(efaceOf(&args[i]).data)
		c.b.Arrays[i] = backend.ArrayArg{}
	}
	for _, i := range sig.int32s {
		c.b.Scalars[i] = uint64(int64(*(*int32)(efaceOf(&args[i]).data)))
		c.b.Arrays[i] = backend.ArrayArg{}
	}
	for _, i := range sig.uint32s {
		c.b.Scalars[i] = uint64(*(*uint32)(efaceOf(&args[i]).data))
		c.b.Arrays[i] = backend.ArrayArg{}
	}
	for _, i := range sig.bools {
		c.b.Scalars[i] = 0
		if *(*bool)(efaceOf(&args[i]).data) {
			c.b.Scalars[i] = 1
		}
		c.b.Arrays[i] = backend.ArrayArg{}
	}
	for _, sa := range sig.arrays {
		h := (*ndHandle)(efaceOf(&args[sa.index]).data)
		if h == nil || h.c == nil {
			k.unbindFast(c)
			return false
		}
		core := h.c
		if core.p != k.p || core.dims != sa.dims || !core.pin() {
			k.unbindFast(c)
			return false
		}
		c.b.Scalars[sa.index] = 0
		c.b.Arrays[sa.index].Buf, c.b.Arrays[sa.index].Shape = core.buf, core.shape
		c.arrays = append(c.arrays, core)
	}
	return true
}

// unbindFast undoes a fast bind that declined: it unpins what it pinned.
func (k *kernelCore) unbindFast(c *call) {
	for i, a := range c.arrays {
		a.unpin()
		c.arrays[i] = nil
	}
	c.arrays = c.arrays[:0]
}
