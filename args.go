package qd

import (
	"fmt"
	"strings"
	"unsafe"

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

// hostCopy is a Go slice argument: packed is its contiguous host memory (the
// slice itself for []T), buf its device copy, unpack writes packed back into
// a multi-dimensional slice after the kernel.
type hostCopy struct {
	param  int
	packed unsafe.Pointer
	bytes  int
	buf    backend.Buffer
	unpack func()
	keep   any // keeps packed alive while the copies run
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

func (k *kernelCore) argErr(i int, format string, args ...any) *ArgumentError {
	p := k.plan.Kernel.Params[i]
	return &ArgumentError{Kernel: k.name, Param: p.Name, Index: i, Msg: fmt.Sprintf(format, args...)}
}

// bind converts the launch arguments into c. The caller holds the Program's
// lifetime lock.
func (k *kernelCore) bind(c *call, args []any) error {
	params := k.plan.Kernel.Params
	if len(args) != len(params) {
		return &ArgumentError{Kernel: k.name, Index: -1,
			Msg: fmt.Sprintf("got %d arguments, want %d (%s)", len(args), len(params), signature(params))}
	}
	n := len(params)
	c.b.Scalars = resize(c.b.Scalars, n)
	c.b.Arrays = resize(c.b.Arrays, n)
	c.arrays = c.arrays[:0]
	c.hosts = c.hosts[:0]
	c.spans = c.spans[:0]
	for i, prm := range params {
		arg := args[i]
		if prm.Dims == 0 {
			bits, msg := scalarArg(prm, arg)
			if msg != "" {
				return k.argErr(i, "%s", msg)
			}
			c.b.Scalars[i] = bits
			c.b.Arrays[i] = backend.ArrayArg{}
			continue
		}
		c.b.Scalars[i] = 0
		if nd, ok := arg.(ndArg); ok {
			core := nd.core()
			switch {
			case core == nil:
				return k.argErr(i, "nil Ndarray")
			case core.p != k.p:
				e := k.argErr(i, "the Ndarray belongs to another Program")
				e.Err = ErrForeign
				return e
			case !core.pin():
				e := k.argErr(i, "the Ndarray is closed")
				e.Err = ErrClosed
				return e
			case core.elem != prm.Elem || core.dims != prm.Dims:
				core.unpin()
				return k.argErr(i, "want %s, got a %d-dim *Ndarray[%s]", paramTypeName(prm), core.dims, nd.elemName())
			}
			c.b.Arrays[i] = backend.ArrayArg{Buf: core.buf, Shape: core.shape}
			c.arrays = append(c.arrays, core)
			continue
		}
		h, shape, err := bindSlice(prm, arg, &c.spans)
		if err != "" {
			return k.argErr(i, "%s", err)
		}
		h.param = i
		c.b.Arrays[i] = backend.ArrayArg{Shape: shape}
		c.hosts = append(c.hosts, h)
	}
	return k.checkAliases(c.spans)
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

// bindSlice takes a Go slice argument of an array parameter. It returns a
// message (not an error) on mismatch, for the caller to wrap.
func bindSlice(p *ir.Param, v any, spans *[]span) (hostCopy, [3]int, string) {
	switch p.Elem {
	case ir.Bool:
		return sliceOf[bool](p, v, spans)
	case ir.I32:
		return sliceOf[int32](p, v, spans)
	case ir.I64:
		if h, s, msg := sliceOf[int64](p, v, spans); msg == "" {
			return h, s, msg
		}
		return sliceOf[int](p, v, spans)
	case ir.U32:
		return sliceOf[uint32](p, v, spans)
	case ir.U64:
		if h, s, msg := sliceOf[uint64](p, v, spans); msg == "" {
			return h, s, msg
		}
		return sliceOf[uint](p, v, spans)
	case ir.F32:
		return sliceOf[float32](p, v, spans)
	case ir.F64:
		return sliceOf[float64](p, v, spans)
	}
	return hostCopy{}, [3]int{}, "unsupported element type " + p.Elem.String()
}

// sliceOf takes a Go slice argument of element type T, noting its memory
// (each row's, for several dimensions) in spans.
func sliceOf[T Elem](p *ir.Param, v any, spans *[]span) (hostCopy, [3]int, string) {
	size := int(unsafe.Sizeof(*new(T)))
	want := "want " + paramTypeName(p) + ", got " + describe(v)
	switch p.Dims {
	case 1:
		s, ok := v.([]T)
		if !ok {
			return hostCopy{}, [3]int{}, want
		}
		addSpan(spans, p.Index, [2]int{-1, -1}, s)
		h := hostCopy{bytes: len(s) * size, keep: s}
		if len(s) > 0 {
			h.packed = unsafe.Pointer(&s[0])
		}
		return h, [3]int{len(s), 1, 1}, ""
	case 2:
		s, ok := v.([][]T)
		if !ok {
			return hostCopy{}, [3]int{}, want
		}
		shape := [3]int{len(s), 0, 1}
		if len(s) > 0 {
			shape[1] = len(s[0])
		}
		for r, row := range s {
			if len(row) != shape[1] {
				return hostCopy{}, [3]int{}, fmt.Sprintf("the slice is not rectangular: row %d has %d elements, row 0 has %d", r, len(row), shape[1])
			}
		}
		flat := make([]T, 0, shape[0]*shape[1])
		for r, row := range s {
			addSpan(spans, p.Index, [2]int{r, -1}, row)
			flat = append(flat, row...)
		}
		return packed(flat, size, func() {
			for r, row := range s {
				copy(row, flat[r*shape[1]:])
			}
		}), shape, ""
	case 3:
		s, ok := v.([][][]T)
		if !ok {
			return hostCopy{}, [3]int{}, want
		}
		shape := [3]int{len(s), 0, 0}
		if len(s) > 0 {
			shape[1] = len(s[0])
			if len(s[0]) > 0 {
				shape[2] = len(s[0][0])
			}
		}
		for a, plane := range s {
			if len(plane) != shape[1] {
				return hostCopy{}, [3]int{}, fmt.Sprintf("the slice is not rectangular: [%d] has %d rows, [0] has %d", a, len(plane), shape[1])
			}
			for b, row := range plane {
				if len(row) != shape[2] {
					return hostCopy{}, [3]int{}, fmt.Sprintf("the slice is not rectangular: [%d][%d] has %d elements, [0][0] has %d", a, b, len(row), shape[2])
				}
			}
		}
		flat := make([]T, 0, shape[0]*shape[1]*shape[2])
		for a, plane := range s {
			for b, row := range plane {
				addSpan(spans, p.Index, [2]int{a, b}, row)
				flat = append(flat, row...)
			}
		}
		return packed(flat, size, func() {
			i := 0
			for _, plane := range s {
				for _, row := range plane {
					i += copy(row, flat[i:])
				}
			}
		}), shape, ""
	}
	return hostCopy{}, [3]int{}, want
}

func packed[T any](flat []T, size int, unpack func()) hostCopy {
	h := hostCopy{bytes: len(flat) * size, keep: flat, unpack: unpack}
	if len(flat) > 0 {
		h.packed = unsafe.Pointer(&flat[0])
	}
	return h
}
