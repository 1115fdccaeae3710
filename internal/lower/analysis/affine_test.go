package analysis

import (
	"fmt"
	"strings"
	"testing"

	. "github.com/quadrants-go/qd/internal/ir"
)

// accessText is an access as "array[v+c][v+c]".
func accessText(acc AffineAccess) string {
	var sb strings.Builder
	sb.WriteString(acc.Array.Name)
	for d := range acc.Array.Dims {
		fmt.Fprintf(&sb, "[%d%+d]", acc.Key.Vars[d], acc.Consts[d])
	}
	return sb.String()
}

func TestParallelAffine(t *testing.T) {
	cases := []struct {
		name string
		body func(b *Builder, in, out *Param, i, j *Var)
		want string // the affine accesses, in order; "" for none
	}{
		{"stencil", func(b *Builder, in, out *Param, i, j *Var) {
			up := b.Decl("up", Op(Sub, Ref(i), I64c(1)))
			b.Store(out, Op(Add, Ld(in, Ref(up), Ref(j)), Ld(in, Ref(i), Op(Add, I64c(1), Ref(j)))), Ref(i), Ref(j))
		}, "out[0+0][1+0] in[0-1][1+0] in[0+0][1+1]"},
		{"transposed", func(b *Builder, in, out *Param, i, j *Var) {
			b.Store(out, Ld(in, Ref(j), Ref(i)), Ref(i), Ref(j))
		}, "out[0+0][1+0] in[1+0][0+0]"},
		{"derived local assigned later", func(b *Builder, in, out *Param, i, j *Var) {
			k := b.Decl("k", Op(Add, Ref(i), I64c(2)))
			b.Assign(k, Ref(j))
			b.Store(out, Ld(in, Ref(k), Ref(j)), Ref(i), Ref(j))
		}, "out[0+0][1+0]"},
		{"scaled", func(b *Builder, in, out *Param, i, j *Var) {
			b.Store(out, F32c(0), Op(Mul, Ref(i), I64c(2)), Ref(j))
		}, ""},
		{"atomics keep the plain address", func(b *Builder, in, out *Param, i, j *Var) {
			b.Do(AtomicE(AtomicAdd, out, F32c(1), Ref(i), Ref(j)))
		}, ""},
	}
	for _, c := range cases {
		var loop *ParallelFor
		lowered(t, func(b *Builder) {
			in, out := b.Array("in", F32, 2), b.Array("out", F32, 2)
			loop = b.Parallel2(LenOf(out, 0), LenOf(out, 1), func(i, j *Var) { c.body(b, in, out, i, j) })
		})
		aff, accs := ParallelAffine(loop)
		var got []string
		for _, acc := range accs {
			got = append(got, accessText(acc))
		}
		if s := strings.Join(got, " "); s != c.want || (aff == nil) != (c.want == "") {
			t.Errorf("%s: %q (forms %v), want %q", c.name, s, aff != nil, c.want)
		}
	}
	// A 4-D array keeps the plain address.
	var loop *ParallelFor
	lowered(t, func(b *Builder) {
		a := b.Array("a", F32, 4)
		loop = b.Parallel2(LenOf(a, 0), LenOf(a, 1), func(i, j *Var) { b.Store(a, F32c(0), Ref(i), Ref(j), I64c(0), I64c(0)) })
	})
	if aff, _ := ParallelAffine(loop); aff != nil {
		t.Error("a 4-D array has affine accesses")
	}
	// A 1-D loop, or one with a variable that is not int64, has none.
	for _, ext := range [][]Expr{{I64c(4)}, {I64c(4), I32c(4)}} {
		var loop *ParallelFor
		lowered(t, func(b *Builder) {
			out := b.Array("out", F32, 2)
			loop = b.ParallelN(ext, func(v []*Var) { b.Store(out, F32c(0), I64c(0), I64c(0)) })
		})
		if aff, _ := ParallelAffine(loop); aff != nil {
			t.Errorf("%d extents: affine forms", len(ext))
		}
	}
}

func TestSerialAffine(t *testing.T) {
	var loop *For
	var x, y, z *Param
	lowered(t, func(b *Builder) {
		x, y, z = b.Array("x", F32, 1), b.Array("y", F32, 1), b.Array("z", F32, 2)
		loop = b.ForRange("v", LenOf(x, 0), func(v *Var) {
			w := b.Decl("w", Op(Add, Ref(v), I64c(3)))
			b.Store(y, Op(Add, Ld(x, Ref(w)), Ld(x, Ref(v))), Ref(v))
			b.Store(z, F32c(0), Ref(v), Ref(v)) // not 1-D
			b.Do(AtomicE(AtomicAdd, y, F32c(1), Ref(v)))
		})
	})
	aff, arrays := SerialAffine(loop, loop.Init[0].(*Decl).Var)
	if aff == nil || len(arrays) != 2 || arrays[0] != y || arrays[1] != x {
		t.Fatalf("SerialAffine: %v, %v; want y then x", aff != nil, arrays)
	}
	w := loop.Body[0].(*Decl).Var
	if form, ok := aff.Form(Op(Sub, Ref(w), I64c(1))); !ok || form != (Index{Var: 0, C: 2}) {
		t.Errorf("form of w-1 = %+v, %v; want v+2", form, ok)
	}
	// An int32 counter has none.
	lowered(t, func(b *Builder) {
		x := b.Array("x", F32, 1)
		loop = b.ForRange("v", I32c(8), func(v *Var) { b.Store(x, F32c(0), Ref(v)) })
	})
	if aff, _ := SerialAffine(loop, loop.Init[0].(*Decl).Var); aff != nil {
		t.Error("an int32 counter has affine forms")
	}
}

func TestHoistableLoads(t *testing.T) {
	cases := []struct {
		name string
		body func(b *Builder, in, out *Param, i, j *Var)
		want int // -1: the body is not straight-line
	}{
		{"before the store", func(b *Builder, in, out *Param, i, j *Var) {
			v := b.Decl("v", Ld(in, Ref(i), Ref(j)))
			b.Store(out, Op(Add, Ref(v), Ld(in, Op(Add, Ref(i), I64c(1)), Ref(j))), Ref(i), Ref(j))
			b.Store(out, Ld(in, Ref(i), Ref(j)), Op(Add, Ref(i), I64c(1)), Ref(j)) // after the first store
		}, 2},
		{"right of &&", func(b *Builder, in, out *Param, i, j *Var) {
			c := b.Decl("c", Op(LAnd, Op(Lt, Ld(in, Ref(i), Ref(j)), F32c(0)), Op(Lt, Ld(in, Ref(j), Ref(i)), F32c(0))))
			b.Store(out, Sel(Ref(c), F32c(1), F32c(0)), Ref(i), Ref(j))
		}, 1},
		{"if", func(b *Builder, in, out *Param, i, j *Var) {
			b.If(Op(Lt, Ref(i), I64c(1)), func() { b.Store(out, F32c(0), Ref(i), Ref(j)) }, nil)
		}, -1},
		{"atomic", func(b *Builder, in, out *Param, i, j *Var) {
			b.Decl("v", AtomicE(AtomicAdd, in, F32c(1), Ref(i), Ref(j)))
			b.Store(out, Ld(in, Ref(i), Ref(j)), Ref(i), Ref(j))
		}, -1},
	}
	for _, c := range cases {
		var loop *ParallelFor
		lowered(t, func(b *Builder) {
			in, out := b.Array("in", F32, 2), b.Array("out", F32, 2)
			loop = b.Parallel2(LenOf(out, 0), LenOf(out, 1), func(i, j *Var) { c.body(b, in, out, i, j) })
		})
		aff, _ := ParallelAffine(loop)
		loads := HoistableLoads(loop.Body, aff)
		if c.want < 0 && loads != nil || c.want >= 0 && len(loads) != c.want {
			t.Errorf("%s: %d loads, want %d", c.name, len(loads), c.want)
		}
	}
	if HoistableLoads(nil, nil) != nil {
		t.Error("loads without affine forms")
	}
}
