package devmath

import (
	"fmt"
	"math"
	"strings"
)

// This file is the single description from which both the PTX text and the
// Go reference model come: every function is built as a list of ins (one
// PTX instruction each, named by its full PTX mnemonic). render prints the
// list as PTX; the test-only interpreter (interp_test.go) executes the same
// list with Go's IEEE arithmetic, so the accuracy measured on the model is
// the accuracy of the PTX, instruction for instruction.
//
// Every floating add/sub/mul carries an explicit .rn: PTX lets ptxas fuse
// a mul and an add that have no rounding modifier into an fma, which would
// make the device differ from the model.

// kind is a register class.
type kind uint8

const (
	kPred kind = iota
	kB32
	kB64
	kF32
	kF64
	nKinds
)

var kindDecl = [nKinds]struct{ typ, prefix string }{
	kPred: {".pred", "%p"},
	kB32:  {".b32", "%r"},
	kB64:  {".b64", "%rd"},
	kF32:  {".f32", "%f"},
	kF64:  {".f64", "%fd"},
}

// operand forms
const (
	oReg = iota
	oImm
	oParam // function parameter n (%a, %b)
	oRet   // the return register %ret
)

// v is an operand: a virtual register, an immediate, a parameter or %ret.
type v struct {
	k    kind
	form uint8
	n    int    // register number within its kind, or parameter index
	id   int    // global register id (for the interpreter), registers only
	imm  uint64 // immediate bits (f32 in the low 32 bits)
}

// ins is one PTX instruction. mn is the full mnemonic ("fma.rn.f64"), or
// "label" / "bra" (with target) for control flow. A guard predicate makes
// the instruction conditional (@%p or @!%p).
type ins struct {
	mn     string
	dst    v
	src    []v
	guard  *v
	gneg   bool
	target int // label number for "label" and "bra"
}

// builder accumulates one function.
type builder struct {
	nid   int
	count [nKinds]int
	code  []ins
	nlab  int
}

func (b *builder) reg(k kind) v {
	r := v{k: k, form: oReg, n: b.count[k], id: b.nid}
	b.count[k]++
	b.nid++
	return r
}

func (b *builder) emit(mn string, dst v, src ...v) {
	b.code = append(b.code, ins{mn: mn, dst: dst, src: src})
}

// op emits mn into a fresh register of kind k and returns it.
func (b *builder) op(mn string, k kind, src ...v) v {
	d := b.reg(k)
	b.emit(mn, d, src...)
	return d
}

// set assigns src to the existing register dst (for values defined on
// several control paths).
func (b *builder) set(dst, src v) {
	b.emit("mov"+movType(dst.k), dst, src)
}

func movType(k kind) string {
	switch k {
	case kPred:
		return ".pred"
	case kB32:
		return ".b32"
	case kB64:
		return ".b64"
	case kF32:
		return ".f32"
	}
	return ".f64"
}

func (b *builder) newLabel() int { b.nlab++; return b.nlab }
func (b *builder) label(l int)   { b.code = append(b.code, ins{mn: "label", target: l}) }
func (b *builder) bra(l int)     { b.code = append(b.code, ins{mn: "bra", target: l}) }

// braIf branches to l when p is true (neg: when p is false).
func (b *builder) braIf(p v, neg bool, l int) {
	g := p
	b.code = append(b.code, ins{mn: "bra", target: l, guard: &g, gneg: neg})
}

// ---- immediates ----

func c64(x float64) v   { return v{k: kF64, form: oImm, imm: math.Float64bits(x)} }
func u64(x uint64) v    { return v{k: kB64, form: oImm, imm: x} }
func i64(x int64) v     { return v{k: kB64, form: oImm, imm: uint64(x)} }
func u32(x uint32) v    { return v{k: kB32, form: oImm, imm: uint64(x)} }
func bits64(x uint64) v { return v{k: kF64, form: oImm, imm: x} }

// ---- f64 arithmetic ----

func (b *builder) add(x, y v) v    { return b.op("add.rn.f64", kF64, x, y) }
func (b *builder) sub(x, y v) v    { return b.op("sub.rn.f64", kF64, x, y) }
func (b *builder) mul(x, y v) v    { return b.op("mul.rn.f64", kF64, x, y) }
func (b *builder) fma(x, y, z v) v { return b.op("fma.rn.f64", kF64, x, y, z) }
func (b *builder) div(x, y v) v    { return b.op("div.rn.f64", kF64, x, y) }
func (b *builder) sqrt(x v) v      { return b.op("sqrt.rn.f64", kF64, x) }
func (b *builder) neg(x v) v       { return b.op("neg.f64", kF64, x) }
func (b *builder) abs(x v) v       { return b.op("abs.f64", kF64, x) }
func (b *builder) rni(x v) v       { return b.op("cvt.rni.f64.f64", kF64, x) } // nearest, ties even
func (b *builder) rzi(x v) v       { return b.op("cvt.rzi.f64.f64", kF64, x) } // toward zero
func (b *builder) rmi(x v) v       { return b.op("cvt.rmi.f64.f64", kF64, x) } // toward -inf

// fsetp compares f64 values; cmp is a PTX comparison (lt, ge, equ, nan, ...).
func (b *builder) fsetp(cmp string, x, y v) v { return b.op("setp."+cmp+".f64", kPred, x, y) }

// isetp compares integers; ty is s32, u32, s64 or u64.
func (b *builder) isetp(cmp, ty string, x, y v) v { return b.op("setp."+cmp+"."+ty, kPred, x, y) }

// sel returns p ? x : y.
func (b *builder) sel(p, x, y v) v {
	k := x.k
	return b.op("selp"+map[kind]string{kF64: ".f64", kF32: ".f32", kB64: ".b64", kB32: ".b32"}[k], k, x, y, p)
}

func (b *builder) and(p, q v) v { return b.op("and.pred", kPred, p, q) }
func (b *builder) or(p, q v) v  { return b.op("or.pred", kPred, p, q) }
func (b *builder) not(p v) v    { return b.op("not.pred", kPred, p) }

// ---- bits ----

func (b *builder) bitsOf(x v) v   { return b.op("mov.b64", kB64, x) } // f64 -> b64
func (b *builder) fromBits(u v) v { return b.op("mov.b64", kF64, u) } // b64 -> f64

func (b *builder) iadd(x, y v) v { return b.op("add.s64", kB64, x, y) }
func (b *builder) isub(x, y v) v { return b.op("sub.s64", kB64, x, y) }
func (b *builder) iand(x, y v) v { return b.op("and.b64", kB64, x, y) }
func (b *builder) ior(x, y v) v  { return b.op("or.b64", kB64, x, y) }
func (b *builder) ixor(x, y v) v { return b.op("xor.b64", kB64, x, y) }
func (b *builder) inot(x v) v    { return b.op("not.b64", kB64, x) }
func (b *builder) shl(x, n v) v  { return b.op("shl.b64", kB64, x, n) } // n: b32 register or immediate
func (b *builder) shr(x, n v) v  { return b.op("shr.u64", kB64, x, n) }
func (b *builder) sar(x, n v) v  { return b.op("shr.s64", kB64, x, n) }
func (b *builder) mulLo(x, y v) v {
	return b.op("mul.lo.u64", kB64, x, y)
}
func (b *builder) mulHi(x, y v) v { return b.op("mul.hi.u64", kB64, x, y) }
func (b *builder) rem(x, y v) v   { return b.op("rem.u64", kB64, x, y) }
func (b *builder) clz(x v) v      { return b.op("clz.b64", kB32, x) }
func (b *builder) lo32(x v) v     { return b.op("cvt.u32.u64", kB32, x) }
func (b *builder) iadd32(x, y v) v {
	return b.op("add.s32", kB32, x, y)
}
func (b *builder) isub32(x, y v) v { return b.op("sub.s32", kB32, x, y) }

// f64ToI64 truncates an integral f64 (PTX saturates out-of-range values and
// maps NaN to 0; callers keep the value in range).
func (b *builder) f64ToI64(x v) v { return b.op("cvt.rzi.s64.f64", kB64, x) }
func (b *builder) u64ToF64(x v) v { return b.op("cvt.rn.f64.u64", kF64, x) }
func (b *builder) i64ToF64(x v) v { return b.op("cvt.rn.f64.s64", kF64, x) }

// ---- rendering ----

// prog is one finished function.
type prog struct {
	name    string
	fk      kind // kF32 or kF64: parameter and result kind
	nparams int
	code    []ins
	count   [nKinds]int
	nid     int
}

var paramNames = [...]string{"%a", "%b"}

func (o v) String() string {
	switch o.form {
	case oParam:
		return paramNames[o.n]
	case oRet:
		return "%ret"
	case oImm:
		switch o.k {
		case kF64:
			return fmt.Sprintf("0d%016X", o.imm)
		case kF32:
			return fmt.Sprintf("0f%08X", uint32(o.imm))
		case kB32:
			if int32(o.imm) >= 0 {
				return fmt.Sprint(int32(o.imm))
			}
			return fmt.Sprintf("0x%08X", uint32(o.imm))
		default:
			if int64(o.imm) >= 0 {
				return fmt.Sprint(int64(o.imm))
			}
			return fmt.Sprintf("0x%016X", o.imm)
		}
	}
	return fmt.Sprintf("%s%d", kindDecl[o.k].prefix, o.n)
}

func (p *prog) label(n int) string { return fmt.Sprintf("$L__%s_%d", p.name, n) }

// render prints p as a PTX .func definition.
func (p *prog) render() string {
	var sb strings.Builder
	t := kindDecl[p.fk].typ
	fmt.Fprintf(&sb, ".func (.reg %s %%ret) %s(", t, p.name)
	for i := 0; i < p.nparams; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, ".reg %s %s", t, paramNames[i])
	}
	sb.WriteString(")\n{\n")
	for k := kind(0); k < nKinds; k++ {
		if p.count[k] > 0 {
			fmt.Fprintf(&sb, "\t.reg %s %s<%d>;\n", kindDecl[k].typ, kindDecl[k].prefix, p.count[k])
		}
	}
	for _, in := range p.code {
		switch in.mn {
		case "label":
			fmt.Fprintf(&sb, "%s:\n", p.label(in.target))
			continue
		case "bra":
			sb.WriteString("\t")
			if in.guard != nil {
				if in.gneg {
					fmt.Fprintf(&sb, "@!%s ", in.guard)
				} else {
					fmt.Fprintf(&sb, "@%s ", in.guard)
				}
			}
			fmt.Fprintf(&sb, "bra %s;\n", p.label(in.target))
			continue
		}
		fmt.Fprintf(&sb, "\t%s %s", in.mn, in.dst)
		for _, s := range in.src {
			fmt.Fprintf(&sb, ", %s", s)
		}
		sb.WriteString(";\n")
	}
	sb.WriteString("\tret;\n}\n")
	return sb.String()
}
