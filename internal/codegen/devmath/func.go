package devmath

import (
	"fmt"
	"sync"

	"github.com/quadrants-go/qd/internal/ir"
)

// body builds a function over f64 values: it receives the f64 arguments in
// registers and returns the f64 result register.
type body func(b *builder, args []v) v

var bodies = map[ir.Intrinsic]body{
	ir.Exp:   func(b *builder, a []v) v { return buildExp(b, a[0]) },
	ir.Exp2:  func(b *builder, a []v) v { return buildExp2(b, a[0]) },
	ir.Log:   func(b *builder, a []v) v { return buildLog(b, a[0], logE) },
	ir.Log2:  func(b *builder, a []v) v { return buildLog(b, a[0], log2) },
	ir.Log10: func(b *builder, a []v) v { return buildLog(b, a[0], log10) },
	ir.Sin:   func(b *builder, a []v) v { return buildTrig(b, a[0], trigSin) },
	ir.Cos:   func(b *builder, a []v) v { return buildTrig(b, a[0], trigCos) },
	ir.Tan:   func(b *builder, a []v) v { return buildTrig(b, a[0], trigTan) },
	ir.Asin:  func(b *builder, a []v) v { return buildAsinAcos(b, a[0], false) },
	ir.Acos:  func(b *builder, a []v) v { return buildAsinAcos(b, a[0], true) },
	ir.Atan:  func(b *builder, a []v) v { return buildAtan(b, a[0]) },
	ir.Atan2: func(b *builder, a []v) v { return buildAtan2(b, a[0], a[1]) },
	ir.Sinh:  func(b *builder, a []v) v { return buildSinh(b, a[0]) },
	ir.Cosh:  func(b *builder, a []v) v { return buildCosh(b, a[0]) },
	ir.Tanh:  func(b *builder, a []v) v { return buildTanh(b, a[0]) },
	ir.Pow:   func(b *builder, a []v) v { return buildPow(b, a[0], a[1]) },
	ir.Mod:   func(b *builder, a []v) v { return buildMod(b, a[0], a[1]) },
	ir.Hypot: func(b *builder, a []v) v { return buildHypot(b, a[0], a[1]) },
}

// Name returns the PTX name of the subroutine for fn over t, e.g.
// "__qd_sin_f64". Names start with "__qd_" so they cannot collide with
// kernel entry names.
func Name(fn ir.Intrinsic, t ir.Type) string { return fmt.Sprintf("__qd_%s_%s", fn, t) }

// Func returns the name and full PTX text of a self-contained device
// function computing fn over t (ir.F32 or ir.F64):
//
//	.func (.reg .f64 %ret) __qd_sin_f64(.reg .f64 %a)
//
// with a second parameter %b for Atan2, Pow, Mod and Hypot. The body uses
// only plain PTX instructions (no .approx, no calls, no global tables), so
// each definition stands alone: emit it once per module before the entries
// that call it; two different functions never share anything. The text is
// deterministic, so equal (fn, t) give identical definitions.
//
// Sqrt, Abs, Floor, Ceil, Trunc and Round are exact single PTX instructions
// and are not provided here (an error is returned).
func Func(fn ir.Intrinsic, t ir.Type) (name string, def string, err error) {
	return memoized(memoKey{fn, t, false}, func(p *prog) (string, error) { return p.render(), nil })
}

// rendered caches Func's and CFunc's results: building a function takes
// milliseconds for the trigonometric ones, and equal keys always give the
// same text.
var rendered sync.Map // memoKey → [2]string{name, def}

// memoKey names one rendering: the function, its type, and C or PTX.
type memoKey struct {
	fn ir.Intrinsic
	t  ir.Type
	c  bool
}

// memoized is the name and definition of k, rendered by render from the
// built function the first time.
func memoized(k memoKey, render func(*prog) (string, error)) (name, def string, err error) {
	if v, ok := rendered.Load(k); ok {
		nd := v.([2]string)
		return nd[0], nd[1], nil
	}
	p, err := build(k.fn, k.t)
	if err != nil {
		return "", "", err
	}
	if def, err = render(p); err != nil {
		return "", "", err
	}
	rendered.Store(k, [2]string{p.name, def})
	return p.name, def, nil
}

func build(fn ir.Intrinsic, t ir.Type) (*prog, error) {
	bd, ok := bodies[fn]
	if !ok {
		return nil, fmt.Errorf("devmath: %v has no subroutine (the code generator emits it inline)", fn)
	}
	var fk kind
	switch t {
	case ir.F32:
		fk = kF32
	case ir.F64:
		fk = kF64
	default:
		return nil, fmt.Errorf("devmath: %v over %v: only f32 and f64", fn, t)
	}
	b := &builder{}
	n := fn.Arity()
	args := make([]v, n)
	for i := range args {
		prm := v{k: fk, form: oParam, n: i}
		if fk == kF32 {
			// f32 functions are evaluated in f64 and rounded once at the end:
			// the f64 algorithms are accurate to ~2^-52, so the f32 result is
			// within 0.5 ulp + 2^-28 ulp of the exact value.
			args[i] = b.op("cvt.f64.f32", kF64, prm)
		} else {
			args[i] = b.op("mov.f64", kF64, prm)
		}
	}
	r := bd(b, args)
	ret := v{k: fk, form: oRet}
	if fk == kF32 {
		b.emit("cvt.rn.f32.f64", ret, r)
	} else {
		b.emit("mov.f64", ret, r)
	}
	return &prog{name: Name(fn, t), fk: fk, nparams: n, code: b.code, count: b.count, nid: b.nid}, nil
}
