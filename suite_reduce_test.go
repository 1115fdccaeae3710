package qd

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/quadrants-go/qd/internal/suitekernels"
)

// Reductions (docs/semantics.md#reductions): an atomic add, min or max whose address does not
// vary with the loop index accumulates per thread (per worker on the CPU)
// before one atomic per block. The results must be those of the plain Go
// loop: exactly for integers and for min and max (NaN included), and for
// float sums within the rounding of a reordered sum.

// reduceWant is the plain Go loop's result for op over xs starting at r0,
// as float64 (exact for every integer here); NaN propagates through min and
// max as Go's min and max do.
func reduceWant[T int32 | int64 | uint32 | uint64 | float32 | float64](op string, r0 T, xs []T) T {
	r := r0
	for _, x := range xs {
		switch op {
		case "Add":
			r += x
		case "Min":
			r = min(r, x)
		case "Max":
			r = max(r, x)
		}
	}
	return r
}

func TestReductions(t *testing.T) {
	src := suitekernels.ReduceSource()
	forEachArch(t, func(t *testing.T, p *Program) {
		m := compileModule(t, p, src, WithFilename("reduce.go"))
		for _, n := range []int{0, 1, 31, 33, 1000, 1<<18 + 7} {
			for _, op := range suitekernels.ReduceOps {
				runReduce[int32](t, p, m, op, "int32", n)
				runReduce[int64](t, p, m, op, "int64", n)
				runReduce[uint32](t, p, m, op, "uint32", n)
				runReduce[uint64](t, p, m, op, "uint64", n)
				runReduce[float32](t, p, m, op, "float32", n)
				runReduce[float64](t, p, m, op, "float64", n)
			}
		}
	})
}

// runReduce launches red_<op>_<ty> over n pseudo-random values (with a NaN
// among floats for min and max when n > 40) and compares with Go.
func runReduce[T int32 | int64 | uint32 | uint64 | float32 | float64](t *testing.T, p *Program, m *Module, op, ty string, n int) {
	t.Helper()
	name := "red_" + op + "_" + ty
	k := kernelOf(t, m, name)
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	xs := make([]T, n)
	for i := range xs {
		xs[i] = T(rng.IntN(2001)) - T(1000)/T(1) // unsigned: wraps, still exact
		if f, ok := any(&xs[i]).(*float32); ok {
			*f = float32(rng.NormFloat64())
		} else if f, ok := any(&xs[i]).(*float64); ok {
			*f = rng.NormFloat64()
		}
	}
	isFloat := ty == "float32" || ty == "float64"
	if isFloat && op != "Add" && n > 40 {
		xs[n/2] = T(math.NaN())
	}
	r0 := T(5)
	x := newNdarray[T](t, p, max(n, 1))
	if n > 0 {
		check(t, x.CopyFromHost(xs))
	}
	xa := x
	if n == 0 {
		xa = newNdarray[T](t, p, 0)
	}
	r := newNdarray[T](t, p, 1)
	check(t, r.CopyFromHost([]T{r0}))
	check(t, k.Launch(xa, r))
	got := toSlice(t, r)[0]
	want := reduceWant(op, r0, xs)
	switch {
	case isFloat && op == "Add":
		// A reordered sum: within n·eps of the sum of magnitudes.
		var mag float64
		for _, v := range xs {
			mag += math.Abs(float64(v))
		}
		eps := 1.2e-7
		if ty == "float64" {
			eps = 2.3e-16
		}
		if d := math.Abs(float64(got) - float64(want)); d > float64(n+2)*eps*(mag+5) {
			t.Errorf("%s over %d: %v, want %v (diff %g)", name, n, got, want, d)
		}
	case isFloat && math.IsNaN(float64(want)):
		if !math.IsNaN(float64(got)) {
			t.Errorf("%s over %d with a NaN: %v, want NaN", name, n, got)
		}
	default:
		if got != want {
			t.Errorf("%s over %d: %v, want %v", name, n, got, want)
		}
	}
	x.Close()
	r.Close()
}

func TestReductionsMixed(t *testing.T) {
	src := suitekernels.ReduceSource()
	forEachArch(t, func(t *testing.T, p *Program) {
		m := compileModule(t, p, src, WithFilename("reduce.go"))

		// Two reductions, one conditional, at an index from a scalar.
		xs := make([]float64, 5001)
		for i := range xs {
			xs[i] = float64(i%7) - 3
		}
		r := newNdarray[float64](t, p, 4)
		check(t, r.CopyFromHost([]float64{0, 0, 1, math.Inf(-1)}))
		k := kernelOf(t, m, "sumAndMaxPositive")
		check(t, k.Launch(xs, r, 2))
		got := toSlice(t, r)
		var sum float64
		for _, v := range xs {
			sum += v
		}
		if got[2] != 1+sum || got[3] != 3 || got[0] != 0 || got[1] != 0 {
			t.Errorf("sumAndMaxPositive: %v, want [0 0 %v 3]", got, 1+sum)
		}

		// Groups.
		a, bb := make([]int64, 3000), make([]int64, 2999)
		for i := range a {
			a[i] = int64(i)
		}
		for i := range bb {
			bb[i] = int64(1000 - i)
		}
		ri := newNdarray[int64](t, p, 2)
		check(t, ri.CopyFromHost([]int64{0, math.MaxInt64}))
		check(t, kernelOf(t, m, "groupSums").Launch(a, bb, ri))
		gi := toSlice(t, ri)
		if gi[0] != 3000*2999/2 || gi[1] != 1000-2998 {
			t.Errorf("groupSums: %v, want [%d %d]", gi, 3000*2999/2, 1000-2998)
		}

		// Row sums over a 2-D range.
		rows, cols := 37, 129
		mat := make([][]int32, rows)
		for i := range mat {
			mat[i] = make([]int32, cols)
			for j := range mat[i] {
				mat[i][j] = int32(i*j%11) - 5
			}
		}
		rs := make([]int32, rows)
		check(t, kernelOf(t, m, "rowSums").Launch(mat, rs))
		for i := range mat {
			var s int32
			for _, v := range mat[i] {
				s += v
			}
			if rs[i] != s {
				t.Fatalf("row %d: sum %d, want %d", i, rs[i], s)
			}
		}
	})
}
