package cpu

import "github.com/quadrants-go/qd/internal/ir"

// kern is one binary operator as tight loops over lane vectors, for operand
// type T and result type R: vector∘vector, vector∘scalar, scalar∘vector (nil
// when the operator is better served by broadcasting) and scalar∘scalar.
// Every loop reslices its inputs to len(d) so the compiler drops the bounds
// checks.
type kern[T, R scalar] struct {
	vv func(d []R, a, b []T)
	vs func(d []R, a []T, s T)
	sv func(d []R, s T, b []T)
	ss func(a, b T) R
}

// commute turns a vector∘scalar loop into the scalar∘vector one of a
// commutative operator.
func commute[T, R scalar](vs func(d []R, a []T, s T)) func(d []R, s T, b []T) {
	return func(d []R, s T, b []T) { vs(d, b, s) }
}

func numKern[T number](op ir.BinOp) (kern[T, T], bool) {
	switch op {
	case ir.Add:
		vs := func(d, a []T, s T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = a[i] + s
			}
		}
		return kern[T, T]{
			vv: func(d, a, b []T) {
				a, b = a[:len(d)], b[:len(d)]
				for i := range d {
					d[i] = a[i] + b[i]
				}
			},
			vs: vs, sv: commute(vs),
			ss: func(a, b T) T { return a + b },
		}, true
	case ir.Sub:
		return kern[T, T]{
			vv: func(d, a, b []T) {
				a, b = a[:len(d)], b[:len(d)]
				for i := range d {
					d[i] = a[i] - b[i]
				}
			},
			vs: func(d, a []T, s T) {
				a = a[:len(d)]
				for i := range d {
					d[i] = a[i] - s
				}
			},
			sv: func(d []T, s T, b []T) {
				b = b[:len(d)]
				for i := range d {
					d[i] = s - b[i]
				}
			},
			ss: func(a, b T) T { return a - b },
		}, true
	case ir.Mul:
		vs := func(d, a []T, s T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = a[i] * s
			}
		}
		return kern[T, T]{
			vv: func(d, a, b []T) {
				a, b = a[:len(d)], b[:len(d)]
				for i := range d {
					d[i] = a[i] * b[i]
				}
			},
			vs: vs, sv: commute(vs),
			ss: func(a, b T) T { return a * b },
		}, true
	case ir.Min:
		// Go's min: NaN if either operand is NaN, min(-0, +0) = -0
		// (gosem.MinMaxFloat); it is commutative, so one vector∘scalar
		// loop serves both orders.
		vs := func(d, a []T, s T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = min(a[i], s)
			}
		}
		return kern[T, T]{
			vv: func(d, a, b []T) {
				a, b = a[:len(d)], b[:len(d)]
				for i := range d {
					d[i] = min(a[i], b[i])
				}
			},
			vs: vs, sv: commute(vs),
			ss: func(a, b T) T { return min(a, b) },
		}, true
	case ir.Max:
		vs := func(d, a []T, s T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = max(a[i], s)
			}
		}
		return kern[T, T]{
			vv: func(d, a, b []T) {
				a, b = a[:len(d)], b[:len(d)]
				for i := range d {
					d[i] = max(a[i], b[i])
				}
			},
			vs: vs, sv: commute(vs),
			ss: func(a, b T) T { return max(a, b) },
		}, true
	}
	return kern[T, T]{}, false
}

// floatDiv is float division (integer division needs the mask and lives in
// compile_expr.go).
func floatDiv[T float]() kern[T, T] {
	return kern[T, T]{
		vv: func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] / b[i]
			}
		},
		vs: func(d, a []T, s T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = a[i] / s
			}
		},
		sv: func(d []T, s T, b []T) {
			b = b[:len(d)]
			for i := range d {
				d[i] = s / b[i]
			}
		},
		ss: func(a, b T) T { return a / b },
	}
}

func bitKern[T integer](op ir.BinOp) (kern[T, T], bool) {
	switch op {
	case ir.And:
		vs := func(d, a []T, s T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = a[i] & s
			}
		}
		return kern[T, T]{
			vv: func(d, a, b []T) {
				a, b = a[:len(d)], b[:len(d)]
				for i := range d {
					d[i] = a[i] & b[i]
				}
			},
			vs: vs, sv: commute(vs), ss: func(a, b T) T { return a & b },
		}, true
	case ir.Or:
		vs := func(d, a []T, s T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = a[i] | s
			}
		}
		return kern[T, T]{
			vv: func(d, a, b []T) {
				a, b = a[:len(d)], b[:len(d)]
				for i := range d {
					d[i] = a[i] | b[i]
				}
			},
			vs: vs, sv: commute(vs), ss: func(a, b T) T { return a | b },
		}, true
	case ir.Xor:
		vs := func(d, a []T, s T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = a[i] ^ s
			}
		}
		return kern[T, T]{
			vv: func(d, a, b []T) {
				a, b = a[:len(d)], b[:len(d)]
				for i := range d {
					d[i] = a[i] ^ b[i]
				}
			},
			vs: vs, sv: commute(vs), ss: func(a, b T) T { return a ^ b },
		}, true
	case ir.AndNot:
		return kern[T, T]{
			vv: func(d, a, b []T) {
				a, b = a[:len(d)], b[:len(d)]
				for i := range d {
					d[i] = a[i] &^ b[i]
				}
			},
			vs: func(d, a []T, s T) {
				a = a[:len(d)]
				for i := range d {
					d[i] = a[i] &^ s
				}
			},
			ss: func(a, b T) T { return a &^ b },
		}, true
	}
	return kern[T, T]{}, false
}

// eqKern is == and != for every type, bool included.
func eqKern[T scalar](op ir.BinOp) (kern[T, bool], bool) {
	switch op {
	case ir.Eq:
		vs := func(d []bool, a []T, s T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = a[i] == s
			}
		}
		return kern[T, bool]{
			vv: func(d []bool, a, b []T) {
				a, b = a[:len(d)], b[:len(d)]
				for i := range d {
					d[i] = a[i] == b[i]
				}
			},
			vs: vs, sv: commute(vs), ss: func(a, b T) bool { return a == b },
		}, true
	case ir.Ne:
		vs := func(d []bool, a []T, s T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = a[i] != s
			}
		}
		return kern[T, bool]{
			vv: func(d []bool, a, b []T) {
				a, b = a[:len(d)], b[:len(d)]
				for i := range d {
					d[i] = a[i] != b[i]
				}
			},
			vs: vs, sv: commute(vs), ss: func(a, b T) bool { return a != b },
		}, true
	}
	return kern[T, bool]{}, false
}

// ordKern is < <= > >=. The scalar∘vector form of each is the
// vector∘scalar form of its mirror (s < b ⇔ b > s).
func ordKern[T number](op ir.BinOp) (kern[T, bool], bool) {
	lt := func(d []bool, a []T, s T) {
		a = a[:len(d)]
		for i := range d {
			d[i] = a[i] < s
		}
	}
	le := func(d []bool, a []T, s T) {
		a = a[:len(d)]
		for i := range d {
			d[i] = a[i] <= s
		}
	}
	gt := func(d []bool, a []T, s T) {
		a = a[:len(d)]
		for i := range d {
			d[i] = a[i] > s
		}
	}
	ge := func(d []bool, a []T, s T) {
		a = a[:len(d)]
		for i := range d {
			d[i] = a[i] >= s
		}
	}
	switch op {
	case ir.Lt:
		return kern[T, bool]{
			vv: func(d []bool, a, b []T) {
				a, b = a[:len(d)], b[:len(d)]
				for i := range d {
					d[i] = a[i] < b[i]
				}
			},
			vs: lt, sv: commute(gt), ss: func(a, b T) bool { return a < b },
		}, true
	case ir.Le:
		return kern[T, bool]{
			vv: func(d []bool, a, b []T) {
				a, b = a[:len(d)], b[:len(d)]
				for i := range d {
					d[i] = a[i] <= b[i]
				}
			},
			vs: le, sv: commute(ge), ss: func(a, b T) bool { return a <= b },
		}, true
	case ir.Gt:
		return kern[T, bool]{
			vv: func(d []bool, a, b []T) {
				a, b = a[:len(d)], b[:len(d)]
				for i := range d {
					d[i] = a[i] > b[i]
				}
			},
			vs: gt, sv: commute(lt), ss: func(a, b T) bool { return a > b },
		}, true
	case ir.Ge:
		return kern[T, bool]{
			vv: func(d []bool, a, b []T) {
				a, b = a[:len(d)], b[:len(d)]
				for i := range d {
					d[i] = a[i] >= b[i]
				}
			},
			vs: ge, sv: commute(le), ss: func(a, b T) bool { return a >= b },
		}, true
	}
	return kern[T, bool]{}, false
}

// apply compiles x op y with the loops of k, choosing the loop by which
// operands are uniform. Operands are evaluated left to right.
func apply[T, R scalar](c *compiler, k kern[T, R], x, y *ev[T]) *ev[R] {
	if x.u != nil && y.u != nil {
		// Fold constants; spare the call of a constant operand.
		xu, yu, ss := x.u, y.u, k.ss
		switch {
		case x.k != nil && y.k != nil:
			return known(ss(*x.k, *y.k))
		case y.k != nil:
			b := *y.k
			return uni(func(f *frame) R { return ss(xu(f), b) })
		case x.k != nil:
			a := *x.k
			return uni(func(f *frame) R { return ss(a, yu(f)) })
		}
		return uni(func(f *frame) R { return ss(xu(f), yu(f)) })
	}
	var into func(f *frame, d []R) bool
	switch {
	case x.v != nil && y.v != nil:
		xv, yv, vv := x.v, y.v, k.vv
		into = func(f *frame, d []R) bool {
			a, b := xv(f), yv(f)
			if f.err != nil {
				return false
			}
			vv(d, a, b)
			return true
		}
	case y.u != nil:
		xv, yu, vs := x.v, y.u, k.vs
		into = func(f *frame, d []R) bool {
			a, s := xv(f), yu(f)
			if f.err != nil {
				return false
			}
			vs(d, a, s)
			return true
		}
	case k.sv != nil:
		xu, yv, sv := x.u, y.v, k.sv
		into = func(f *frame, d []R) bool {
			s, b := xu(f), yv(f)
			if f.err != nil {
				return false
			}
			sv(d, s, b)
			return true
		}
	default:
		xv, yv, vv := vec(c, x), y.v, k.vv
		into = func(f *frame, d []R) bool {
			a, b := xv(f), yv(f)
			if f.err != nil {
				return false
			}
			vv(d, a, b)
			return true
		}
	}
	r := c.tmp()
	return &ev[R]{into: into, v: func(f *frame) []R {
		d := reg[R](f, r)
		into(f, d)
		return d
	}}
}

// withLin keeps the contiguity of x ± uniform y (and y + x): lane k of the
// result is T(base ± y + k) in T's wrapping arithmetic.
func withLin[T integer](res *ev[T], op ir.BinOp, x, y *ev[T]) *ev[T] {
	switch {
	case x.lin != nil && y.u != nil && (op == ir.Add || op == ir.Sub):
		xl, yu := x.lin, y.u
		if op == ir.Add {
			res.lin = func(f *frame) (int64, bool) {
				b, ok := xl(f)
				return b + int64(yu(f)), ok
			}
		} else {
			res.lin = func(f *frame) (int64, bool) {
				b, ok := xl(f)
				return b - int64(yu(f)), ok
			}
		}
	case y.lin != nil && x.u != nil && op == ir.Add:
		yl, xu := y.lin, x.u
		res.lin = func(f *frame) (int64, bool) {
			b, ok := yl(f)
			return b + int64(xu(f)), ok
		}
	}
	return res
}
