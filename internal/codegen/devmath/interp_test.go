package devmath

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// This is the Go reference model: it executes a prog's instruction list with
// PTX semantics, one IEEE operation per instruction (math.FMA for fma.rn,
// explicit conversions so Go never fuses), so the PTX text and the model
// cannot drift apart.

type machine struct {
	r    []uint64
	args [2]uint64
	ret  uint64
}

type step func(m *machine) int // next pc, or -1 for the following one

type compiled struct {
	p     *prog
	steps []step
}

func f(u uint64) float64  { return math.Float64frombits(u) }
func fb(x float64) uint64 { return math.Float64bits(x) }
func b2u(p bool) uint64 {
	if p {
		return 1
	}
	return 0
}

func (c *compiled) reader(o v) func(m *machine) uint64 {
	switch o.form {
	case oImm:
		x := o.imm
		if o.k == kF32 || o.k == kB32 {
			x &= 0xFFFFFFFF
		}
		return func(*machine) uint64 { return x }
	case oParam:
		n := o.n
		return func(m *machine) uint64 { return m.args[n] }
	case oReg:
		id := o.id
		return func(m *machine) uint64 { return m.r[id] }
	}
	panic("bad operand")
}

func (c *compiled) writer(o v) func(m *machine, x uint64) {
	switch o.form {
	case oRet:
		return func(m *machine, x uint64) { m.ret = x }
	case oReg:
		id := o.id
		return func(m *machine, x uint64) { m.r[id] = x }
	}
	panic("bad destination")
}

func fcmp(cmp string, a, b float64) bool {
	un := math.IsNaN(a) || math.IsNaN(b)
	switch cmp {
	case "eq":
		return a == b
	case "ne":
		return !un && a != b
	case "lt":
		return a < b
	case "le":
		return a <= b
	case "gt":
		return a > b
	case "ge":
		return a >= b
	case "equ":
		return un || a == b
	case "neu":
		return a != b
	case "ltu":
		return un || a < b
	case "leu":
		return un || a <= b
	case "gtu":
		return un || a > b
	case "geu":
		return un || a >= b
	case "num":
		return !un
	case "nan":
		return un
	}
	panic("fcmp " + cmp)
}

func icmp(cmp, ty string, a, b uint64) bool {
	var lt, eq bool
	switch ty {
	case "s64":
		lt = int64(a) < int64(b)
	case "u64":
		lt = a < b
	case "s32":
		lt = int32(a) < int32(b)
	case "u32":
		lt = uint32(a) < uint32(b)
	}
	if strings.HasSuffix(ty, "32") {
		eq = uint32(a) == uint32(b)
	} else {
		eq = a == b
	}
	switch cmp {
	case "eq":
		return eq
	case "ne":
		return !eq
	case "lt":
		return lt
	case "le":
		return lt || eq
	case "gt":
		return !lt && !eq
	case "ge":
		return !lt
	}
	panic("icmp " + cmp)
}

// f2i converts with PTX semantics: NaN → 0, out of range saturates.
func f2i(x float64) uint64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= 0x1p63:
		return math.MaxInt64
	case x < -0x1p63:
		return 1 << 63
	}
	return uint64(int64(x))
}

// alu returns the operation for a mnemonic on up to three operands.
func alu(mn string) func(a, b, c uint64) uint64 {
	if strings.HasPrefix(mn, "setp.") {
		parts := strings.Split(mn, ".")
		cmp, ty := parts[1], parts[2]
		if ty == "f64" {
			return func(a, b, _ uint64) uint64 { return b2u(fcmp(cmp, f(a), f(b))) }
		}
		return func(a, b, _ uint64) uint64 { return b2u(icmp(cmp, ty, a, b)) }
	}
	if strings.HasPrefix(mn, "selp.") {
		return func(a, b, p uint64) uint64 {
			if p != 0 {
				return a
			}
			return b
		}
	}
	if strings.HasPrefix(mn, "mov.") {
		return func(a, _, _ uint64) uint64 { return a }
	}
	switch mn {
	case "add.rn.f64":
		return func(a, b, _ uint64) uint64 { return fb(f(a) + f(b)) }
	case "sub.rn.f64":
		return func(a, b, _ uint64) uint64 { return fb(f(a) - f(b)) }
	case "mul.rn.f64":
		return func(a, b, _ uint64) uint64 { return fb(f(a) * f(b)) }
	case "div.rn.f64":
		return func(a, b, _ uint64) uint64 { return fb(f(a) / f(b)) }
	case "fma.rn.f64":
		return func(a, b, c uint64) uint64 { return fb(math.FMA(f(a), f(b), f(c))) }
	case "sqrt.rn.f64":
		return func(a, _, _ uint64) uint64 { return fb(math.Sqrt(f(a))) }
	case "neg.f64":
		return func(a, _, _ uint64) uint64 { return a ^ 1<<63 }
	case "abs.f64":
		return func(a, _, _ uint64) uint64 { return a &^ (1 << 63) }
	case "cvt.rni.f64.f64":
		return func(a, _, _ uint64) uint64 { return fb(math.RoundToEven(f(a))) }
	case "cvt.rzi.f64.f64":
		return func(a, _, _ uint64) uint64 { return fb(math.Trunc(f(a))) }
	case "cvt.rmi.f64.f64":
		return func(a, _, _ uint64) uint64 { return fb(math.Floor(f(a))) }
	case "cvt.rzi.s64.f64":
		return func(a, _, _ uint64) uint64 { return f2i(math.Trunc(f(a))) }
	case "cvt.rn.f64.u64":
		return func(a, _, _ uint64) uint64 { return fb(float64(a)) }
	case "cvt.rn.f64.s64":
		return func(a, _, _ uint64) uint64 { return fb(float64(int64(a))) }
	case "cvt.f64.f32":
		return func(a, _, _ uint64) uint64 { return fb(float64(math.Float32frombits(uint32(a)))) }
	case "cvt.rn.f32.f64":
		return func(a, _, _ uint64) uint64 { return uint64(math.Float32bits(float32(f(a)))) }
	case "cvt.u32.u64":
		return func(a, _, _ uint64) uint64 { return a & 0xFFFFFFFF }
	case "add.s64":
		return func(a, b, _ uint64) uint64 { return a + b }
	case "sub.s64":
		return func(a, b, _ uint64) uint64 { return a - b }
	case "shr.u32":
		return func(a, n, _ uint64) uint64 { return uint64(uint32(a) >> uint32(n)) }
	case "and.b32":
		return func(a, b, _ uint64) uint64 { return uint64(uint32(a) & uint32(b)) }
	case "cvt.u64.u32":
		return func(a, _, _ uint64) uint64 { return a & 0xFFFFFFFF }
	case "neg.s64":
		return func(a, _, _ uint64) uint64 { return -a }
	case "add.s32":
		return func(a, b, _ uint64) uint64 { return uint64(uint32(a) + uint32(b)) }
	case "sub.s32":
		return func(a, b, _ uint64) uint64 { return uint64(uint32(a) - uint32(b)) }
	case "and.b64":
		return func(a, b, _ uint64) uint64 { return a & b }
	case "or.b64":
		return func(a, b, _ uint64) uint64 { return a | b }
	case "xor.b64":
		return func(a, b, _ uint64) uint64 { return a ^ b }
	case "not.b64":
		return func(a, _, _ uint64) uint64 { return ^a }
	case "shl.b64":
		return func(a, n, _ uint64) uint64 { return a << uint32(n) }
	case "shr.u64":
		return func(a, n, _ uint64) uint64 { return a >> uint32(n) }
	case "shr.s64":
		return func(a, n, _ uint64) uint64 { return uint64(int64(a) >> uint32(n)) }
	case "mul.lo.u64":
		return func(a, b, _ uint64) uint64 { return a * b }
	case "mul.hi.u64":
		return func(a, b, _ uint64) uint64 { h, _ := bits.Mul64(a, b); return h }
	case "rem.u64":
		return func(a, b, _ uint64) uint64 { return a % b }
	case "clz.b64":
		return func(a, _, _ uint64) uint64 { return uint64(bits.LeadingZeros64(a)) }
	case "and.pred":
		return func(a, b, _ uint64) uint64 { return a & b }
	case "or.pred":
		return func(a, b, _ uint64) uint64 { return a | b }
	case "xor.pred":
		return func(a, b, _ uint64) uint64 { return a ^ b }
	case "not.pred":
		return func(a, _, _ uint64) uint64 { return a ^ 1 }
	}
	panic("interp: unknown mnemonic " + mn)
}

func compile(p *prog) *compiled {
	c := &compiled{p: p}
	labels := map[int]int{}
	for i, in := range p.code {
		if in.mn == "label" {
			labels[in.target] = i
		}
	}
	zero := func(*machine) uint64 { return 0 }
	for _, in := range p.code {
		in := in
		switch in.mn {
		case "label":
			c.steps = append(c.steps, func(*machine) int { return -1 })
			continue
		case "bra":
			to, ok := labels[in.target]
			if !ok {
				panic(fmt.Sprintf("%s: undefined label %d", p.name, in.target))
			}
			if in.guard == nil {
				c.steps = append(c.steps, func(*machine) int { return to })
				continue
			}
			g, neg := c.reader(*in.guard), in.gneg
			c.steps = append(c.steps, func(m *machine) int {
				if (g(m) != 0) != neg {
					return to
				}
				return -1
			})
			continue
		}
		op := alu(in.mn)
		rd := [3]func(*machine) uint64{zero, zero, zero}
		for i, s := range in.src {
			rd[i] = c.reader(s)
		}
		w := c.writer(in.dst)
		a, b, cc := rd[0], rd[1], rd[2]
		c.steps = append(c.steps, func(m *machine) int { w(m, op(a(m), b(m), cc(m))); return -1 })
	}
	return c
}

// run executes the function on raw argument bits and returns the result bits.
func (c *compiled) run(m *machine, args ...uint64) uint64 {
	if len(m.r) < c.p.nid {
		m.r = make([]uint64, c.p.nid)
	}
	copy(m.args[:], args)
	for pc := 0; pc < len(c.steps); {
		if n := c.steps[pc](m); n >= 0 {
			pc = n
		} else {
			pc++
		}
	}
	return m.ret
}
