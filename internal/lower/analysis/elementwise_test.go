package analysis

import (
	"testing"

	. "github.com/quadrants-go/qd/internal/ir"
)

func TestElementwise(t *testing.T) {
	cases := []struct {
		name        string
		body        func(b *Builder, x, y, d, bl *Param, i *Var)
		size        int // 0: not elementwise
		arrays, red int // how many arrays it touches and reads
	}{
		{"saxpy", func(b *Builder, x, y, d, bl *Param, i *Var) {
			b.Store(y, Op(Add, Ld(x, Ref(i)), Ld(y, Ref(i))), Ref(i))
		}, 4, 2, 2},
		{"store only", func(b *Builder, x, y, d, bl *Param, i *Var) {
			b.Store(y, F32c(1), Ref(i))
		}, 4, 1, 0},
		{"float64", func(b *Builder, x, y, d, bl *Param, i *Var) {
			b.Store(d, Op(Mul, Ld(d, Ref(i)), F64c(2)), Ref(i))
		}, 8, 1, 1},
		{"mixed sizes", func(b *Builder, x, y, d, bl *Param, i *Var) {
			b.Store(d, Conv(F64, Ld(x, Ref(i))), Ref(i))
		}, 0, 0, 0},
		{"bool", func(b *Builder, x, y, d, bl *Param, i *Var) {
			b.Store(bl, Op(Lt, Ld(x, Ref(i)), F32c(0)), Ref(i))
		}, 0, 0, 0},
		{"neighbour", func(b *Builder, x, y, d, bl *Param, i *Var) {
			b.Store(y, Ld(x, Op(Add, Ref(i), I64c(1))), Ref(i))
		}, 0, 0, 0},
		{"read after its store", func(b *Builder, x, y, d, bl *Param, i *Var) {
			b.Store(y, F32c(1), Ref(i))
			b.Store(x, Ld(y, Ref(i)), Ref(i))
		}, 0, 0, 0},
		{"two stores", func(b *Builder, x, y, d, bl *Param, i *Var) {
			b.Store(y, F32c(1), Ref(i))
			b.Store(y, F32c(2), Ref(i))
		}, 0, 0, 0},
		{"assigns its variable", func(b *Builder, x, y, d, bl *Param, i *Var) { // the verifier rejects it; Elementwise too
			b.Assign(i, Op(Add, Ref(i), I64c(1)))
			b.Store(y, F32c(1), Ref(i))
		}, 0, 0, 0},
		{"no array", func(b *Builder, x, y, d, bl *Param, i *Var) {
			b.Decl("v", Ref(i))
		}, 0, 0, 0},
	}
	for _, c := range cases {
		b := NewBuilder("k")
		x, y := b.Array("x", F32, 1), b.Array("y", F32, 1)
		d, bl := b.Array("d", F64, 1), b.Array("b", Bool, 1)
		loop := b.Parallel(LenOf(y, 0), func(i *Var) { c.body(b, x, y, d, bl, i) })
		got := Elementwise(loop)
		switch {
		case c.size == 0 && got != nil:
			t.Errorf("%s: elementwise (%+v), want not", c.name, got)
		case c.size != 0 && got == nil:
			t.Errorf("%s: not elementwise", c.name)
		case got != nil && (got.Size != c.size || len(got.Arrays) != c.arrays || len(got.Read) != c.red):
			t.Errorf("%s: size %d, %d arrays, %d read; want %d, %d, %d", c.name, got.Size, len(got.Arrays), len(got.Read), c.size, c.arrays, c.red)
		}
	}
	// Records and 8- or 16-bit elements are never elementwise.
	for _, build := range []func(b *Builder) *Param{
		func(b *Builder) *Param {
			r := b.Array("r", Invalid, 1)
			r.Rec = &Record{Name: "V", Size: 8, Align: 4, Leaves: []Leaf{{Path: "[0]", Type: F32, Offset: 0}, {Path: "[1]", Type: F32, Offset: 4}}}
			return r
		},
		func(b *Builder) *Param { return b.Array("s", I16, 1) },
	} {
		b := NewBuilder("k3")
		p := build(b)
		loop := b.Parallel(LenOf(p, 0), func(i *Var) {
			b.Store(p, Zero(p.LeafType(0)), Ref(i))
		})
		if Elementwise(loop) != nil {
			t.Errorf("%s: elementwise", p.Name)
		}
	}
	b := NewBuilder("k2")
	a := b.Array("a", F32, 2)
	loop := b.Parallel2(LenOf(a, 0), LenOf(a, 1), func(i, j *Var) { b.Store(a, F32c(0), Ref(i), Ref(j)) })
	if Elementwise(loop) != nil {
		t.Error("a 2-D loop is elementwise")
	}
}
