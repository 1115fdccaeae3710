package spirv

import (
	"fmt"
	"strings"

	"github.com/quadrants-go/qd/internal/codegen/devmath"
	"github.com/quadrants-go/qd/internal/ir"
)

// The transcendental functions are package devmath's instruction lists,
// the ones the PTX and C generators render, rendered once more as SPIR-V
// functions: one local per virtual register, one SPIR-V instruction (or a
// few, where SPIR-V leaves a case undefined that PTX defines) per
// instruction. The lists branch freely and SPIR-V's control flow must be
// structured, so each function is a loop over a state variable: each
// straight run of instructions between labels and branches is one `if
// state == k` block of the loop's body, in list order, ending by setting
// the state of the block to run next. Forward branches, which most are,
// run in the same pass; a backward one takes another turn of the loop.

// mathFunc returns the id of the SPIR-V function computing fn over t,
// writing it into the module on first use.
func (g *gen) mathFunc(fn ir.Intrinsic, t ir.Type) ID {
	key := fmt.Sprintf("%v.%v", fn, t)
	if id, ok := g.mathFuncs[key]; ok {
		return id
	}
	l, err := devmath.ListingOf(fn, t)
	if err != nil {
		g.fail("%v", err)
	}
	m := g.m
	ft := g.typ(t)
	params := make([]ID, l.Params)
	for i := range params {
		params[i] = ft
	}
	id := m.ID()
	if g.mathFuncs == nil {
		g.mathFuncs = map[string]ID{}
	}
	g.mathFuncs[key] = id
	m.Name(id, l.Name)
	saveF, saveLoops, saveEsc := g.f, g.loops, g.escape
	g.f, g.loops, g.escape = m.NewFunction(id, ft, m.FuncType(ft, params...)), nil, 0
	f := g.f
	for i := range params {
		params[i] = f.Param(ft)
	}
	g.renderListing(l, ft, params)
	m.AddFunction(f)
	g.f, g.loops, g.escape = saveF, saveLoops, saveEsc
	return id
}

// kindType is the SPIR-V type of a devmath register class.
func (g *gen) kindType(k devmath.Kind) ID {
	switch k {
	case devmath.KindPred:
		return g.m.Bool()
	case devmath.KindB32:
		return g.m.Int(32)
	case devmath.KindB64:
		return g.m.Int(64)
	case devmath.KindF32:
		return g.m.Float(32)
	}
	return g.m.Float(64)
}

func (g *gen) renderListing(l *devmath.Listing, ft ID, params []ID) {
	f, m := g.f, g.m
	regs := make([][]ID, devmath.NumKinds)
	for k := range devmath.NumKinds {
		for range l.Regs[k] {
			regs[k] = append(regs[k], f.Var(g.kindType(devmath.Kind(k))))
		}
	}
	ret := f.Var(ft)
	state := f.Var(m.Int(32))
	// Split the list into blocks: a label starts one, a branch ends one.
	type block struct{ code []devmath.Ins }
	blocks := []block{{}}
	at := map[int]int{} // label → block
	for _, in := range l.Code {
		switch in.Op {
		case "label":
			if len(blocks[len(blocks)-1].code) > 0 {
				blocks = append(blocks, block{})
			}
			at[in.Target] = len(blocks) - 1
		case "bra":
			cur := &blocks[len(blocks)-1]
			cur.code = append(cur.code, in)
			blocks = append(blocks, block{})
		default:
			cur := &blocks[len(blocks)-1]
			cur.code = append(cur.code, in)
		}
	}
	exit := uint64(len(blocks))
	u32, b := m.Int(32), m.Bool()
	value := func(o devmath.Operand) ID {
		switch o.Form {
		case devmath.Param:
			return params[o.N]
		case devmath.Imm:
			switch o.Kind {
			case devmath.KindPred:
				return m.ConstBool(o.Bits != 0)
			case devmath.KindB32:
				return m.ConstInt(32, o.Bits)
			case devmath.KindB64:
				return m.ConstInt(64, o.Bits)
			case devmath.KindF32:
				return m.ConstFloat(32, o.Bits)
			}
			return m.ConstFloat(64, o.Bits)
		case devmath.Ret:
			g.fail("devmath: %s reads its result", l.Name)
		}
		return f.Op(OpLoad, g.kindType(o.Kind), regs[o.Kind][o.N])
	}
	f.Void(OpStore, state, m.ConstInt(32, 0))
	g.loop(nil, nil, func() {
		for k, blk := range blocks {
			g.ifThen(f.Op(OpIEqual, b, f.Op(OpLoad, u32, state), m.ConstInt(32, uint64(k))), func() {
				next := m.ConstInt(32, uint64(k+1))
				for _, in := range blk.code {
					if in.Op == "bra" {
						target, ok := at[in.Target]
						if !ok {
							g.fail("devmath: %s branches to an undefined label %d", l.Name, in.Target)
						}
						tgt := m.ConstInt(32, uint64(target))
						if in.Guard == nil {
							next = tgt
							continue
						}
						p := value(*in.Guard)
						if in.GuardNeg {
							next = f.Op(OpSelect, u32, p, next, tgt)
						} else {
							next = f.Op(OpSelect, u32, p, tgt, next)
						}
						continue
					}
					src := make([]ID, len(in.Src))
					for i, o := range in.Src {
						src[i] = value(o)
					}
					r := g.mathIns(l.Name, in, src)
					if in.Dst.Form == devmath.Ret {
						f.Void(OpStore, ret, r)
					} else {
						f.Void(OpStore, regs[in.Dst.Kind][in.Dst.N], r)
					}
				}
				f.Void(OpStore, state, next)
			})
		}
		lp := g.loops[len(g.loops)-1]
		g.ifThen(f.Op(OpUGreaterThanEqual, b, f.Op(OpLoad, u32, state), m.ConstInt(32, exit)), func() {
			lp.broken = true
			f.Branch(lp.merge)
		})
	}, func() {})
	f.Void(OpReturnValue, f.Op(OpLoad, ft, ret))
	f.Terminated = true
}

// floatCompare maps setp's float comparisons (an u suffix: true on NaN).
var floatCompare = map[string]uint32{
	"eq": OpFOrdEqual, "ne": OpFOrdNotEqual, "lt": OpFOrdLessThan, "le": OpFOrdLessThanEqual,
	"gt": OpFOrdGreaterThan, "ge": OpFOrdGreaterThanEqual,
	"equ": OpFUnordEqual, "neu": OpFUnordNotEqual, "ltu": OpFUnordLessThan, "leu": OpFUnordLessThanEqual,
	"gtu": OpFUnordGreaterThan, "geu": OpFUnordGreaterThanEqual,
}

var intCompare = map[string]ir.BinOp{"eq": ir.Eq, "ne": ir.Ne, "lt": ir.Lt, "le": ir.Le, "gt": ir.Gt, "ge": ir.Ge}

// mathIns computes one instruction of a list from its operands' values.
func (g *gen) mathIns(fn string, in devmath.Ins, src []ID) ID {
	f, m := g.f, g.m
	b := m.Bool()
	dt := g.kindType(in.Dst.Kind)
	f64 := m.Float(64)
	nc := func(id ID) ID { m.Decorate(id, DecorationNoContraction); return id }
	switch {
	case strings.HasPrefix(in.Op, "setp."):
		parts := strings.Split(in.Op, ".")
		cmp, ty := parts[1], parts[2]
		if ty == "f64" {
			switch cmp {
			case "num", "nan":
				nan := f.Op(OpLogicalOr, b, f.Op(OpIsNan, b, src[0]), f.Op(OpIsNan, b, src[1]))
				if cmp == "num" {
					return f.Op(OpLogicalNot, b, nan)
				}
				return nan
			}
			if op, ok := floatCompare[cmp]; ok {
				return f.Op(op, b, src[0], src[1])
			}
		} else if op, ok := intCompare[cmp]; ok {
			t := map[string]ir.Type{"s64": ir.I64, "s32": ir.I32, "u64": ir.U64, "u32": ir.U32}[ty]
			if t != 0 {
				return f.Op(compareOp(op, t), b, src[0], src[1])
			}
		}
	case strings.HasPrefix(in.Op, "selp."):
		return f.Op(OpSelect, dt, src[2], src[0], src[1])
	case strings.HasPrefix(in.Op, "mov."):
		if in.Src[0].Kind == in.Dst.Kind {
			return src[0]
		}
		return f.Op(OpBitcast, dt, src[0])
	}
	switch in.Op {
	case "add.rn.f64":
		return nc(f.Op(OpFAdd, f64, src[0], src[1]))
	case "sub.rn.f64":
		return nc(f.Op(OpFSub, f64, src[0], src[1]))
	case "mul.rn.f64":
		return nc(f.Op(OpFMul, f64, src[0], src[1]))
	case "div.rn.f64":
		return g.div64(src[0], src[1])
	case "fma.rn.f64":
		return f.Ext(f64, GLSLFma, src[0], src[1], src[2])
	case "sqrt.rn.f64":
		return g.sqrt64(src[0])
	case "neg.f64":
		return g.negateFloat(ir.F64, src[0])
	case "abs.f64":
		return g.abs(ir.F64, src[0])
	case "cvt.rni.f64.f64":
		return f.Ext(f64, GLSLRoundEven, src[0])
	case "cvt.rzi.f64.f64":
		return f.Ext(f64, GLSLTrunc, src[0])
	case "cvt.rmi.f64.f64":
		return f.Ext(f64, GLSLFloor, src[0])
	case "cvt.rzi.s64.f64":
		return g.floatToInt(ir.I64, ir.F64, src[0]) // PTX saturates, NaN → 0
	case "cvt.rn.f64.u64":
		return f.Op(OpConvertUToF, f64, src[0])
	case "cvt.rn.f64.s64":
		return f.Op(OpConvertSToF, f64, src[0])
	case "cvt.f64.f32", "cvt.rn.f32.f64":
		return f.Op(OpFConvert, dt, src[0])
	case "cvt.u32.u64", "cvt.u64.u32":
		return f.Op(OpUConvert, dt, src[0])
	case "add.s64", "add.s32":
		return f.Op(OpIAdd, dt, src[0], src[1])
	case "sub.s64", "sub.s32":
		return f.Op(OpISub, dt, src[0], src[1])
	case "neg.s64":
		return f.Op(OpSNegate, dt, src[0])
	case "and.b32", "and.b64":
		return f.Op(OpBitwiseAnd, dt, src[0], src[1])
	case "or.b64":
		return f.Op(OpBitwiseOr, dt, src[0], src[1])
	case "xor.b64":
		return f.Op(OpBitwiseXor, dt, src[0], src[1])
	case "not.b64":
		return f.Op(OpNot, dt, src[0])
	case "shl.b64", "shr.u64", "shr.s64", "shr.u32":
		t := map[string]ir.Type{"shl.b64": ir.U64, "shr.u64": ir.U64, "shr.s64": ir.I64, "shr.u32": ir.U32}[in.Op]
		op := ir.Shr
		if in.Op == "shl.b64" {
			op = ir.Shl
		}
		ct := ir.U32
		if in.Src[1].Kind == devmath.KindB64 {
			ct = ir.U64
		}
		return g.shift(op, t, src[0], ct, src[1]) // PTX clamps counts as Go does
	case "mul.lo.u64":
		return f.Op(OpIMul, dt, src[0], src[1])
	case "mul.hi.u64":
		i64 := m.Int(64)
		pair := m.typeOf("umulext64", OpTypeStruct, i64, i64)
		return f.Op(OpCompositeExtract, i64, f.Op(OpUMulExtended, pair, src[0], src[1]), 1)
	case "rem.u64":
		return f.Op(OpUMod, dt, src[0], src[1])
	case "clz.b64":
		return g.clz64(src[0])
	case "and.pred":
		return f.Op(OpLogicalAnd, b, src[0], src[1])
	case "or.pred":
		return f.Op(OpLogicalOr, b, src[0], src[1])
	case "xor.pred":
		return f.Op(OpLogicalNotEqual, b, src[0], src[1])
	case "not.pred":
		return f.Op(OpLogicalNot, b, src[0])
	}
	g.fail("devmath: %s: no SPIR-V rendering of %q", fn, in.Op)
	return 0
}

// clz64 counts the leading zeros of a 64-bit value (64 for 0), from
// FindUMsb of its 32-bit halves (-1 for 0).
func (g *gen) clz64(x ID) ID {
	f, m := g.f, g.m
	u32, i64, b := m.Int(32), m.Int(64), m.Bool()
	hi := f.Op(OpUConvert, u32, f.Op(OpShiftRightLogical, i64, x, m.ConstInt(64, 32)))
	lo := f.Op(OpUConvert, u32, x)
	zero := m.ConstInt(32, 0)
	fromHi := f.Op(OpISub, u32, m.ConstInt(32, 31), f.Ext(u32, GLSLFindUMsb, hi))
	fromLo := f.Op(OpISub, u32, m.ConstInt(32, 63), f.Ext(u32, GLSLFindUMsb, lo))
	r := f.Op(OpSelect, u32, f.Op(OpINotEqual, b, lo, zero), fromLo, m.ConstInt(32, 64))
	return f.Op(OpSelect, u32, f.Op(OpINotEqual, b, hi, zero), fromHi, r)
}
