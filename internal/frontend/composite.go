package frontend

import (
	"go/ast"
	"go/types"

	"github.com/quadrants-go/qd/internal/ir"
)

// composite translates a composite literal of struct or array type t:
// keyed or positional elements, nested literals with their types elided,
// and the zero value for every field or element not written. The elements
// are evaluated in source order, as Go evaluates them.
func (b *builder) composite(x *ast.CompositeLit, t types.Type) val {
	switch t.Underlying().(type) {
	case *types.Slice:
		b.errorf(x.Pos(), "slice literals are not supported in kernels; use a fixed-size array [N]T")
		return val{}
	case *types.Map:
		b.errorf(x.Pos(), "maps are not supported in kernels")
		return val{}
	}
	l, ok := b.valueLayout(t, x.Pos(), "composite literal")
	if !ok {
		return val{}
	}
	// Where each element goes: its leaf offset and count.
	type slot struct{ off, n int }
	slots := make([]slot, len(x.Elts))
	exprs := make([]ast.Expr, len(x.Elts))
	switch u := t.Underlying().(type) {
	case *types.Struct:
		for i, e := range x.Elts {
			fi := i
			if kv, isKV := e.(*ast.KeyValueExpr); isKV {
				e = kv.Value
				fi = -1
				if id, isID := kv.Key.(*ast.Ident); isID {
					for j := range u.NumFields() {
						if u.Field(j).Name() == id.Name {
							fi = j
						}
					}
				}
			}
			if fi < 0 || fi >= u.NumFields() {
				return b.badVal(t) // go/types has reported it
			}
			slots[i] = slot{l.fields[fi], l.fields[fi+1] - l.fields[fi]}
			exprs[i] = e
		}
	case *types.Array:
		next := int64(0)
		for i, e := range x.Elts {
			if kv, isKV := e.(*ast.KeyValueExpr); isKV {
				k, isConst := b.intConst(kv.Key)
				if !isConst {
					return b.badVal(t)
				}
				next, e = k, kv.Value
			}
			if next < 0 || next >= int64(l.length) {
				return b.badVal(t)
			}
			slots[i] = slot{int(next) * l.elem, l.elem}
			exprs[i] = e
			next++
		}
	default:
		b.errorf(x.Pos(), "composite literals of type %s are not supported in kernels", b.fc.typeString(t))
		return val{}
	}
	vals := b.valList(exprs)
	v := zeroVal(t, l)
	for i, ev := range vals {
		s := slots[i]
		if ev.bad() || len(ev.leaves) != s.n {
			return b.badVal(t)
		}
		for j, leaf := range ev.leaves {
			v.leaves[s.off+j] = b.convertTo(l.types[s.off+j], leaf)
		}
	}
	return v
}

// convertVal converts a value to the type t, which has the same layout
// (a Go conversion between types of identical underlying type).
func (b *builder) convertVal(v val, t types.Type, l *layout) val {
	if v.bad() || len(v.leaves) != l.size() {
		return b.badVal(t)
	}
	leaves := make([]ir.Expr, len(v.leaves))
	for i, e := range v.leaves {
		leaves[i] = b.convertTo(l.types[i], e)
	}
	return val{t: t, leaves: leaves}
}
