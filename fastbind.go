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

// Scalar groups: how the bits of an argument's Go type are read.
const (
	groupNone   = iota // not a scalar the fast bind reads
	groupWord          // int, int64, uint, uint64, float64: 8 bytes
	groupInt32         // sign-extended
	groupUint32        // uint32, float32: zero-extended
	groupBool          // 0 or 1
)

// scalarGroup is the group of a scalar argument v.
func scalarGroup(v any) int {
	switch v.(type) {
	case int, int64, uint, uint64, float64:
		return groupWord
	case int32:
		return groupInt32
	case uint32, float32:
		return groupUint32
	case bool:
		return groupBool
	}
	return groupNone
}

// learnSig keeps the argument types of a launch that the general bind
// accepted, when the fast bind can read every one: scalars of their
// parameter's exact Go type (not untyped constants converted) and
// Ndarrays. The first such launch sets the signature for good.
func (kc *kernelCore) learnSig(args []any) {
	if kc.sig.Load() != nil {
		return
	}
	params := kc.plan.Kernel.Params
	sig := &argSig{types: make([]unsafe.Pointer, len(args))}
	for i := range args {
		a := args[i]
		if _, ok := a.(ndArg); ok {
			if params[i].Dims == 0 {
				return
			}
			sig.arrays = append(sig.arrays, sigArray{index: i, dims: params[i].Dims})
		} else {
			if params[i].Dims != 0 {
				return
			}
			if _, exact := exactScalar(params[i], a); !exact {
				return
			}
			switch scalarGroup(a) {
			case groupWord:
				sig.words = append(sig.words, i)
			case groupInt32:
				sig.int32s = append(sig.int32s, i)
			case groupUint32:
				sig.uint32s = append(sig.uint32s, i)
			case groupBool:
				sig.bools = append(sig.bools, i)
			default:
				return
			}
		}
		sig.types[i] = efaceOf(&args[i]).typ
	}
	kc.sig.CompareAndSwap(nil, sig)
}

// bindFast binds args into c as bind would, when they have the types of
// sig; it reports false, having pinned nothing, when they do not or an
// array fails a check, for bind to redo the work and name what is wrong.
func (kc *kernelCore) bindFast(cl *call, sig *argSig, args []any) bool {
	if !sig.matches(args) {
		return false
	}
	n := len(args)
	cl.b.Scalars = resize(cl.b.Scalars, n)
	cl.b.Arrays = resize(cl.b.Arrays, n)
	cl.arrays = cl.arrays[:0]
	cl.hosts = cl.hosts[:0]
	cl.spans = cl.spans[:0]
	clear(cl.b.Arrays)
	sig.readScalars(args, cl.b.Scalars)
	for _, sa := range sig.arrays {
		h := (*ndHandle)(efaceOf(&args[sa.index]).data)
		if h == nil || h.c == nil {
			kc.unbindFast(cl)
			return false
		}
		core := h.c
		if core.p != kc.p || core.dims != sa.dims || !core.pin() {
			kc.unbindFast(cl)
			return false
		}
		cl.b.Scalars[sa.index] = 0
		cl.b.Arrays[sa.index] = backend.ArrayArg{Buf: core.buf, Shape: core.shape}
		cl.arrays = append(cl.arrays, core)
	}
	return true
}

// matches reports whether args have the signature's Go types.
func (sig *argSig) matches(args []any) bool {
	if len(args) != len(sig.types) {
		return false
	}
	for i, t := range sig.types {
		if efaceOf(&args[i]).typ != t {
			return false
		}
	}
	return true
}

// readScalars writes the bits of args' scalars into bits, by group, as
// bind would (scalar.go's exactScalar): the one place the fast bind and
// the launch memo read scalars.
func (sig *argSig) readScalars(args []any, bits []uint64) {
	for _, i := range sig.words {
		bits[i] = *(*uint64)(efaceOf(&args[i]).data)
	}
	for _, i := range sig.int32s {
		bits[i] = uint64(int64(*(*int32)(efaceOf(&args[i]).data)))
	}
	for _, i := range sig.uint32s {
		bits[i] = uint64(*(*uint32)(efaceOf(&args[i]).data))
	}
	for _, i := range sig.bools {
		bits[i] = 0
		if *(*bool)(efaceOf(&args[i]).data) {
			bits[i] = 1
		}
	}
}

// unbindFast undoes a fast bind that declined: it unpins what it pinned.
func (kc *kernelCore) unbindFast(cl *call) {
	for i, a := range cl.arrays {
		a.unpin()
		cl.arrays[i] = nil
	}
	cl.arrays = cl.arrays[:0]
}
