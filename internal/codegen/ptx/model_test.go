package ptx

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/quadrants-go/qd/internal/codegen/gosem"
	"github.com/quadrants-go/qd/internal/ir"
)

// A model of the PTX ISA's documented semantics, for the straight-line
// serial entries of the Go-semantics table (gosem_test.go): one thread
// runs the instructions of one entry against parameter values and a
// global memory, and the model reports what it stores. It knows the
// instructions those entries use and fails on any other, so that a rule
// that needs a new instruction extends the model rather than passing
// unexamined.
//
// Where the ISA leaves a result unspecified the model gives a poison value
// (integer division by zero, MinInt / -1, the choice min and max make
// between -0 and +0): the generator's own code must make the result Go's,
// or the table's check catches it. Where the ISA defines it the model
// follows the text: shl and shr clamp a count beyond the width; cvt.rzi to
// an integer truncates, saturates to the range and gives 0 for NaN; min
// and max of a NaN and a number give the number; setp's compares are
// ordered except the .neu and .nan ones.

// poison is the model's value for results the ISA leaves unspecified.
const poison = 0x5A5A_5A5A_5A5A_5A5A

// ptxMachine is one thread running one entry.
type ptxMachine struct {
	regs   map[string]uint64
	params map[string]uint64
	mem    map[uint64]uint64 // address → the bits stored there
}

// runEntry runs the entry of text (a module with one entry) with the
// parameter values given in declaration order (an array as its address)
// and returns the global memory it wrote.
func runEntry(text string, args []uint64) (map[uint64]uint64, error) {
	start := strings.Index(text, ".visible .entry ")
	if start < 0 {
		return nil, fmt.Errorf("model: no entry")
	}
	entry := text[start:]
	open, shut := strings.Index(entry, "("), strings.Index(entry, ")")
	var names []string
	for _, p := range strings.Split(entry[open+1:shut], ",") {
		if f := strings.Fields(p); len(f) == 3 {
			names = append(names, f[2])
		}
	}
	if len(names) != len(args) {
		return nil, fmt.Errorf("model: %d parameters, %d values", len(names), len(args))
	}
	m := &ptxMachine{regs: map[string]uint64{}, params: map[string]uint64{}, mem: map[uint64]uint64{}}
	for i, n := range names {
		m.params[n] = args[i]
	}
	body := entry[strings.Index(entry, "{")+1 : strings.LastIndex(entry, "}")]
	var code []string
	labels := map[string]int{}
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, ".reg"):
		case strings.HasSuffix(l, ":"):
			labels[strings.TrimSuffix(l, ":")] = len(code)
		default:
			code = append(code, strings.TrimSuffix(l, ";"))
		}
	}
	for pc, steps := 0, 0; pc < len(code); steps++ {
		if steps > 10000 {
			return nil, fmt.Errorf("model: the entry does not end")
		}
		ins := code[pc]
		pc++
		if strings.HasPrefix(ins, "@") {
			guard, rest, _ := strings.Cut(ins, " ")
			neg := strings.HasPrefix(guard, "@!")
			if (m.regs[strings.TrimLeft(guard, "@!")] != 0) == neg {
				continue
			}
			ins = rest
		}
		op, operands, _ := strings.Cut(ins, " ")
		var ops []string
		for _, o := range strings.Split(operands, ",") {
			if o = strings.TrimSpace(o); o != "" {
				ops = append(ops, o)
			}
		}
		switch {
		case op == "ret":
			return m.mem, nil
		case op == "bra" || op == "bra.uni":
			to, ok := labels[ops[0]]
			if !ok {
				return nil, fmt.Errorf("model: no label %s", ops[0])
			}
			pc = to
		default:
			if err := m.step(op, ops); err != nil {
				return nil, fmt.Errorf("model: %s: %v", ins, err)
			}
		}
	}
	return m.mem, nil
}

// width is the bits of a PTX type suffix (pred counts as 1).
func width(ty string) int {
	if ty == "pred" {
		return 1
	}
	n, _ := strconv.Atoi(ty[1:])
	return n
}

// norm keeps the low bits of v that a value of type ty has.
func norm(ty string, v uint64) uint64 {
	if w := width(ty); w < 64 {
		return v & (1<<w - 1)
	}
	return v
}

// signed is v of type ty as a signed number.
func signed(ty string, v uint64) int64 {
	w := width(ty)
	return int64(v<<(64-w)) >> (64 - w)
}

// value reads an operand: a register, a special register, a parameter
// name in brackets, an integer or a 0f/0d float literal.
func (m *ptxMachine) value(o string) (uint64, error) {
	switch {
	case o == "%tid.x" || o == "%ctaid.x":
		return 0, nil
	case strings.HasPrefix(o, "%"):
		return m.regs[o], nil
	case strings.HasPrefix(o, "["):
		v, ok := m.params[strings.Trim(o, "[]")]
		if !ok {
			return 0, fmt.Errorf("no parameter %s", o)
		}
		return v, nil
	case strings.HasPrefix(o, "0f") || strings.HasPrefix(o, "0d"):
		return strconv.ParseUint(o[2:], 16, 64)
	case strings.HasPrefix(o, "0x"):
		return strconv.ParseUint(o[2:], 16, 64)
	}
	v, err := strconv.ParseInt(o, 10, 64)
	return uint64(v), err
}

// step runs one instruction other than a branch or ret.
func (m *ptxMachine) step(op string, ops []string) error {
	parts := strings.Split(op, ".")
	ty := parts[len(parts)-1]
	in := make([]uint64, len(ops))
	for i := 1; i < len(ops); i++ {
		v, err := m.value(ops[i])
		if err != nil {
			return err
		}
		in[i] = v
	}
	set := func(v uint64) { m.regs[ops[0]] = norm(ty, v) }
	switch parts[0] {
	case "ld": // ld.param.T
		set(in[1])
	case "cvta", "mov":
		set(in[1])
	case "st": // st.global.T [addr], v
		addr, err := m.value(strings.Trim(ops[0], "[]"))
		if err != nil {
			return err
		}
		v, err := m.value(ops[1])
		if err != nil {
			return err
		}
		m.mem[addr] = norm(ty, v)
	case "and":
		set(in[1] & in[2])
	case "or":
		set(in[1] | in[2])
	case "neg":
		set(-in[1])
	case "mad": // mad.lo.s64
		set(in[1]*in[2] + in[3])
	case "add":
		if ty[0] == 'f' {
			set(floatOp(ty, in[1], in[2], func(x, y float64) float64 { return x + y }))
		} else {
			set(in[1] + in[2])
		}
	case "sub":
		if ty[0] == 'f' {
			set(floatOp(ty, in[1], in[2], func(x, y float64) float64 { return x - y }))
		} else {
			set(in[1] - in[2])
		}
	case "div", "rem":
		set(divRem(parts[0] == "rem", ty, in[1], in[2]))
	case "min", "max":
		set(minMax(parts[0] == "max", ty, in[1], in[2]))
	case "selp":
		if m.regs[ops[3]] != 0 {
			set(in[1])
		} else {
			set(in[2])
		}
	case "setp":
		b, err := compare(parts[1], ty, in[1], in[2])
		if err != nil {
			return err
		}
		m.regs[ops[0]] = b
	case "shl", "shr":
		set(shiftOp(parts[0] == "shl", ty, in[1], in[2]))
	case "cvt":
		v, err := convert(parts[1:], in[1])
		if err != nil {
			return err
		}
		m.regs[ops[0]] = v
	case "griddepcontrol":
		// A lone thread has no predecessors to wait for, no dependents to
		// let in.
	default:
		return fmt.Errorf("the model does not know %s", op)
	}
	return nil
}

// toFloat and fromFloat move f32 and f64 bits through float64.
func toFloat(ty string, v uint64) float64 {
	if ty == "f32" {
		return float64(math.Float32frombits(uint32(v)))
	}
	return math.Float64frombits(v)
}

func fromFloat(ty string, x float64) uint64 {
	if ty == "f32" {
		return uint64(math.Float32bits(float32(x)))
	}
	return math.Float64bits(x)
}

func floatOp(ty string, a, b uint64, f func(x, y float64) float64) uint64 {
	return fromFloat(ty, f(toFloat(ty, a), toFloat(ty, b)))
}

// divRem is div or rem: poison where the ISA leaves the result open.
func divRem(rem bool, ty string, a, b uint64) uint64 {
	a, b = norm(ty, a), norm(ty, b)
	if b == 0 {
		return poison
	}
	if ty[0] == 's' {
		x, y := signed(ty, a), signed(ty, b)
		if y == -1 && x == signed(ty, 1<<(width(ty)-1)) {
			return poison // MinInt / -1 overflows
		}
		if rem {
			return uint64(x % y)
		}
		return uint64(x / y)
	}
	if rem {
		return a % b
	}
	return a / b
}

// minMax is min or max: of a NaN and a number, the number; of equal
// operands (-0 and +0 among them), the first, since the ISA does not say
// which zero.
func minMax(isMax bool, ty string, a, b uint64) uint64 {
	if ty[0] == 'f' {
		x, y := toFloat(ty, a), toFloat(ty, b)
		switch {
		case x != x && y != y:
			return fromFloat(ty, math.NaN())
		case x != x:
			return b
		case y != y || x == y:
			return a
		case (x > y) == isMax:
			return a
		}
		return b
	}
	less := norm(ty, a) < norm(ty, b)
	if ty[0] == 's' {
		less = signed(ty, a) < signed(ty, b)
	}
	if less != isMax {
		return a
	}
	return b
}

// compare is setp's comparison cmp on type ty.
func compare(cmp, ty string, a, b uint64) (uint64, error) {
	var lt, eq, unordered bool
	switch ty[0] {
	case 'f':
		x, y := toFloat(ty, a), toFloat(ty, b)
		lt, eq, unordered = x < y, x == y, x != x || y != y
	case 's':
		lt, eq = signed(ty, a) < signed(ty, b), norm(ty, a) == norm(ty, b)
	default:
		lt, eq = norm(ty, a) < norm(ty, b), norm(ty, a) == norm(ty, b)
	}
	var r bool
	switch cmp {
	case "eq":
		r = eq && !unordered
	case "ne":
		r = !eq && !unordered
	case "lt":
		r = lt && !unordered
	case "le":
		r = (lt || eq) && !unordered
	case "gt":
		r = !lt && !eq && !unordered
	case "ge":
		r = !lt && !unordered
	case "neu":
		r = !eq || unordered
	case "nan":
		r = unordered
	default:
		return 0, fmt.Errorf("no compare %s", cmp)
	}
	if r {
		return 1, nil
	}
	return 0, nil
}

// shiftOp is shl or shr of a by the .u32 count n, which the ISA clamps to
// the width.
func shiftOp(left bool, ty string, a, n uint64) uint64 {
	w := uint64(width(ty))
	n = min(uint64(uint32(n)), w)
	switch {
	case left && n == w:
		return 0
	case left:
		return a << n
	case ty[0] == 's':
		return uint64(signed(ty, a) >> min(n, w-1))
	case n == w:
		return 0
	}
	return norm(ty, a) >> n
}

// convert is cvt with the given suffixes: an optional rounding mode, the
// destination type, the source type.
func convert(suffix []string, v uint64) (uint64, error) {
	mode := ""
	if len(suffix) == 3 {
		mode, suffix = suffix[0], suffix[1:]
	}
	to, from := suffix[0], suffix[1]
	switch {
	case from[0] != 'f' && to[0] != 'f':
		if from[0] == 's' {
			return norm(to, uint64(signed(from, v))), nil
		}
		return norm(to, norm(from, v)), nil
	case from[0] != 'f' && to[0] == 'f' && mode == "rn":
		// Integer to float, rounded to nearest (Go's conversions round
		// once, as the ISA does).
		var x float64
		switch {
		case from[0] == 's' && to == "f32":
			return uint64(math.Float32bits(float32(signed(from, v)))), nil
		case from[0] == 's':
			x = float64(signed(from, v))
		case to == "f32":
			return uint64(math.Float32bits(float32(norm(from, v)))), nil
		default:
			x = float64(norm(from, v))
		}
		return fromFloat(to, x), nil
	case from[0] == 'f' && to[0] != 'f' && mode == "rzi":
		// The ISA's float-to-integer rule: truncated, clamped to the
		// range, NaN giving 0, which is also gosem.FloatToInt's.
		t := map[string]ir.Type{"s32": ir.I32, "s64": ir.I64, "u32": ir.U32, "u64": ir.U64}[to]
		bits, _ := gosem.Saturate(t, toFloat(from, v))
		return norm(to, bits), nil
	}
	return 0, fmt.Errorf("the model does not know cvt.%s.%s.%s", mode, to, from)
}
