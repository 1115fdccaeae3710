package vulkan

import (
	"fmt"
	"testing"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/codegen/gosem"
	"github.com/quadrants-go/qd/internal/lower"
)

// TestGoSemantics runs the whole table of Go-semantics rules (package
// codegen/gosem) through the SPIR-V generator on the device: each case's
// kernel with scalar parameters, with constants a driver's compiler may
// fold, and as lanes of a parallel loop.
func TestGoSemantics(t *testing.T) {
	d := openTestDevice(t)
	s := newStream(t, d)
	for _, form := range []gosem.Form{gosem.Params, gosem.Consts, gosem.Lanes} {
		i := 0
		for _, err := range gosem.Verify(gosem.SPIRV, func(c gosem.Case) gosem.Result {
			i++
			return runCase(t, d, s, c, form, fmt.Sprintf("case%d", i))
		}) {
			t.Errorf("%v: %v", form, err)
		}
	}
}

// runCase compiles c's kernel in form f, runs it and reads out[0].
func runCase(t *testing.T, d *Device, s *Stream, c gosem.Case, f gosem.Form, name string) gosem.Result {
	t.Helper()
	plan, err := lower.Lower(c.Kernel(name, f))
	if err != nil {
		return gosem.Result{Err: err}
	}
	mod, err := d.Compile(plan, backend.CompileOptions{})
	if err != nil {
		return gosem.Result{Err: err}
	}
	defer mod.Close()
	size := func(bytes int) int { return max(bytes, 1) }
	one := [4]int{1, 1, 1, 1}
	args := &backend.Args{Scalars: make([]uint64, len(plan.Kernel.Params)), Arrays: make([]backend.ArrayArg, len(plan.Kernel.Params))}
	var out backend.Buffer
	for _, p := range plan.Kernel.Params {
		switch {
		case !p.IsArray() && p.Name == "a":
			args.Scalars[p.Index] = c.A
		case !p.IsArray() && p.Name == "b":
			args.Scalars[p.Index] = c.B
		case p.IsArray():
			buf := alloc(t, d, 8)
			val := uint64(0)
			switch p.Name {
			case "x":
				val = c.A
			case "y":
				val = c.B
			}
			bytes := make([]byte, 8)
			for k := range bytes {
				bytes[k] = byte(val >> (8 * k))
			}
			write(t, s, buf, bytes[:size(p.Elem.Size())])
			args.Arrays[p.Index] = backend.ArrayArg{Buf: buf, Shape: one}
			if p.Name == "out" {
				out = buf
			}
		}
	}
	l, err := mod.Begin(s, args)
	if err != nil {
		return gosem.Result{Err: err}
	}
	for ti := range plan.Tasks {
		if err := l.Run(ti, s); err != nil {
			return gosem.Result{Err: err}
		}
	}
	l.End(s)
	if err := s.Synchronize(); err != nil {
		return gosem.Result{Err: err}
	}
	got := read(t, s, out, 8)
	var bits uint64
	n := c.Result().Size()
	for k := range n {
		bits |= uint64(got[k]) << (8 * k)
	}
	// Sign-extend signed results, as ir.Const holds them.
	if rt := c.Result(); rt.IsSigned() && n < 8 {
		shift := 64 - 8*n
		bits = uint64(int64(bits<<shift) >> shift)
	}
	return gosem.Result{Bits: bits}
}
