package qd

import (
	"fmt"
	"strings"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/ir"
)

// call is the per-launch argument storage of a kernel, pooled per kernel so
// a steady stream of launches allocates little.
type call struct {
	b      backend.Args
	arrays []*ndCore  // Ndarray arguments, for use tracking
	hosts  []hostCopy // slice arguments, copied in and out around the kernel
	spans  []span     // their memory, for the alias check (alias.go)

	// Scratch of stream-parallel launches: the stream of each group and
	// the next task of each.
	streams []*streamCore
	next    []int
}

// ndArg is implemented by every *Ndarray[T].
type ndArg interface {
	core() *ndCore
	elemName() string
}

func (a *Ndarray[T]) core() *ndCore {
	if a == nil {
		return nil
	}
	return a.c
}

func (a *Ndarray[T]) elemName() string { var z T; return fmt.Sprintf("%T", z) }

// goTypeName is the Go spelling of an IR element type, for messages.
func goTypeName(t ir.Type) string {
	switch t {
	case ir.I32:
		return "int32"
	case ir.I64:
		return "int or int64"
	case ir.U32:
		return "uint32"
	case ir.U64:
		return "uint or uint64"
	case ir.F32:
		return "float32"
	case ir.F64:
		return "float64"
	case ir.Bool:
		return "bool"
	case ir.I8:
		return "int8"
	case ir.I16:
		return "int16"
	case ir.U8:
		return "uint8"
	case ir.U16:
		return "uint16"
	}
	return t.String()
}

// paramTypeName says what an array parameter takes, for messages.
func paramTypeName(p *ir.Param) string {
	if p.Dims == 0 {
		return scalarName(p)
	}
	slice := goParamType(p)
	return fmt.Sprintf("a %d-dim *Ndarray[%s] or %s", p.Dims, strings.TrimLeft(slice, "[]"), slice)
}

func (kc *kernelCore) argErr(i int, format string, args ...any) *ArgumentError {
	p := kc.plan.Kernel.Params[i]
	return &ArgumentError{Kernel: kc.name, Param: p.Name, Index: i, Msg: fmt.Sprintf(format, args...)}
}

// bind converts the launch arguments into c. The caller holds the Program's
// lifetime lock.
func (kc *kernelCore) bind(cl *call, args []any) error {
	params := kc.plan.Kernel.Params
	if len(args) != len(params) {
		return &ArgumentError{Kernel: kc.name, Index: -1,
			Msg: fmt.Sprintf("got %d arguments, want %d (%s)", len(args), len(params), signature(params))}
	}
	n := len(params)
	cl.b.Scalars = resize(cl.b.Scalars, n)
	cl.b.Arrays = resize(cl.b.Arrays, n)
	cl.arrays = cl.arrays[:0]
	cl.hosts = cl.hosts[:0]
	cl.spans = cl.spans[:0]
	for i, prm := range params {
		arg := args[i]
		if prm.Dims == 0 {
			bits, msg := scalarArg(prm, arg)
			if msg != "" {
				return kc.argErr(i, "%s", msg)
			}
			cl.b.Scalars[i] = bits
			cl.b.Arrays[i] = backend.ArrayArg{}
			continue
		}
		cl.b.Scalars[i] = 0
		if nd, ok := arg.(ndArg); ok {
			core := nd.core()
			switch {
			case core == nil:
				return kc.argErr(i, "nil Ndarray")
			case core.p != kc.p:
				e := kc.argErr(i, "the Ndarray belongs to another Program")
				e.Err = ErrForeign
				return e
			case !core.pin():
				e := kc.argErr(i, "the Ndarray is closed")
				e.Err = ErrClosed
				return e
			case !core.lay.matches(prm) || core.dims != prm.Dims:
				core.unpin()
				return kc.argErr(i, "want %s, got a %d-dim *Ndarray[%s]%s", paramTypeName(prm), core.dims, nd.elemName(), core.lay.mismatch(prm))
			}
			cl.b.Arrays[i] = backend.ArrayArg{Buf: core.buf, Shape: core.shape}
			cl.arrays = append(cl.arrays, core)
			continue
		}
		h, shape, err := bindSlice(prm, arg, &cl.spans)
		if err != "" {
			return kc.argErr(i, "%s", err)
		}
		h.param = i
		cl.b.Arrays[i] = backend.ArrayArg{Shape: shape}
		cl.hosts = append(cl.hosts, h)
	}
	return kc.checkAliases(cl.spans)
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// signature spells the kernel's parameters as Go does: (x []float32, n int).
func signature(params []*ir.Param) string {
	s := ""
	for i, p := range params {
		if i > 0 {
			s += ", "
		}
		s += p.Name + " " + goParamType(p)
	}
	return s
}

// goParamType is p's Go type: as declared, or for a kernel built with the
// IR builder, from its element type (int64 and uint64 for 64-bit integers).
func goParamType(p *ir.Param) string {
	if p.GoType != "" {
		return p.GoType
	}
	elem := goTypeName(p.Elem)
	switch p.Elem {
	case ir.I64:
		elem = "int64"
	case ir.U64:
		elem = "uint64"
	}
	return strings.Repeat("[]", p.Dims) + elem
}

func describe(v any) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprintf("%T", v)
}
