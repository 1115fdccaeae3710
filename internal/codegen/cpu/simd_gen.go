//go:build ignore

// simd_gen writes simd_amd64.s and simd_amd64.go: the SSE2 loops of the
// float lane operations (simd.go), one near-copy per operation, element
// type and operand shape. Run by go generate (see simd.go).
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"strings"
)

// elem is one float element type.
type elem struct {
	bits        int    // 32 or 64
	size        int    // bytes
	goType      string // float32, float64
	packed      string // PS, PD: suffix of the packed instructions
	scalar      string // SS, SD
	move        string // MOVSS, MOVSD
	shuf        string // SHUFPS, SHUFPD: broadcast lane 0
	perIter     int    // elements per unrolled iteration (two XMM registers)
	scalarBytes int    // the scalar argument's bytes, padded to the next slice
}

var elems = []elem{
	{32, 4, "float32", "PS", "SS", "MOVSS", "SHUFPS", 8, 8},
	{64, 8, "float64", "PD", "SD", "MOVSD", "SHUFPD", 4, 8},
}

// op is one arithmetic operation.
type op struct {
	name  string // add, sub, mul, div
	instr string // ADD, SUB, MUL, DIV
	sv    bool   // has its own scalar∘vector loop (not commutative)
}

var ops = []op{{"add", "ADD", false}, {"sub", "SUB", true}, {"mul", "MUL", false}, {"div", "DIV", true}}

// cmp is one comparison: its SSE predicate (false on NaN but for ne, as
// Go's operators), and whether the operands swap (a > b is b < a).
type cmp struct {
	name string
	pred int
	swap bool
}

var cmps = []cmp{{"eq", 0, false}, {"ne", 4, false}, {"lt", 1, false}, {"le", 2, false}, {"gt", 1, true}, {"ge", 2, true}}

// compare emits d[i] = a[i] op b[i] (vv) or a[i] op s (vs, s broadcast in
// X4) into d []bool: packed compares make all-ones lanes, packed twice down
// to bytes and negated, 0 - (-1) = 1.
func (w *writer) compare(e elem, c cmp, vv bool) {
	sc, t := e.size, e.goType
	name, sig, args := fmt.Sprintf("%sVS%d", c.name, e.bits), fmt.Sprintf("(d []bool, a []%s, s %s)", t, t), 48+e.size
	prologue := fmt.Sprintf("\tMOVQ a_base+24(FP), SI\n\t%s s+48(FP), X4\n\t%s $0, X4, X4", e.move, e.shuf)
	if vv {
		name, sig, args = fmt.Sprintf("%sVV%d", c.name, e.bits), fmt.Sprintf("(d []bool, a, b []%s)", t), 72
		prologue = "\tMOVQ a_base+24(FP), SI\n\tMOVQ b_base+48(FP), DX"
	}
	packed, scalar := "CMP"+e.packed, "CMP"+e.scalar
	// into compares the a lanes in x with the other operand (X4, or b at
	// off, loaded into tmp), leaving the masks in x.
	into := func(ins, load, x, tmp string, off int) {
		other := "X4"
		if vv {
			w.asm("\t%s %d(DX)(AX*%d), %s", load, off, sc, tmp)
			other = tmp
		}
		if !c.swap {
			w.asm("\t%s %s, %s, $%d", ins, other, x, c.pred)
			return
		}
		if !vv {
			w.asm("\tMOVAPS X4, %s", tmp)
		}
		w.asm("\t%s %s, %s, $%d\n\tMOVAPS %s, %s", ins, x, tmp, c.pred, tmp, x)
	}
	fmt.Fprintf(&w.g, "//go:noescape\nfunc %s%s\n\n", name, sig)
	w.asm("\n// func %s%s", name, sig)
	w.asm("TEXT ·%s(SB), NOSPLIT, $0-%d", name, args)
	w.asm("\tMOVQ d_base+0(FP), DI\n\tMOVQ d_len+8(FP), CX\n%s", prologue)
	w.asm("\tXORQ AX, AX\n\tMOVQ CX, BX\n\tANDQ $-%d, BX\n\tJZ %s_tail\n%s_loop:", e.perIter, name, name)
	w.asm("\tMOVUPS (SI)(AX*%d), X0\n\tMOVUPS 16(SI)(AX*%d), X1", sc, sc)
	into(packed, "MOVUPS", "X0", "X2", 0)
	into(packed, "MOVUPS", "X1", "X3", 16)
	store := "MOVQ" // 8 float32 masks make 8 bytes
	if e.bits == 64 {
		// Four float64 masks: take a 32-bit half of each first.
		w.asm("\tSHUFPS $0x88, X1, X0\n\tPACKSSLW X0, X0")
		store = "MOVL"
	} else {
		w.asm("\tPACKSSLW X1, X0")
	}
	w.asm("\tPACKSSWB X0, X0\n\tPXOR X7, X7\n\tPSUBB X0, X7\n\t%s X7, (DI)(AX*1)", store)
	w.asm("\tADDQ $%d, AX\n\tCMPQ AX, BX\n\tJLT %s_loop\n%s_tail:\n\tCMPQ AX, CX\n\tJGE %s_done", e.perIter, name, name, name)
	w.asm("\t%s (SI)(AX*%d), X0", e.move, sc)
	into(scalar, e.move, "X0", "X2", 0)
	w.asm("\tMOVL X0, R8\n\tANDL $1, R8\n\tMOVB R8, (DI)(AX*1)")
	w.asm("\tINCQ AX\n\tJMP %s_tail\n%s_done:\n\tRET", name, name)
}

type writer struct{ s, g bytes.Buffer }

func (w *writer) asm(format string, args ...any) { fmt.Fprintf(&w.s, format+"\n", args...) }

// loop emits the body shared by every shape: X4 holds the broadcast scalar
// where there is one; load(reg, off) loads the first operand, combine
// applies the operation with the second.
func (w *writer) loop(e elem, name string, first func(x string, off int), second func(x, tmp string, off int)) {
	sc := e.size
	w.asm("\tXORQ AX, AX")
	w.asm("\tMOVQ CX, BX")
	w.asm("\tANDQ $-%d, BX", e.perIter)
	w.asm("\tJZ %s_tail", name)
	w.asm("%s_loop:", name)
	first("X0", 0)
	first("X1", 16)
	second("X0", "X2", 0)
	second("X1", "X3", 16)
	w.asm("\tMOVUPS X0, (DI)(AX*%d)", sc)
	w.asm("\tMOVUPS X1, 16(DI)(AX*%d)", sc)
	w.asm("\tADDQ $%d, AX", e.perIter)
	w.asm("\tCMPQ AX, BX")
	w.asm("\tJLT %s_loop", name)
	w.asm("%s_tail:", name)
	w.asm("\tCMPQ AX, CX")
	w.asm("\tJGE %s_done", name)
}

// fn is one generated function: its Go signature (after the name), its
// argument bytes, the instructions loading its arguments, and the parts of
// the loop body.
type fn struct {
	name, sig string
	args      int
	prologue  string
	first     func(x string, off int)      // first operand into x
	second    func(x, tmp string, off int) // combine the second into x
	tail      string                       // one element, scalar
}

func (w *writer) emit(e elem, f fn) {
	fmt.Fprintf(&w.g, "//go:noescape\nfunc %s%s\n\n", f.name, f.sig)
	w.asm("\n// func %s%s", f.name, f.sig)
	w.asm("TEXT ·%s(SB), NOSPLIT, $0-%d", f.name, f.args)
	w.asm("\tMOVQ d_base+0(FP), DI\n\tMOVQ d_len+8(FP), CX\n%s", f.prologue)
	w.loop(e, f.name, f.first, f.second)
	w.asm("%s\n\tINCQ AX\n\tJMP %s_tail\n%s_done:\n\tRET", f.tail, f.name, f.name)
}

// sel emits d[i] = t[i] if c[i] else e[i] over words of size bytes (4 or
// 8): the bools widened to lane masks, then e&m | t&^m.
func (w *writer) sel(size int) {
	name := fmt.Sprintf("selVV%d", size*8)
	t := fmt.Sprintf("uint%d", size*8)
	sig := fmt.Sprintf("(d []%s, c []bool, t, e []%s)", t, t)
	fmt.Fprintf(&w.g, "//go:noescape\nfunc %s%s\n\n", name, sig)
	w.asm("\n// func %s%s", name, sig)
	w.asm("TEXT ·%s(SB), NOSPLIT, $0-96", name)
	w.asm("\tMOVQ d_base+0(FP), DI\n\tMOVQ d_len+8(FP), CX\n\tMOVQ c_base+24(FP), R9")
	w.asm("\tMOVQ t_base+48(FP), SI\n\tMOVQ e_base+72(FP), DX\n\tPXOR X6, X6")
	per := 16 / size // lanes per register
	w.asm("\tXORQ AX, AX\n\tMOVQ CX, BX\n\tANDQ $-%d, BX\n\tJZ %s_tail\n%s_loop:", 2*per, name, name)
	for half := range 2 {
		if size == 4 {
			w.asm("\tMOVL %d(R9)(AX*1), X4\n\tPUNPCKLBW X4, X4\n\tPUNPCKLWL X4, X4", half*per)
		} else {
			w.asm("\tMOVWLZX %d(R9)(AX*1), R10\n\tMOVQ R10, X4\n\tPUNPCKLBW X4, X4\n\tPUNPCKLWL X4, X4\n\tPUNPCKLLQ X4, X4", half*per)
		}
		w.asm("\tPCMPEQL X6, X4") // all ones where the bool is false
		w.asm("\tMOVUPS %d(SI)(AX*%d), X0\n\tMOVUPS %d(DX)(AX*%d), X1", 16*half, size, 16*half, size)
		w.asm("\tPAND X4, X1\n\tPANDN X0, X4\n\tPOR X1, X4\n\tMOVUPS X4, %d(DI)(AX*%d)", 16*half, size)
	}
	w.asm("\tADDQ $%d, AX\n\tCMPQ AX, BX\n\tJLT %s_loop\n%s_tail:\n\tCMPQ AX, CX\n\tJGE %s_done", 2*per, name, name, name)
	mov, cmov := "MOVL", "CMOVLEQ"
	if size == 8 {
		mov, cmov = "MOVQ", "CMOVQEQ"
	}
	w.asm("\tMOVBLZX (R9)(AX*1), R10\n\t%s (SI)(AX*%d), R11\n\t%s (DX)(AX*%d), R12", mov, size, mov, size)
	w.asm("\tTESTL R10, R10\n\t%s R12, R11\n\t%s R11, (DI)(AX*%d)", cmov, mov, size)
	w.asm("\tINCQ AX\n\tJMP %s_tail\n%s_done:\n\tRET", name, name)
}

// fill emits d[i] = v over words of size bytes (4 or 8): v broadcast to
// an XMM register, two stores of 16 bytes per iteration.
func (w *writer) fill(size int) {
	name := fmt.Sprintf("fill%d", size*8)
	t := fmt.Sprintf("uint%d", size*8)
	sig := fmt.Sprintf("(d []%s, v %s)", t, t)
	fmt.Fprintf(&w.g, "//go:noescape\nfunc %s%s\n\n", name, sig)
	w.asm("\n// func %s%s", name, sig)
	w.asm("TEXT ·%s(SB), NOSPLIT, $0-%d", name, 24+size)
	w.asm("\tMOVQ d_base+0(FP), DI\n\tMOVQ d_len+8(FP), CX")
	mov := "MOVL"
	if size == 4 {
		w.asm("\tMOVL v+24(FP), R8\n\tMOVL R8, X4\n\tSHUFPS $0, X4, X4")
	} else {
		mov = "MOVQ"
		w.asm("\tMOVQ v+24(FP), R8\n\tMOVQ R8, X4\n\tPUNPCKLQDQ X4, X4")
	}
	per := 32 / size
	w.asm("\tXORQ AX, AX\n\tMOVQ CX, BX\n\tANDQ $-%d, BX\n\tJZ %s_tail\n%s_loop:", per, name, name)
	w.asm("\tMOVUPS X4, (DI)(AX*%d)\n\tMOVUPS X4, 16(DI)(AX*%d)", size, size)
	w.asm("\tADDQ $%d, AX\n\tCMPQ AX, BX\n\tJLT %s_loop\n%s_tail:\n\tCMPQ AX, CX\n\tJGE %s_done", per, name, name, name)
	w.asm("\t%s R8, (DI)(AX*%d)\n\tINCQ AX\n\tJMP %s_tail\n%s_done:\n\tRET", mov, size, name, name)
}

// fillRuns emits, for each run of n lanes (n a multiple of 16 bytes'
// worth) of d, the run filled with the word at src + run·stride bytes:
// a row of threads' one element of a tile (quasimem.go).
func (w *writer) fillRuns(size int) {
	name := fmt.Sprintf("fillRuns%d", size*8)
	t := fmt.Sprintf("uint%d", size*8)
	sig := fmt.Sprintf("(d []%s, src unsafe.Pointer, stride int64, n int)", t)
	fmt.Fprintf(&w.g, "//go:noescape\nfunc %s%s\n\n", name, sig)
	w.asm("\n// func %s%s", name, sig)
	w.asm("TEXT ·%s(SB), NOSPLIT, $0-48", name)
	w.asm("\tMOVQ d_base+0(FP), DI\n\tMOVQ d_len+8(FP), CX\n\tMOVQ src+24(FP), SI\n\tMOVQ stride+32(FP), DX\n\tMOVQ n+40(FP), R9")
	w.asm("\tSHLQ $%d, R9\n\tSHLQ $%d, CX\n\tADDQ DI, CX", log2(size), log2(size)) // bytes per run; end of d
	w.asm("%s_run:\n\tCMPQ DI, CX\n\tJGE %s_done", name, name)
	if size == 4 {
		w.asm("\tMOVL (SI), R8\n\tMOVL R8, X4\n\tSHUFPS $0, X4, X4")
	} else {
		w.asm("\tMOVQ (SI), R8\n\tMOVQ R8, X4\n\tPUNPCKLQDQ X4, X4")
	}
	w.asm("\tXORQ AX, AX\n%s_store:\n\tMOVUPS X4, (DI)(AX*1)\n\tADDQ $16, AX\n\tCMPQ AX, R9\n\tJLT %s_store", name, name)
	w.asm("\tADDQ R9, DI\n\tADDQ DX, SI\n\tJMP %s_run\n%s_done:\n\tRET", name, name)
}

func log2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

// irOp is the ir.BinOp of each generated operation's name.
var irOp = map[string]string{"add": "ir.Add", "sub": "ir.Sub", "mul": "ir.Mul", "div": "ir.Div",
	"eq": "ir.Eq", "ne": "ir.Ne", "lt": "ir.Lt", "le": "ir.Le", "gt": "ir.Gt", "ge": "ir.Ge"}

// tables writes the loops of each element type as the floatLoops of
// simd.go, and the selects.
func (w *writer) tables() {
	entries := func(names []string, shape string, bits int) string {
		var b strings.Builder
		for _, n := range names {
			fmt.Fprintf(&b, "%s: %s%s%d, ", irOp[n], n, shape, bits)
		}
		return b.String()
	}
	var arith, sv, cmpNames []string
	for _, o := range ops {
		arith = append(arith, o.name)
		if o.sv {
			sv = append(sv, o.name)
		}
	}
	for _, c := range cmps {
		cmpNames = append(cmpNames, c.name)
	}
	fmt.Fprintf(&w.g, "var (\n")
	for _, e := range elems {
		t := e.goType
		fmt.Fprintf(&w.g, "simd%d = &floatLoops[%s]{\n", e.bits, t)
		fmt.Fprintf(&w.g, "vv: map[ir.BinOp]func(d, a, b []%s){%s},\n", t, entries(arith, "VV", e.bits))
		fmt.Fprintf(&w.g, "vs: map[ir.BinOp]func(d, a []%s, s %s){%s},\n", t, t, entries(arith, "VS", e.bits))
		fmt.Fprintf(&w.g, "sv: map[ir.BinOp]func(d []%s, s %s, b []%s){%s},\n", t, t, t, entries(sv, "SV", e.bits))
		fmt.Fprintf(&w.g, "mulAdd: mulAddVSV%d,\n", e.bits)
		fmt.Fprintf(&w.g, "mulAddVV: mulAddVVV%d,\n", e.bits)
		fmt.Fprintf(&w.g, "cmpVV: map[ir.BinOp]func(d []bool, a, b []%s){%s},\n", t, entries(cmpNames, "VV", e.bits))
		fmt.Fprintf(&w.g, "cmpVS: map[ir.BinOp]func(d []bool, a []%s, s %s){%s},\n", t, t, entries(cmpNames, "VS", e.bits))
		fmt.Fprintf(&w.g, "}\n")
	}
	fmt.Fprintf(&w.g, "simdSel32 = selVV32\nsimdSel64 = selVV64\n")
	fmt.Fprintf(&w.g, "simdFill32 = fill32\nsimdFill64 = fill64\n")
	fmt.Fprintf(&w.g, "simdFillRuns32 = fillRuns32\nsimdFillRuns64 = fillRuns64\n)\n")
}

func main() {
	w := &writer{}
	w.asm("// Code generated by simd_gen.go; DO NOT EDIT.\n")
	w.asm("//go:build !purego && !race\n")
	w.asm("#include \"textflag.h\"")
	fmt.Fprintf(&w.g, "// Code generated by simd_gen.go; DO NOT EDIT.\n\n//go:build !purego && !race\n\npackage cpu\n\n")
	fmt.Fprintf(&w.g, "import (\n\"unsafe\"\n\n\"github.com/quadrants-go/qd/internal/ir\"\n)\n\n")
	for _, e := range elems {
		sc, t := e.size, e.goType
		broadcast := fmt.Sprintf("\t%s s+%%d(FP), X4\n\t%s $0, X4, X4", e.move, e.shuf)
		loadA := func(x string, off int) { w.asm("\tMOVUPS %d(SI)(AX*%d), %s", off, sc, x) }
		splatS := func(x string, _ int) { w.asm("\tMOVAPS X4, %s", x) }
		for _, o := range ops {
			ins, sins := o.instr+e.packed, o.instr+e.scalar
			withB := func(x, tmp string, off int) {
				w.asm("\tMOVUPS %d(DX)(AX*%d), %s", off, sc, tmp)
				w.asm("\t%s %s, %s", ins, tmp, x)
			}
			w.emit(e, fn{ // d = a op b
				name: fmt.Sprintf("%sVV%d", o.name, e.bits), sig: fmt.Sprintf("(d, a, b []%s)", t), args: 72,
				prologue: "\tMOVQ a_base+24(FP), SI\n\tMOVQ b_base+48(FP), DX",
				first:    loadA, second: withB,
				tail: fmt.Sprintf("\t%s (SI)(AX*%d), X0\n\t%s (DX)(AX*%d), X2\n\t%s X2, X0\n\t%s X0, (DI)(AX*%d)",
					e.move, sc, e.move, sc, sins, e.move, sc),
			})
			w.emit(e, fn{ // d = a op s
				name: fmt.Sprintf("%sVS%d", o.name, e.bits), sig: fmt.Sprintf("(d, a []%s, s %s)", t, t), args: 48 + e.size,
				prologue: "\tMOVQ a_base+24(FP), SI\n" + fmt.Sprintf(broadcast, 48),
				first:    loadA, second: func(x, _ string, _ int) { w.asm("\t%s X4, %s", ins, x) },
				tail: fmt.Sprintf("\t%s (SI)(AX*%d), X0\n\t%s X4, X0\n\t%s X0, (DI)(AX*%d)", e.move, sc, sins, e.move, sc),
			})
			if o.sv {
				w.emit(e, fn{ // d = s op b
					name: fmt.Sprintf("%sSV%d", o.name, e.bits), sig: fmt.Sprintf("(d []%s, s %s, b []%s)", t, t, t), args: 56,
					prologue: "\tMOVQ b_base+32(FP), DX\n" + fmt.Sprintf(broadcast, 24),
					first:    splatS, second: withB,
					tail: fmt.Sprintf("\tMOVAPS X4, X0\n\t%s (DX)(AX*%d), X2\n\t%s X2, X0\n\t%s X0, (DI)(AX*%d)",
						e.move, sc, sins, e.move, sc),
				})
			}
		}
		for _, c := range cmps {
			w.compare(e, c, false)
			w.compare(e, c, true)
		}
		// d = a*s + b, the product rounded before the add (never fused).
		w.emit(e, fn{
			name: fmt.Sprintf("mulAddVSV%d", e.bits), sig: fmt.Sprintf("(d, a []%s, s %s, b []%s)", t, t, t), args: 80,
			prologue: "\tMOVQ a_base+24(FP), SI\n\tMOVQ b_base+56(FP), DX\n" + fmt.Sprintf(broadcast, 48),
			first:    loadA,
			second: func(x, tmp string, off int) {
				w.asm("\tMUL%s X4, %s", e.packed, x)
				w.asm("\tMOVUPS %d(DX)(AX*%d), %s", off, sc, tmp)
				w.asm("\tADD%s %s, %s", e.packed, tmp, x)
			},
			tail: fmt.Sprintf("\t%s (SI)(AX*%d), X0\n\tMUL%s X4, X0\n\t%s (DX)(AX*%d), X2\n\tADD%s X2, X0\n\t%s X0, (DI)(AX*%d)",
				e.move, sc, e.scalar, e.move, sc, e.scalar, e.move, sc),
		})
		// d = a*b + c, all vectors: the acc += x*y of a dot product.
		w.emit(e, fn{
			name: fmt.Sprintf("mulAddVVV%d", e.bits), sig: fmt.Sprintf("(d, a, b, c []%s)", t), args: 96,
			prologue: "\tMOVQ a_base+24(FP), SI\n\tMOVQ b_base+48(FP), DX\n\tMOVQ c_base+72(FP), R8",
			first:    loadA,
			second: func(x, tmp string, off int) {
				w.asm("\tMOVUPS %d(DX)(AX*%d), %s", off, sc, tmp)
				w.asm("\tMUL%s %s, %s", e.packed, tmp, x)
				w.asm("\tMOVUPS %d(R8)(AX*%d), %s", off, sc, tmp)
				w.asm("\tADD%s %s, %s", e.packed, tmp, x)
			},
			tail: fmt.Sprintf("\t%s (SI)(AX*%d), X0\n\t%s (DX)(AX*%d), X2\n\tMUL%s X2, X0\n\t%s (R8)(AX*%d), X2\n\tADD%s X2, X0\n\t%s X0, (DI)(AX*%d)",
				e.move, sc, e.move, sc, e.scalar, e.move, sc, e.scalar, e.move, sc),
		})
	}
	w.sel(4)
	w.sel(8)
	w.fill(4)
	w.fill(8)
	w.fillRuns(4)
	w.fillRuns(8)
	w.tables()
	src, err := format.Source(w.g.Bytes())
	if err != nil {
		panic(err)
	}
	must(os.WriteFile("simd_amd64.go", src, 0o644))
	must(os.WriteFile("simd_amd64.s", []byte(strings.TrimLeft(w.s.String(), "\n")), 0o644))
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
