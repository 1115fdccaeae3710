package qd

import (
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/trace"
)

// launchWithHostSlices surrounds the kernel with the copies of its slice
// arguments on s and waits for the copies back. On a backend that can use
// host memory directly, the packed slices are the kernel's memory.
func (kc *kernelCore) launchWithHostSlices(cl *call, s *streamCore, lt launchTrace) error {
	p := kc.p
	hw, direct := p.dev.(backend.HostWrapper)
	var errs []error
	bufs := 0
	synced := false
	defer func() {
		if !direct && bufs > 0 && !synced {
			// An error left copies enqueued: wait for them before freeing
			// their buffers and letting go of the host memory.
			s.b.Synchronize()
		}
		for i := range cl.hosts[:bufs] {
			if !direct {
				cl.hosts[i].buf.Close()
			}
			cl.hosts[i] = hostCopy{}
		}
	}()
	for i := range cl.hosts {
		h := &cl.hosts[i]
		var err error
		if direct {
			h.buf, err = hw.WrapHost(h.packed, h.bytes)
		} else {
			// An empty slice still needs a valid address to pass.
			h.buf, err = p.dev.Alloc(max(h.bytes, 1))
		}
		if err != nil {
			return fmt.Errorf("qd: kernel %s: memory for a slice argument: %w", kc.name, err)
		}
		bufs++
		cl.b.Arrays[h.param].Buf = h.buf
		if !direct && h.bytes > 0 {
			in := func() error { return h.buf.CopyFromHost(s.b, h.packed, h.bytes) }
			if err := kc.copyTraced(lt, s, "copy in ", h.param, in); err != nil {
				return fmt.Errorf("qd: kernel %s: copying a slice argument in: %w", kc.name, err)
			}
		}
	}
	errs = append(errs, kc.enqueue(cl, s, nil, lt))
	if !direct {
		for _, h := range cl.hosts {
			if h.bytes > 0 {
				out := func() error { return h.buf.CopyToHost(s.b, h.packed, h.bytes) }
				errs = append(errs, kc.copyTraced(lt, s, "copy out ", h.param, out))
			}
		}
	}
	// Wait for the kernel and the copies back; Synchronize also reports the
	// kernel's own errors.
	errs = append(errs, s.b.Synchronize())
	synced = true
	for _, h := range cl.hosts {
		if h.unpack != nil {
			h.unpack()
		}
	}
	return errors.Join(errs...)
}

// copyTraced runs copy, as a span named after the parameter when tracing
// is on.
func (kc *kernelCore) copyTraced(lt launchTrace, s *streamCore, what string, param int, copy func() error) error {
	if lt.tr == nil {
		return copy()
	}
	span := trace.Span{Kernel: what + kc.name + "." + kc.plan.Kernel.Params[param].Name, Kind: "copy", Launch: lt.id, Task: -1}
	return lt.tr.timed(s, span, copy)
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

// bindSlice takes a Go slice argument of an array parameter. It returns a
// message (not an error) on mismatch, for the caller to wrap.
func bindSlice(p *ir.Param, v any, spans *[]span) (hostCopy, [4]int, string) {
	if p.Rec != nil || p.Elem.IsSmall() || p.Dims > 3 {
		return sliceReflect(p, v, spans)
	}
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
	return hostCopy{}, [4]int{}, "unsupported element type " + p.Elem.String()
}

// sliceOf takes a Go slice argument of element type T, noting its memory
// (each row's, for several dimensions) in spans.
func sliceOf[T Elem](p *ir.Param, v any, spans *[]span) (hostCopy, [4]int, string) {
	size := int(unsafe.Sizeof(*new(T)))
	want := "want " + paramTypeName(p) + ", got " + describe(v)
	switch p.Dims {
	case 1:
		s, ok := v.([]T)
		if !ok {
			return hostCopy{}, [4]int{}, want
		}
		addSpan(spans, p.Index, [2]int{-1, -1}, s)
		h := hostCopy{bytes: len(s) * size, keep: s}
		if len(s) > 0 {
			h.packed = unsafe.Pointer(&s[0])
		}
		return h, [4]int{len(s), 1, 1, 1}, ""
	case 2:
		s, ok := v.([][]T)
		if !ok {
			return hostCopy{}, [4]int{}, want
		}
		shape := [4]int{len(s), 0, 1, 1}
		if len(s) > 0 {
			shape[1] = len(s[0])
		}
		for r, row := range s {
			if len(row) != shape[1] {
				return hostCopy{}, [4]int{}, fmt.Sprintf("the slice is not rectangular: row %d has %d elements, row 0 has %d", r, len(row), shape[1])
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
			return hostCopy{}, [4]int{}, want
		}
		shape := [4]int{len(s), 0, 0, 1}
		if len(s) > 0 {
			shape[1] = len(s[0])
			if len(s[0]) > 0 {
				shape[2] = len(s[0][0])
			}
		}
		for a, plane := range s {
			if len(plane) != shape[1] {
				return hostCopy{}, [4]int{}, fmt.Sprintf("the slice is not rectangular: [%d] has %d rows, [0] has %d", a, len(plane), shape[1])
			}
			for b, row := range plane {
				if len(row) != shape[2] {
					return hostCopy{}, [4]int{}, fmt.Sprintf("the slice is not rectangular: [%d][%d] has %d elements, [0][0] has %d", a, b, len(row), shape[2])
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
	return hostCopy{}, [4]int{}, want
}

func packed[T any](flat []T, size int, unpack func()) hostCopy {
	h := hostCopy{bytes: len(flat) * size, keep: flat, unpack: unpack}
	if len(flat) > 0 {
		h.packed = unsafe.Pointer(&flat[0])
	}
	return h
}

// sliceReflect is sliceOf for element types the typed paths do not list
// (records, 8- and 16-bit integers, defined types) and for every rank: the
// slice's element type must have p's layout. A 1-D slice is the kernel's
// memory as it is; deeper ones are packed into one slice of the element
// type and unpacked after.
func sliceReflect(p *ir.Param, v any, spans *[]span) (hostCopy, [4]int, string) {
	want := "want " + paramTypeName(p) + ", got " + describe(v)
	rv := reflect.ValueOf(v)
	et := rv.Type()
	for range p.Dims {
		if et.Kind() != reflect.Slice {
			return hostCopy{}, [4]int{}, want
		}
		et = et.Elem()
	}
	if l := layoutFor(et); l.err != nil || !l.matches(p) {
		if l.err == nil {
			want += l.mismatch(p)
		}
		return hostCopy{}, [4]int{}, want
	}
	// The shape, checked rectangular along the way.
	shape := make([]int, p.Dims)
	var rows []reflect.Value // the innermost slices, in row-major order
	var walk func(x reflect.Value, d int, at []int) string
	walk = func(x reflect.Value, d int, at []int) string {
		if d == 0 || shape[d] == -1 {
			shape[d] = x.Len()
		}
		if x.Len() != shape[d] {
			return fmt.Sprintf("the slice is not rectangular: %v has %d elements, the first of its kind %d", at, x.Len(), shape[d])
		}
		if d == p.Dims-1 {
			rows = append(rows, x)
			return ""
		}
		for i := range x.Len() {
			if msg := walk(x.Index(i), d+1, append(at, i)); msg != "" {
				return msg
			}
		}
		return ""
	}
	for d := 1; d < p.Dims; d++ {
		shape[d] = -1
	}
	if msg := walk(rv, 0, nil); msg != "" {
		return hostCopy{}, [4]int{}, msg
	}
	for d := range shape {
		shape[d] = max(shape[d], 0)
	}
	size := int(et.Size())
	for i, r := range rows {
		if r.Len() > 0 {
			lo := r.Pointer()
			row := [2]int{-1, -1}
			if p.Dims > 1 {
				row = [2]int{i, -1}
			}
			*spans = append(*spans, span{lo: lo, hi: lo + uintptr(r.Len()*size), param: p.Index, row: row})
		}
	}
	var out [4]int
	copy(out[:], shape)
	for d := len(shape); d < len(out); d++ {
		out[d] = 1
	}
	if p.Dims == 1 {
		h := hostCopy{bytes: rv.Len() * size, keep: v}
		if rv.Len() > 0 {
			h.packed = unsafe.Pointer(rv.Pointer())
		}
		return h, out, ""
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	flat := reflect.MakeSlice(reflect.SliceOf(et), 0, n)
	for _, r := range rows {
		flat = reflect.AppendSlice(flat, r)
	}
	h := hostCopy{bytes: n * size, keep: flat.Interface(), unpack: func() {
		i := 0
		for _, r := range rows {
			i += reflect.Copy(r, flat.Slice(i, n))
		}
	}}
	if n > 0 {
		h.packed = unsafe.Pointer(flat.Pointer())
	}
	return h, out, ""
}
