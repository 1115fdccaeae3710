package suitekernels

import "github.com/quadrants-go/qd/internal/ir"

// Kernels over arrays of two and three dimensions.

// Alias: m[i][j] = 1 for every (i, j), and row[j] += 10.
func Alias() *ir.Kernel {
	b := ir.NewBuilder("alias")
	m := b.Array("m", ir.F32, 2)
	row := b.Array("row", ir.F32, 1)
	b.Parallel2(ir.LenOf(m, 0), ir.LenOf(m, 1), func(i, j *ir.Var) { b.Store(m, ir.F32c(1), ir.Ref(i), ir.Ref(j)) })
	b.Parallel(ir.LenOf(row, 0), func(j *ir.Var) {
		b.Store(row, ir.Op(ir.Add, ir.Ld(row, ir.Ref(j)), ir.F32c(10)), ir.Ref(j))
	})
	return b.Kernel()
}

// Diff3: out[i][j][k] = in[i][j][k+1] - in[i+1][j][k] + in[i][j+1][k]
// over all but the last index of each dimension, a 3-D loop.
func Diff3() *ir.Kernel {
	b := ir.NewBuilder("diff3")
	a3, o3 := b.Array("in", ir.F32, 3), b.Array("out", ir.F32, 3)
	one := ir.I64c(1)
	ext := []ir.Expr{ir.Op(ir.Sub, ir.LenOf(o3, 0), one), ir.Op(ir.Sub, ir.LenOf(o3, 1), one), ir.Op(ir.Sub, ir.LenOf(o3, 2), one)}
	b.ParallelN(ext, func(v []*ir.Var) {
		i, j, k := ir.Ref(v[0]), ir.Ref(v[1]), ir.Ref(v[2])
		x := ir.Op(ir.Sub, ir.Ld(a3, i, j, ir.Op(ir.Add, k, one)), ir.Ld(a3, ir.Op(ir.Add, i, one), j, k))
		b.Store(o3, ir.Op(ir.Add, x, ir.Ld(a3, i, ir.Op(ir.Add, j, one), k)), i, j, k)
	})
	return b.Kernel()
}

// Scale2: m[i][j] = 10*i + j (int64), a 2-D loop.
func Scale2() *ir.Kernel {
	b := ir.NewBuilder("scale2")
	m := b.Array("m", ir.I64, 2)
	b.Parallel2(ir.LenOf(m, 0), ir.LenOf(m, 1), func(i, j *ir.Var) {
		b.Store(m, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(i), ir.I64c(10)), ir.Ref(j)), ir.Ref(i), ir.Ref(j))
	})
	return b.Kernel()
}

// Fill3: v[i][j][k] = 100*i + 10*j + k (float64), a 3-D loop.
func Fill3() *ir.Kernel {
	b := ir.NewBuilder("fill3")
	v := b.Array("v", ir.F64, 3)
	b.ParallelN([]ir.Expr{ir.LenOf(v, 0), ir.LenOf(v, 1), ir.LenOf(v, 2)}, func(ix []*ir.Var) {
		b.Store(v, ir.Conv(ir.F64, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(ix[0]), ir.I64c(100)), ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(ix[1]), ir.I64c(10)), ir.Ref(ix[2])))), ir.Ref(ix[0]), ir.Ref(ix[1]), ir.Ref(ix[2]))
	})
	return b.Kernel()
}
