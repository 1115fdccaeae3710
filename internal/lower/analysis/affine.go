package analysis

import "github.com/quadrants-go/qd/internal/ir"

// Index is the affine form of an index: loop variable number Var plus C,
// in int64 arithmetic (ring arithmetic modulo 2^64, so a generator that
// computes an address from the form gets the plain address's bits,
// overflow included).
type Index struct {
	Var int
	C   int64
}

// Key is an array indexed, dimension by dimension, by the loop variables
// Vars (each index's Index.Var): the accesses of one key differ from one
// per-trip element base by constants.
type Key struct {
	Array int // ir.Param.Index
	Vars  [3]int
}

// Affine holds the affine forms of a loop body's indices: the loop
// variables, numbered from 0, and the int64 locals the body declares as
// one of them plus or minus integer constants and never assigns.
type Affine struct {
	forms map[*ir.Var]Index
}

// AffineAccess is a load or store whose indices are all affine.
type AffineAccess struct {
	Array  *ir.Param
	Leaf   int // of a record element
	Key    Key
	Consts [3]int64 // each dimension's Index.C
}

// newAffine is the forms of body over vars, which must be int64.
func newAffine(vars []*ir.Var, body []ir.Stmt) *Affine {
	a := &Affine{forms: make(map[*ir.Var]Index, len(vars))}
	for k, v := range vars {
		a.forms[v] = Index{Var: k}
	}
	assigned := map[*ir.Var]bool{}
	ir.Inspect(body, func(n ir.Node) bool {
		if as, ok := n.(*ir.Assign); ok {
			assigned[as.Var] = true
		}
		return true
	})
	ir.Inspect(body, func(n ir.Node) bool {
		if d, ok := n.(*ir.Decl); ok && d.Var.Type == ir.I64 && !assigned[d.Var] {
			if form, ok := a.Form(d.Init); ok {
				a.forms[d.Var] = form
			}
		}
		return true
	})
	return a
}

// Form is the affine form of e, if it has one: a local with a form, plus
// or minus integer constants, in int64.
func (a *Affine) Form(e ir.Expr) (Index, bool) {
	switch e := e.(type) {
	case *ir.VarRef:
		form, ok := a.forms[e.Var]
		return form, ok
	case *ir.Binary:
		if e.Type() != ir.I64 || (e.Op != ir.Add && e.Op != ir.Sub) {
			return Index{}, false
		}
		x, xok := a.Form(e.X)
		cy, cyok := e.Y.(*ir.Const)
		if xok && cyok {
			if e.Op == ir.Sub {
				return Index{x.Var, x.C - cy.Int()}, true
			}
			return Index{x.Var, x.C + cy.Int()}, true
		}
		cx, cxok := e.X.(*ir.Const)
		y, yok := a.Form(e.Y)
		if cxok && yok && e.Op == ir.Add {
			return Index{y.Var, y.C + cx.Int()}, true
		}
	}
	return Index{}, false
}

// Access is the key and constants of arr[index...] for an array of 2 or 3
// dimensions, if every index has an affine form. A 4-dimensional array
// has none (its accesses keep the plain address). An array of records has
// the forms of its elements; the leaf's offset within the element is the
// generator's to add.
func (a *Affine) Access(arr *ir.Param, index []ir.Expr) (key Key, consts [3]int64, ok bool) {
	if !arr.IsArray() || arr.Dims < 2 || arr.Dims > 3 || len(index) != arr.Dims {
		return key, consts, false
	}
	key.Array = arr.Index
	for d, e := range index {
		form, ok := a.Form(e)
		if !ok {
			return key, consts, false
		}
		key.Vars[d], consts[d] = form.Var, form.C
	}
	return key, consts, true
}

// ParallelAffine returns the affine forms of the body of a parallel loop
// of 2 or 3 int64 variables and the loads and stores whose indices are all
// affine, in Inspect's order (atomics are not among them); nil when l has
// fewer variables, one that is not int64, or no such access.
func ParallelAffine(l *ir.ParallelFor) (*Affine, []AffineAccess) {
	if len(l.Vars) < 2 {
		return nil, nil
	}
	for _, v := range l.Vars {
		if v.Type != ir.I64 {
			return nil, nil
		}
	}
	a := newAffine(l.Vars, l.Body)
	var accs []AffineAccess
	ir.Accesses(l.Body, func(acc ir.Access) bool {
		if acc.Kind == ir.AccessUpdate {
			return true
		}
		if key, consts, ok := a.Access(acc.Array, acc.Index); ok {
			accs = append(accs, AffineAccess{Array: acc.Array, Leaf: acc.Leaf, Key: key, Consts: consts})
		}
		return true
	})
	if len(accs) == 0 {
		return nil, nil
	}
	return a, accs
}

// SerialAffine returns the affine forms of the body of a serial loop over
// the int64 counter v (variable 0) and the 1-D arrays it loads or stores
// at an affine index, each once, in the order of their first such access;
// nil when v is not int64 or there is no such array.
func SerialAffine(s *ir.For, v *ir.Var) (*Affine, []*ir.Param) {
	if v.Type != ir.I64 {
		return nil, nil
	}
	a := newAffine([]*ir.Var{v}, s.Body)
	var arrays []*ir.Param
	seen := map[int]bool{}
	ir.Accesses(s.Body, func(acc ir.Access) bool {
		arr, index := acc.Array, acc.Index
		if acc.Kind == ir.AccessUpdate || seen[arr.Index] || !arr.IsArray() || arr.Dims != 1 || len(index) != 1 {
			return true
		}
		if _, ok := a.Form(index[0]); ok {
			seen[arr.Index] = true
			arrays = append(arrays, arr)
		}
		return true
	})
	if len(arrays) == 0 {
		return nil, nil
	}
	return a, arrays
}

// HoistableLoads lists, in evaluation order, the loads of a straight-line
// parallel body (declarations, assignments and stores; no atomic, no other
// statement) that it makes before its first store and whose indices a
// serves: those may be issued before the previous iteration's stores, as
// the iterations of a parallel loop are unordered, while within the
// iteration no load moves past a store. The right operand of && and ||,
// which runs only on some iterations, contributes none. Nil when the body
// is not straight-line or a is nil.
func HoistableLoads(body []ir.Stmt, a *Affine) []*ir.Load {
	if a == nil {
		return nil
	}
	straight := true
	ir.Inspect(body, func(n ir.Node) bool {
		switch n.(type) {
		case *ir.Decl, *ir.Assign, *ir.Store:
		case ir.Stmt:
			straight = false
		case *ir.Atomic:
			straight = false
		}
		return straight
	})
	if !straight {
		return nil
	}
	var loads []*ir.Load
	var visit func(e ir.Expr)
	visit = func(e ir.Expr) {
		ir.InspectExpr(e, func(n ir.Node) bool {
			if acc, _ := ir.AccessOf(n); acc.Kind == ir.AccessRead {
				if _, _, ok := a.Access(acc.Array, acc.Index); ok {
					loads = append(loads, acc.Node.(*ir.Load))
				}
			}
			if b, ok := n.(*ir.Binary); ok && b.Op.IsLogical() { // Y runs only on some iterations
				visit(b.X)
				return false
			}
			return true
		})
	}
scan:
	for _, s := range body {
		switch s := s.(type) {
		case *ir.Decl:
			visit(s.Init)
		case *ir.Assign:
			visit(s.Value)
		case *ir.Store:
			for _, e := range s.Index {
				visit(e)
			}
			visit(s.Value)
			break scan // what follows the first store stays in place
		}
	}
	return loads
}
