package devmath

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/quadrants-go/qd/internal/ir"
)

// The same instruction lists, rendered as C for the C-source code generator
// (package codegen/csrc): one C statement per instruction, one C local per
// virtual register, labels and gotos for the branches. Every statement does
// what the PTX instruction does, bit for bit, given the primitives below
// are exact (as their PTX counterparts are), so the C functions compute
// what the PTX ones compute and what the interpreter measured.
//
// The C text is header-free. It uses the integer types qd_u32, qd_i32,
// qd_u64, qd_i64, the function qualifier QD_MATH, and these primitives,
// which the including prelude must define (CPrimitives lists them):
//
//	double qd_fma_f64(double, double, double)   fma.rn.f64
//	double qd_sqrt_f64(double)                  sqrt.rn.f64
//	double qd_rint_f64(double)                  cvt.rni.f64.f64 (ties to even)
//	double qd_trunc_f64(double)                 cvt.rzi.f64.f64
//	double qd_floor_f64(double)                 cvt.rmi.f64.f64
//	qd_u64 qd_mulhi_u64(qd_u64, qd_u64)         mul.hi.u64
//	qd_u32 qd_clz_u64(qd_u64)                   clz.b64 (64 for 0)
//	qd_u64 qd_bits_f64(double)                  mov.b64 of an f64's bits
//	double qd_f64_from(qd_u64)                  mov.b64 to an f64
//	float  qd_f32_from(qd_u32)                  mov.b32 to an f32
//
// Everything else is plain C arithmetic with the PTX meaning spelled out
// where C's differs: shifts clamp their count (C leaves counts ≥ the width
// undefined), float-to-integer conversion saturates with NaN → 0, the
// ordered and unordered compares are written with ordered C operators.
// Floating + - * / are C operators: the caller must compile with
// contraction off (-ffp-contract=off, NVRTC --fmad=false) and IEEE
// division, as the PTX carries .rn to the same end.

// CPrimitives are the functions the C text of CFunc calls, which a prelude
// must define with the meaning documented above.
var CPrimitives = []string{
	"qd_fma_f64", "qd_sqrt_f64", "qd_rint_f64", "qd_trunc_f64", "qd_floor_f64",
	"qd_mulhi_u64", "qd_clz_u64", "qd_bits_f64", "qd_f64_from", "qd_f32_from",
}

// CFunc returns the name (Name(fn, t)) and the C definition of the function
// Func renders as PTX, from the same instruction list:
//
//	QD_MATH double __qd_sin_f64(double a)
//
// with a second parameter b for Atan2, Pow, Mod and Hypot. Like Func it
// returns an error for the intrinsics the code generator writes inline.
func CFunc(fn ir.Intrinsic, t ir.Type) (name string, def string, err error) {
	return memoized(memoKey{fn, t, true}, (*prog).renderC)
}

// cKind is the C type of a register kind.
var cKind = [nKinds]struct{ typ, prefix string }{
	kPred: {"bool", "p"},
	kB32:  {"qd_u32", "r"},
	kB64:  {"qd_u64", "rd"},
	kF32:  {"float", "f"},
	kF64:  {"double", "fd"},
}

var cParamNames = [...]string{"a", "b"}

// cOperand is o as a C expression of its kind's type.
func (p *prog) cOperand(o v) string {
	switch o.form {
	case oParam:
		return cParamNames[o.n]
	case oRet:
		return "ret"
	case oImm:
		return cImmediate(o.k, o.imm)
	}
	return fmt.Sprintf("%s%d", cKind[o.k].prefix, o.n)
}

// cImmediate writes an immediate exactly: finite floats as hexadecimal
// floating literals, other floats through their bits.
func cImmediate(k kind, bits uint64) string {
	switch k {
	case kF64:
		x := math.Float64frombits(bits)
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return fmt.Sprintf("qd_f64_from(0x%016XULL)", bits)
		}
		return "(" + strconv.FormatFloat(x, 'x', -1, 64) + ")"
	case kF32:
		x := math.Float32frombits(uint32(bits))
		if math.IsInf(float64(x), 0) || math.IsNaN(float64(x)) {
			return fmt.Sprintf("qd_f32_from(0x%08Xu)", uint32(bits))
		}
		return "(" + strconv.FormatFloat(float64(x), 'x', -1, 32) + "f)"
	case kB32:
		return fmt.Sprintf("0x%Xu", uint32(bits))
	case kPred:
		return strconv.FormatBool(bits != 0)
	}
	return fmt.Sprintf("0x%XULL", bits)
}

// cFloatCompare gives the C form of setp's float comparisons; each is
// false on NaN unless its PTX name ends in u (unordered) or is nan.
var cFloatCompare = map[string]string{
	"eq": "(%[1]s == %[2]s)", "ne": "(%[1]s < %[2]s || %[1]s > %[2]s)",
	"lt": "(%[1]s < %[2]s)", "le": "(%[1]s <= %[2]s)", "gt": "(%[1]s > %[2]s)", "ge": "(%[1]s >= %[2]s)",
	"equ": "!(%[1]s < %[2]s || %[1]s > %[2]s)", "neu": "(%[1]s != %[2]s)",
	"ltu": "!(%[1]s >= %[2]s)", "leu": "!(%[1]s > %[2]s)", "gtu": "!(%[1]s <= %[2]s)", "geu": "!(%[1]s < %[2]s)",
	"num": "(%[1]s == %[1]s && %[2]s == %[2]s)", "nan": "(%[1]s != %[1]s || %[2]s != %[2]s)",
}

var cIntCompare = map[string]string{"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}

// cTemplates give the C expression of each mnemonic over its operands
// %[1]s, %[2]s, %[3]s (setp, selp and mov are handled in cExpr).
var cTemplates = map[string]string{
	"add.rn.f64":      "%[1]s + %[2]s",
	"sub.rn.f64":      "%[1]s - %[2]s",
	"mul.rn.f64":      "%[1]s * %[2]s",
	"div.rn.f64":      "%[1]s / %[2]s",
	"fma.rn.f64":      "qd_fma_f64(%[1]s, %[2]s, %[3]s)",
	"sqrt.rn.f64":     "qd_sqrt_f64(%[1]s)",
	"neg.f64":         "-(%[1]s)",
	"abs.f64":         "qd_f64_from(qd_bits_f64(%[1]s) & 0x7FFFFFFFFFFFFFFFULL)",
	"cvt.rni.f64.f64": "qd_rint_f64(%[1]s)",
	"cvt.rzi.f64.f64": "qd_trunc_f64(%[1]s)",
	"cvt.rmi.f64.f64": "qd_floor_f64(%[1]s)",
	// PTX saturates and maps NaN to 0; C leaves out-of-range undefined.
	"cvt.rzi.s64.f64": "(qd_u64)(%[1]s >= 0x1p63 ? 0x7FFFFFFFFFFFFFFFLL : %[1]s > -0x1p63 ? (qd_i64)%[1]s : %[1]s == %[1]s ? (qd_i64)0x8000000000000000ULL : 0)",
	"cvt.rn.f64.u64":  "(double)%[1]s",
	"cvt.rn.f64.s64":  "(double)(qd_i64)%[1]s",
	"cvt.f64.f32":     "(double)%[1]s",
	"cvt.rn.f32.f64":  "(float)%[1]s",
	"cvt.u32.u64":     "(qd_u32)%[1]s",
	"cvt.u64.u32":     "(qd_u64)%[1]s",
	"add.s64":         "%[1]s + %[2]s",
	"sub.s64":         "%[1]s - %[2]s",
	"neg.s64":         "0 - %[1]s",
	"add.s32":         "%[1]s + %[2]s",
	"sub.s32":         "%[1]s - %[2]s",
	"and.b32":         "%[1]s & %[2]s",
	"and.b64":         "%[1]s & %[2]s",
	"or.b64":          "%[1]s | %[2]s",
	"xor.b64":         "%[1]s ^ %[2]s",
	"not.b64":         "~%[1]s",
	// PTX clamps shift counts to the width; C leaves them undefined.
	"shl.b64":    "((qd_u32)%[2]s >= 64u ? 0 : %[1]s << (qd_u32)%[2]s)",
	"shr.u64":    "((qd_u32)%[2]s >= 64u ? 0 : %[1]s >> (qd_u32)%[2]s)",
	"shr.s64":    "(qd_u64)((qd_i64)%[1]s >> ((qd_u32)%[2]s >= 63u ? 63u : (qd_u32)%[2]s))",
	"shr.u32":    "((qd_u32)%[2]s >= 32u ? 0 : %[1]s >> (qd_u32)%[2]s)",
	"mul.lo.u64": "%[1]s * %[2]s",
	"mul.hi.u64": "qd_mulhi_u64(%[1]s, %[2]s)",
	"rem.u64":    "%[1]s %% %[2]s",
	"clz.b64":    "qd_clz_u64(%[1]s)",
	"and.pred":   "%[1]s && %[2]s",
	"or.pred":    "%[1]s || %[2]s",
	"xor.pred":   "%[1]s != %[2]s",
	"not.pred":   "!%[1]s",
}

// cExpr is the C expression computing instruction in.
func (p *prog) cExpr(in ins) (string, error) {
	ops := make([]any, len(in.src))
	for i, s := range in.src {
		ops[i] = p.cOperand(s)
	}
	switch {
	case strings.HasPrefix(in.mn, "setp."):
		parts := strings.Split(in.mn, ".")
		if len(parts) != 3 || len(ops) != 2 {
			return "", fmt.Errorf("devmath: C rendering of %q", in.mn)
		}
		cmp, ty := parts[1], parts[2]
		if ty == "f64" {
			f, ok := cFloatCompare[cmp]
			if !ok {
				return "", fmt.Errorf("devmath: C rendering of %q", in.mn)
			}
			return fmt.Sprintf(f, ops...), nil
		}
		op, ok := cIntCompare[cmp]
		if !ok {
			return "", fmt.Errorf("devmath: C rendering of %q", in.mn)
		}
		switch ty {
		case "s64":
			return fmt.Sprintf("(qd_i64)%s %s (qd_i64)%s", ops[0], op, ops[1]), nil
		case "s32":
			return fmt.Sprintf("(qd_i32)%s %s (qd_i32)%s", ops[0], op, ops[1]), nil
		case "u64", "u32":
			return fmt.Sprintf("%s %s %s", ops[0], op, ops[1]), nil
		}
		return "", fmt.Errorf("devmath: C rendering of %q", in.mn)
	case strings.HasPrefix(in.mn, "selp."):
		return fmt.Sprintf("%s ? %s : %s", ops[2], ops[0], ops[1]), nil
	case strings.HasPrefix(in.mn, "mov."):
		// mov.b64 between an f64 and a b64 register moves the bits.
		from, to := in.src[0].k, in.dst.k
		switch {
		case from == to:
			return ops[0].(string), nil
		case from == kF64 && to == kB64:
			return fmt.Sprintf("qd_bits_f64(%s)", ops[0]), nil
		case from == kB64 && to == kF64:
			return fmt.Sprintf("qd_f64_from(%s)", ops[0]), nil
		}
		return "", fmt.Errorf("devmath: C rendering of %q from kind %d to %d", in.mn, from, to)
	}
	f, ok := cTemplates[in.mn]
	if !ok {
		return "", fmt.Errorf("devmath: no C rendering of %q", in.mn)
	}
	return fmt.Sprintf(f, ops...), nil
}

// renderC prints p as a C function.
func (p *prog) renderC() (string, error) {
	var sb strings.Builder
	t := cKind[p.fk].typ
	fmt.Fprintf(&sb, "QD_MATH %s %s(", t, p.name)
	for i := range p.nparams {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%s %s", t, cParamNames[i])
	}
	sb.WriteString(")\n{\n")
	fmt.Fprintf(&sb, "\t%s ret;\n", t)
	for k := kind(0); k < nKinds; k++ {
		if p.count[k] == 0 {
			continue
		}
		fmt.Fprintf(&sb, "\t%s", cKind[k].typ)
		for n := range p.count[k] {
			sep := ","
			if n == 0 {
				sep = ""
			}
			fmt.Fprintf(&sb, "%s %s%d", sep, cKind[k].prefix, n)
		}
		sb.WriteString(";\n")
	}
	for _, in := range p.code {
		switch in.mn {
		case "label":
			fmt.Fprintf(&sb, "L%d:;\n", in.target)
			continue
		case "bra":
			sb.WriteString("\t")
			if in.guard != nil {
				neg := ""
				if in.gneg {
					neg = "!"
				}
				fmt.Fprintf(&sb, "if (%s%s) ", neg, p.cOperand(*in.guard))
			}
			fmt.Fprintf(&sb, "goto L%d;\n", in.target)
			continue
		}
		e, err := p.cExpr(in)
		if err != nil {
			return "", fmt.Errorf("%s: %w", p.name, err)
		}
		fmt.Fprintf(&sb, "\t%s = %s;\n", p.cOperand(in.dst), e)
	}
	sb.WriteString("\treturn ret;\n}\n")
	return sb.String(), nil
}
