package devmath

import "github.com/quadrants-go/qd/internal/ir"

// Listing is a math function's instruction list as a generator outside
// this package renders it (package codegen/spirv): the very list that Func
// prints as PTX and CFunc as C, read-only.
type Listing struct {
	Name   string // Name(fn, t)
	Float  Kind   // KindF32 or KindF64: the parameters' and the result's
	Params int    // 1 or 2 (a and b)
	Regs   [NumKinds]int
	Code   []Ins
}

// Kind is a register class.
type Kind uint8

// The register classes.
const (
	KindPred Kind = Kind(kPred)
	KindB32  Kind = Kind(kB32)
	KindB64  Kind = Kind(kB64)
	KindF32  Kind = Kind(kF32)
	KindF64  Kind = Kind(kF64)
	NumKinds      = int(nKinds)
)

// Form says what an operand is.
type Form uint8

// Operand forms.
const (
	Reg   Form = oReg   // register N of its kind
	Imm   Form = oImm   // the immediate Bits (an f32's in the low 32 bits)
	Param Form = oParam // parameter N
	Ret   Form = oRet   // the result
)

// Operand is one operand of an instruction.
type Operand struct {
	Kind Kind
	Form Form
	N    int
	Bits uint64
}

// Ins is one instruction: Op is its full PTX mnemonic ("fma.rn.f64"), or
// "label" (Target is its number) or "bra" (to Target, when Guard is nil or
// Guard is true, or false with GuardNeg). Only bra has a guard.
type Ins struct {
	Op       string
	Dst      Operand
	Src      []Operand
	Guard    *Operand
	GuardNeg bool
	Target   int
}

// ListingOf returns the instruction list of fn over t (F32 or F64), the
// same Func and CFunc render; an error for the intrinsics generators write
// inline.
func ListingOf(fn ir.Intrinsic, t ir.Type) (*Listing, error) {
	p, err := build(fn, t)
	if err != nil {
		return nil, err
	}
	l := &Listing{Name: p.name, Float: Kind(p.fk), Params: p.nparams}
	for k := range nKinds {
		l.Regs[k] = p.count[k]
	}
	op := func(o v) Operand { return Operand{Kind: Kind(o.k), Form: Form(o.form), N: o.n, Bits: o.imm} }
	for _, in := range p.code {
		x := Ins{Op: in.mn, Dst: op(in.dst), Target: in.target, GuardNeg: in.gneg}
		for _, s := range in.src {
			x.Src = append(x.Src, op(s))
		}
		if in.guard != nil {
			g := op(*in.guard)
			x.Guard = &g
		}
		l.Code = append(l.Code, x)
	}
	return l, nil
}
