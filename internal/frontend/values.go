package frontend

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"github.com/quadrants-go/qd/internal/ir"
)

// The value model. A Go value of a struct or fixed-array type lives in the
// IR as its leaves: one scalar per field or element, recursively, in Go's
// order (fields in declaration order, elements by index), so that the
// fields of a struct and the elements of an array are contiguous runs of
// leaves. A local of such a type is a run of IR Vars, one per leaf, named
// after the Go path to the leaf (p.V[0]); an expression is a val, its leaves
// as IR expressions. Selecting a field or a constant element is slicing the
// run; nothing is ever in memory, which is what keeps a Mat3 in registers.

// maxValueLeaves bounds the scalars of one value. A GPU thread has at most
// 255 registers; a value beyond 256 scalars could not stay in them anyway,
// and its copies would make code grow with its size at every assignment.
const maxValueLeaves = 256

// layout is the leaf structure of a value type.
type layout struct {
	types  []ir.Type // the leaves' types, in Go's order
	names  []string  // each leaf's path from the value: "", ".X", "[1].V[0]"
	fields []int     // struct: leaf offset of each field, and the total at the end
	elem   int       // array: leaves per element
	length int       // array: number of elements
	array  bool
	scalar bool
	// named caches the leaves' full names for a local's name (p.V[0]),
	// since many locals of one type share a name.
	named map[string][]string
}

func (l *layout) size() int { return len(l.types) }

// val is a value of any kernel type: its leaves as scalar IR expressions. A
// val with a nil type stands for an expression that could not be translated
// (an error has been reported).
type val struct {
	t      types.Type
	leaves []ir.Expr
}

func (v val) bad() bool { return v.t == nil }

func scalarVal(t types.Type, e ir.Expr) val { return val{t: t, leaves: []ir.Expr{e}} }

// scalar returns the one leaf of a scalar val, or the bad expression.
func (v val) scalar() ir.Expr {
	if v.bad() || len(v.leaves) != 1 {
		return bad()
	}
	return v.leaves[0]
}

// isScalarType reports whether values of t are one IR scalar: the basic
// types kernels support and the types defined over them.
func isScalarType(t types.Type) bool {
	_, ok := basicType(t)
	return ok
}

// isAggregate reports whether t is a struct or array type (a value with
// leaves), after aliases and definitions.
func isAggregate(t types.Type) bool {
	if t == nil {
		return false
	}
	switch t.Underlying().(type) {
	case *types.Struct, *types.Array:
		return true
	}
	return false
}

// layoutOf returns the layout of the value type t, or a message saying why
// kernels cannot hold values of it ("field Name has type string: strings
// are not supported in kernels"). t must have no type parameters left.
func (fc *fileCtx) layoutOf(t types.Type) (*layout, string) {
	if l, ok := fc.layouts[t]; ok {
		return l, ""
	}
	l, why := fc.buildLayout(t, 0)
	if l != nil {
		if fc.layouts == nil {
			fc.layouts = map[types.Type]*layout{}
		}
		fc.layouts[t] = l
	}
	return l, why
}

func (fc *fileCtx) buildLayout(t types.Type, depth int) (*layout, string) {
	if depth > 32 {
		return nil, "it nests too deeply"
	}
	if it, ok := basicType(t); ok {
		return &layout{types: []ir.Type{it}, names: []string{""}, scalar: true}, ""
	}
	if t == nil {
		return nil, "it has no type"
	}
	switch u := t.Underlying().(type) {
	case *types.Struct:
		l := &layout{}
		for i := range u.NumFields() {
			f := u.Field(i)
			l.fields = append(l.fields, len(l.types))
			fl, why := fc.fieldLayout(f.Type(), depth)
			if fl == nil {
				return nil, fmt.Sprintf("field %s has type %s%s", f.Name(), fc.typeString(f.Type()), why)
			}
			if len(l.types)+fl.size() > maxValueLeaves {
				return nil, tooLarge
			}
			l.types = append(l.types, fl.types...)
			for _, n := range fl.names {
				l.names = append(l.names, "."+f.Name()+n)
			}
		}
		l.fields = append(l.fields, len(l.types))
		return l, ""
	case *types.Array:
		el, why := fc.fieldLayout(u.Elem(), depth)
		if el == nil {
			return nil, fmt.Sprintf("elements have type %s%s", fc.typeString(u.Elem()), why)
		}
		if u.Len() < 0 || u.Len()*int64(el.size()) > maxValueLeaves {
			return nil, tooLarge
		}
		l := &layout{array: true, elem: el.size(), length: int(u.Len())}
		for i := range l.length {
			l.types = append(l.types, el.types...)
			for _, n := range el.names {
				l.names = append(l.names, fmt.Sprintf("[%d]%s", i, n))
			}
		}
		return l, ""
	}
	return nil, ": " + unsupportedReason(t)
}

// tooLarge says why a value of more than maxValueLeaves scalars is refused.
var tooLarge = fmt.Sprintf(" of more than %d scalars; kernels keep local values in registers: use an array parameter for larger data", maxValueLeaves)

// fieldLayout is the layout of a field or element type, with the reason
// for a refusal prefixed so that it reads after "field F has type T".
func (fc *fileCtx) fieldLayout(t types.Type, depth int) (*layout, string) {
	if l, ok := fc.layouts[t]; ok {
		return l, ""
	}
	l, why := fc.buildLayout(t, depth+1)
	if l == nil {
		if why == tooLarge {
			return nil, why
		}
		if !strings.HasPrefix(why, ":") {
			why = ", whose " + why
		}
	}
	return l, why
}

// unsupportedReason says why t is no kernel value type and what to use.
func unsupportedReason(t types.Type) string {
	if _, ok := t.(*types.TypeParam); ok {
		return "type parameters must be instantiated"
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch u.Kind() {
		case types.String, types.UntypedString:
			return "strings are not supported in kernels"
		case types.Complex64, types.Complex128, types.UntypedComplex:
			return "complex numbers are not supported in kernels: use a pair of floats (qd.Vec2)"
		case types.UntypedNil:
			return "nil is not supported in kernels"
		case types.Uintptr, types.UnsafePointer:
			return "pointers are not supported in kernels"
		}
		return "this type is not supported in kernels"
	case *types.Slice:
		return "slices are not supported inside values: use a fixed-size array [N]T, or an array parameter"
	case *types.Pointer:
		return "pointers are not supported in kernels: store an index into an array parameter instead"
	case *types.Map:
		return "maps are not supported in kernels"
	case *types.Chan:
		return "channels are not supported in kernels"
	case *types.Interface:
		return "interfaces are not supported in kernels: use a concrete type"
	case *types.Signature:
		return "function values are not supported in kernels: call the function directly"
	}
	return "this type is not supported in kernels"
}

// typeString renders t for messages, relative to the kernel's package and
// with other packages by name (qd.Vec3[float32]).
func (fc *fileCtx) typeString(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string {
		if p == fc.pkg {
			return ""
		}
		return p.Name()
	})
}

// valueLayout is layoutOf for a value the kernel declares or computes,
// reporting a refusal at p as what's ("variable p has type Particle,
// whose field Name has type string: strings are not supported").
func (b *builder) valueLayout(t types.Type, p token.Pos, what string) (*layout, bool) {
	l, why := b.fc.layoutOf(t)
	if l == nil {
		if !strings.HasPrefix(why, ":") {
			why = ", whose " + why
		}
		if why == ", whose "+tooLarge {
			why = tooLarge
		}
		b.errorf(p, "%s has type %s%s", what, b.fc.typeString(t), why)
		return nil, false
	}
	return l, true
}

// newLeaves makes fresh locals for the leaves of a value of layout l, named
// after name, without declaring them.
func (b *builder) newLeaves(name string, l *layout) []*ir.Var {
	names := l.leafNames(name)
	vars := make([]*ir.Var, l.size())
	for i, t := range l.types {
		vars[i] = b.newVar(names[i], t)
	}
	return vars
}

// leafNames are the names of the leaves of a local called name.
func (l *layout) leafNames(name string) []string {
	if names, ok := l.named[name]; ok {
		return names
	}
	names := make([]string, len(l.names))
	for i, n := range l.names {
		names[i] = name + n
	}
	if l.named == nil {
		l.named = map[string][]string{}
	}
	l.named[name] = names
	return names
}

// layoutOr returns the layout of t, and reports a refusal at p as what()
// describes it: messages are built only when needed, since rendering
// expressions for every index made translation slow.
func (b *builder) layoutOr(t types.Type, p token.Pos, what func() string) (*layout, bool) {
	if l, _ := b.fc.layoutOf(t); l != nil {
		return l, true
	}
	return b.valueLayout(t, p, what())
}

// declLeaves declares fresh locals for a value of layout l set to v (or to
// the zero value when v is bad or has no leaves for them).
func (b *builder) declLeaves(name string, l *layout, v val, p ir.Pos) []*ir.Var {
	vars := b.newLeaves(name, l)
	init := len(v.leaves) == len(vars)
	for i, nv := range vars {
		d := &ir.Decl{Pos: p, Var: nv}
		if init {
			d.Init = b.convertTo(nv.Type, v.leaves[i])
		}
		b.emit(d)
	}
	return vars
}

// refs reads vars.
func refs(vars []*ir.Var) []ir.Expr {
	out := make([]ir.Expr, len(vars))
	for i, v := range vars {
		out[i] = &ir.VarRef{Var: v}
	}
	return out
}

// zeroVal is the zero value of a type of layout l.
func zeroVal(t types.Type, l *layout) val {
	leaves := make([]ir.Expr, l.size())
	for i, lt := range l.types {
		leaves[i] = ir.Zero(lt)
	}
	return val{t: t, leaves: leaves}
}

// badVal stands for a value of type t that could not be translated: its
// leaves, when t has a layout, are bad expressions, so that code using it
// stays consistent without reporting more.
func (b *builder) badVal(t types.Type) val {
	if t == nil {
		return val{}
	}
	l, _ := b.fc.layoutOf(t)
	if l == nil {
		return val{}
	}
	leaves := make([]ir.Expr, l.size())
	for i := range leaves {
		leaves[i] = bad()
	}
	return val{t: t, leaves: leaves}
}

// project returns the leaves [off, off+n) of v as a value of type t. Leaves
// dropped from a temporary may hold atomics, which must still happen: when
// any leaf does, every leaf with one is evaluated first, in order.
func (b *builder) project(v val, t types.Type, off, n int) val {
	if v.bad() || off < 0 || off+n > len(v.leaves) {
		return b.badVal(t)
	}
	if n < len(v.leaves) {
		for i, l := range v.leaves {
			if hasAtomic(l) {
				v.leaves[i] = b.spill(l)
			}
		}
	}
	return val{t: t, leaves: v.leaves[off : off+n]}
}

// fieldPath follows the field indices path (a Selection's Index, through
// embedded fields) from a value of type t: the leaf offset and count of the
// field, and its type.
func (b *builder) fieldPath(t types.Type, path []int) (off, n int, ft types.Type, ok bool) {
	for _, i := range path {
		if p, isPtr := t.Underlying().(*types.Pointer); isPtr {
			// An embedded pointer: layouts refuse those, so this is
			// only reached for an error already reported.
			t = p.Elem()
		}
		st, isStruct := t.Underlying().(*types.Struct)
		if !isStruct || i < 0 || i >= st.NumFields() {
			return 0, 0, nil, false
		}
		l, _ := b.fc.layoutOf(t)
		if l == nil || len(l.fields) != st.NumFields()+1 {
			return 0, 0, nil, false
		}
		off += l.fields[i]
		t = st.Field(i).Type()
		n = l.fields[i+1] - l.fields[i]
	}
	return off, n, t, true
}

// identVal reads a local or bound value of aggregate type.
func (b *builder) identVal(x *ast.Ident, t types.Type) val {
	bd := b.lookup(b.info.Uses[x])
	switch {
	case bd == nil:
		b.ident(x) // reports what the identifier is
	case bd.bad:
	case bd.ptr:
		b.errorf(x.Pos(), "%s is a pointer; kernels use pointers only as method receivers: write *%s to copy the value", x.Name, x.Name)
	case bd.agg:
		return val{t: t, leaves: refs(bd.vars)}
	case bd.ro:
		return val{t: t, leaves: append([]ir.Expr(nil), bd.vals...)}
	default:
		b.ident(x)
	}
	return b.badVal(t)
}

// derefVal reads *p, where p is a pointer receiver (or a pointer to one).
func (b *builder) derefVal(x ast.Expr, t types.Type) val {
	vars, ok := b.pointee(x, x.Pos())
	if !ok {
		return b.badVal(t)
	}
	return val{t: t, leaves: refs(vars)}
}

// pointee returns the leaves a pointer expression points to: the pointer
// receiver of a method (r), or &place. A refusal is reported at p.
func (b *builder) pointee(x ast.Expr, p token.Pos) ([]*ir.Var, bool) {
	switch e := ast.Unparen(x).(type) {
	case *ast.Ident:
		bd := b.lookup(b.info.Uses[e])
		if bd != nil && bd.bad {
			return nil, false
		}
		if bd != nil && bd.ptr {
			return bd.vars, true
		}
	case *ast.UnaryExpr:
		if e.Op == token.AND && b.isRecordAccess(e.X) {
			b.recordAddress(e.X, e.Pos())
			return nil, false
		}
		if e.Op == token.AND {
			pl, ok := b.staticPlace(e.X)
			return pl, ok
		}
	}
	b.errorf(p, "pointers are not supported in kernels, except as method receivers (p.M() with a pointer receiver)")
	return nil, false
}

// valEqual compares two values of one comparable type leaf by leaf, as Go
// compares structs and arrays: every field or element equal.
func (b *builder) valEqual(x, y val, ne bool, p token.Pos) ir.Expr {
	if x.bad() || y.bad() || len(x.leaves) != len(y.leaves) {
		return bad()
	}
	var acc ir.Expr
	for i := range x.leaves {
		l, r := x.leaves[i], b.convertTo(x.leaves[i].Type(), y.leaves[i])
		if l.Type() == ir.Invalid || r.Type() == ir.Invalid {
			return bad()
		}
		var c ir.Expr = arith(ir.Eq, l, r)
		if ne {
			c = arith(ir.Ne, l, r)
		}
		switch {
		case acc == nil:
			acc = c
		case ne:
			acc = foldBinary(ir.NewBinary(ir.LOr, acc, c))
		default:
			acc = foldBinary(ir.NewBinary(ir.LAnd, acc, c))
		}
	}
	if acc == nil {
		return ir.BoolC(!ne) // values without leaves are all equal
	}
	return acc
}

// discardVal drops a value computed for its effects.
func (b *builder) discardVal(v val) {
	for _, l := range v.leaves {
		b.discard(l)
	}
}
