package suitekernels

import "github.com/quadrants-go/qd/internal/ir"

// Elementwise kernels: one parallel loop each.

// Fill: x[i] = v for every i, in elem ("fill").
func Fill(elem ir.Type) *ir.Kernel {
	b := ir.NewBuilder("fill")
	x := b.Array("x", elem, 1)
	v := b.Scalar("v", elem)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) { b.Store(x, ir.P(v), ir.Ref(i)) })
	return b.Kernel()
}

// Copy: dst[i] = src[i].
func Copy() *ir.Kernel {
	b := ir.NewBuilder("copy")
	src := b.Array("src", ir.F32, 1)
	dst := b.Array("dst", ir.F32, 1)
	b.Parallel(ir.LenOf(dst, 0), func(i *ir.Var) { b.Store(dst, ir.Ld(src, ir.Ref(i)), ir.Ref(i)) })
	return b.Kernel()
}

// Add: c[i] = a[i] + b[i].
func Add() *ir.Kernel {
	b := ir.NewBuilder("add")
	x := b.Array("a", ir.F32, 1)
	y := b.Array("b", ir.F32, 1)
	z := b.Array("c", ir.F32, 1)
	b.Parallel(ir.LenOf(z, 0), func(i *ir.Var) {
		b.Store(z, ir.Op(ir.Add, ir.Ld(x, ir.Ref(i)), ir.Ld(y, ir.Ref(i))), ir.Ref(i))
	})
	return b.Kernel()
}

// Double: x[i] *= 2 (float32).
func Double() *ir.Kernel {
	b := ir.NewBuilder("double")
	x := b.Array("x", ir.F32, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) { b.Store(x, ir.Op(ir.Mul, ir.Ld(x, ir.Ref(i)), ir.F32c(2)), ir.Ref(i)) })
	return b.Kernel()
}

// Axpb: x[i] = x[i]*a + b.
func Axpb() *ir.Kernel {
	b := ir.NewBuilder("axpb")
	x := b.Array("x", ir.F32, 1)
	a := b.Scalar("a", ir.F32)
	c := b.Scalar("b", ir.F32)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Store(x, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ld(x, ir.Ref(i)), ir.P(a)), ir.P(c)), ir.Ref(i))
	})
	return b.Kernel()
}

// Saxpy: y[i] = a*x[i] + y[i] over len(y) (TestArgumentErrors: a scalar
// and two arrays to pass wrongly).
func Saxpy() *ir.Kernel { return saxpy(false) }

// SaxpyN: y[i] = a*x[i] + y[i] for i < n, also named "saxpy": 4
// parameters, as the launch benchmarks want.
func SaxpyN() *ir.Kernel { return saxpy(true) }

// saxpy is Saxpy, or with withN SaxpyN.
func saxpy(withN bool) *ir.Kernel {
	b := ir.NewBuilder("saxpy")
	a := b.Scalar("a", ir.F32)
	x := b.Array("x", ir.F32, 1)
	y := b.Array("y", ir.F32, 1)
	n := ir.LenOf(y, 0)
	if withN {
		n = ir.P(b.Scalar("n", ir.I64))
	}
	b.Parallel(n, func(i *ir.Var) {
		b.Store(y, ir.Op(ir.Add, ir.Op(ir.Mul, ir.P(a), ir.Ld(x, ir.Ref(i))), ir.Ld(y, ir.Ref(i))), ir.Ref(i))
	})
	return b.Kernel()
}

// Poly: y[i] = p(x[i]), a degree-64 polynomial by Horner's rule in an inner
// serial loop: compute-bound, unlike saxpy.
func Poly() *ir.Kernel {
	b := ir.NewBuilder("poly")
	x := b.Array("x", ir.F32, 1)
	y := b.Array("y", ir.F32, 1)
	b.Parallel(ir.LenOf(y, 0), func(i *ir.Var) {
		xi := b.Decl("xi", ir.Ld(x, ir.Ref(i)))
		acc := b.Decl("acc", ir.F32c(0))
		b.ForRange("k", ir.I32c(64), func(k *ir.Var) {
			b.Assign(acc, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(acc), ir.Ref(xi)), ir.F32c(0.5)))
		})
		b.Store(y, ir.Ref(acc), ir.Ref(i))
	})
	return b.Kernel()
}

// OOB writes x[i] for i < 10 whatever x's length: an index out of range
// when x is shorter. The loop is at oob.go:3:2, the position its errors
// name.
func OOB() *ir.Kernel {
	b := ir.NewBuilder("oob")
	x := b.Array("x", ir.F32, 1)
	b.At(ir.Pos{File: "oob.go", Line: 3, Col: 2}).Parallel(ir.I64c(10), func(i *ir.Var) { b.Store(x, ir.F32c(1), ir.Ref(i)) })
	return b.Kernel()
}
