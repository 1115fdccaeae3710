package vulkan

import (
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// runUnary runs out[i] = f(x[i]) over float32 on the device.
func runUnary(t *testing.T, d *Device, name string, f func(x ir.Expr) ir.Expr, x []float32) []float32 {
	t.Helper()
	b := ir.NewBuilder(name)
	in := b.Array("x", ir.F32, 1)
	out := b.Array("out", ir.F32, 1)
	b.Parallel(ir.LenOf(in, 0), func(i *ir.Var) {
		b.Store(out, f(ir.Ld(in, ir.Ref(i))), ir.Ref(i))
	})
	plan, err := lower.Lower(b.Kernel())
	if err != nil {
		t.Fatal(err)
	}
	mod, err := d.Compile(plan, backend.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close()
	s := newStream(t, d)
	n := len(x)
	bx, bo := alloc(t, d, 4*n), alloc(t, d, 4*n)
	if err := bx.CopyFromHost(s, unsafe.Pointer(&x[0]), 4*n); err != nil {
		t.Fatal(err)
	}
	args := &backend.Args{Scalars: make([]uint64, 2), Arrays: []backend.ArrayArg{{Buf: bx, Shape: [4]int{n, 1, 1, 1}}, {Buf: bo, Shape: [4]int{n, 1, 1, 1}}}}
	l, err := mod.Begin(s, args)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Run(0, s); err != nil {
		t.Fatal(err)
	}
	l.End(s)
	got := make([]float32, n)
	if err := bo.CopyToHost(s, unsafe.Pointer(&got[0]), 4*n); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestSignedZerosAndNaN: Go's x*0 of a negative x is -0, and NaN stays
// NaN through arithmetic.
func TestSignedZerosAndNaN(t *testing.T) {
	d := openTestDevice(t)
	nan := float32(math.NaN())
	x := []float32{-1.5, 2, -0.0, nan, float32(math.Inf(1))}
	zero := &ir.Const{T: ir.F32, Bits: 0}
	for _, c := range []struct {
		name string
		f    func(ir.Expr) ir.Expr
		want func(float32) float32
	}{
		{"mul0", func(e ir.Expr) ir.Expr { return ir.Op(ir.Mul, e, zero) }, func(v float32) float32 { return v * 0 }},
		{"add", func(e ir.Expr) ir.Expr { return ir.Op(ir.Add, e, e) }, func(v float32) float32 { return v + v }},
		{"sub0", func(e ir.Expr) ir.Expr { return ir.Op(ir.Sub, e, zero) }, func(v float32) float32 { return v - 0 }},
	} {
		got := runUnary(t, d, c.name, c.f, x)
		for i, v := range x {
			w := c.want(v)
			if math.Float32bits(got[i]) != math.Float32bits(w) && !(w != w && got[i] != got[i]) {
				if c.name == "mul0" && strings.HasPrefix(d.phys.Name, "llvmpipe") {
					// lavapipe (Mesa 22.3) folds x*0 to +0 although the
					// module asks for SignedZeroInfNanPreserve
					// (docs/vulkan.md); other drivers must not.
					t.Logf("lavapipe's known defect: %s(%v) = %v, want %v", c.name, v, got[i], w)
					continue
				}
				t.Errorf("%s(%v) = %v (%#x), want %v (%#x)", c.name, v, got[i], math.Float32bits(got[i]), w, math.Float32bits(w))
			}
		}
	}
}
