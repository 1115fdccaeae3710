package devmath

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// The C rendering is checked against the interpreter, bit for bit, by
// compiling every function with the host's C++ compiler (an x86-64 or arm64
// host does IEEE double arithmetic; the primitives map to the exact
// builtins) and running both on the same inputs: edge values and random
// draws from the accuracy ranges. A mismatch means the rendering of some
// instruction differs from its PTX meaning.

// hostPrelude defines the C text's types and primitives for the host.
const hostPrelude = `typedef unsigned int qd_u32;
typedef int qd_i32;
typedef unsigned long long qd_u64;
typedef long long qd_i64;
#define QD_MATH static
static double qd_fma_f64(double a, double b, double c) { return __builtin_fma(a, b, c); }
static double qd_sqrt_f64(double x) { return __builtin_sqrt(x); }
static double qd_rint_f64(double x) { return __builtin_rint(x); }
static double qd_trunc_f64(double x) { return __builtin_trunc(x); }
static double qd_floor_f64(double x) { return __builtin_floor(x); }
static qd_u64 qd_mulhi_u64(qd_u64 a, qd_u64 b) { return (qd_u64)(((unsigned __int128)a * b) >> 64); }
static qd_u32 qd_clz_u64(qd_u64 x) { return x ? (qd_u32)__builtin_clzll(x) : 64u; }
static qd_u64 qd_bits_f64(double x) { qd_u64 u; __builtin_memcpy(&u, &x, 8); return u; }
static double qd_f64_from(qd_u64 u) { double x; __builtin_memcpy(&x, &u, 8); return x; }
static float qd_f32_from(qd_u32 u) { float x; __builtin_memcpy(&x, &u, 4); return x; }
`

type cCase struct {
	name string
	fn   ir.Intrinsic
	t    ir.Type
}

// hostProgram is a C++ program holding every function; it reads lines
// "index abits bbits" (hex) and prints the result's bits in hex.
func hostProgram(t *testing.T) (string, []cCase) {
	var sb strings.Builder
	sb.WriteString(hostPrelude)
	sb.WriteString("#include <stdio.h>\n#include <string.h>\n")
	var cases []cCase
	for _, fn := range ir.Intrinsics() {
		for _, ty := range []ir.Type{ir.F64, ir.F32} {
			name, def, err := CFunc(fn, ty)
			if err != nil {
				continue
			}
			sb.WriteString(def)
			cases = append(cases, cCase{name, fn, ty})
		}
	}
	sb.WriteString("int main(void) {\n\tunsigned idx; qd_u64 a, b;\n")
	sb.WriteString("\twhile (scanf(\"%u %llx %llx\", &idx, &a, &b) == 3) {\n\t\tqd_u64 r = 0;\n\t\tswitch (idx) {\n")
	for i, c := range cases {
		args := "x"
		if c.fn.Arity() == 2 {
			args = "x, y"
		}
		if c.t == ir.F32 {
			fmt.Fprintf(&sb, "\t\tcase %d: { float x, y; qd_u32 ua = (qd_u32)a, ub = (qd_u32)b, ur; memcpy(&x, &ua, 4); memcpy(&y, &ub, 4); (void)y; float z = %s(%s); memcpy(&ur, &z, 4); r = ur; break; }\n", i, c.name, args)
		} else {
			fmt.Fprintf(&sb, "\t\tcase %d: { double x = qd_f64_from(a), y = qd_f64_from(b); (void)y; r = qd_bits_f64(%s(%s)); break; }\n", i, c.name, args)
		}
	}
	sb.WriteString("\t\t}\n\t\tprintf(\"%llx\\n\", r);\n\t}\n\treturn 0;\n}\n")
	return sb.String(), cases
}

func TestCRenderingMatchesInterpreter(t *testing.T) {
	cxx, err := exec.LookPath("c++")
	if err != nil {
		t.Skipf("no host C++ compiler (c++): the C rendering is NOT checked against the interpreter: %v", err)
	}
	src, cases := hostProgram(t)
	dir := t.TempDir()
	file, exe := filepath.Join(dir, "math.cc"), filepath.Join(dir, "math")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(cxx, "-std=c++17", "-O1", "-ffp-contract=off", "-fno-fast-math", "-w", "-o", exe, file).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cxx, err, out)
	}

	type input struct {
		idx  int
		a, b uint64
	}
	var inputs []input
	n := 300
	if testing.Short() {
		n = 60
	}
	specOf := map[ir.Intrinsic]fspec{}
	for _, sp := range specs {
		specOf[sp.fn] = sp
	}
	for i, c := range cases {
		f32 := c.t == ir.F32
		enc := func(x float64) uint64 {
			if f32 {
				return uint64(math.Float32bits(float32(x)))
			}
			return math.Float64bits(x)
		}
		edge := edgeValues(f32)
		for j, x := range edge {
			inputs = append(inputs, input{i, enc(x), enc(edge[(j*7+3)%len(edge)])})
		}
		sp := specOf[c.fn]
		ranges := sp.r64
		if f32 {
			ranges = sp.r32
		}
		r := rand.New(rand.NewPCG(uint64(c.fn), 7))
		for _, rg := range ranges {
			for range n {
				x, y := rg[0].g(r), 0.0
				if rg[1].g != nil {
					y = rg[1].g(r)
				}
				inputs = append(inputs, input{i, enc(x), enc(y)})
			}
		}
	}
	var stdin bytes.Buffer
	for _, in := range inputs {
		fmt.Fprintf(&stdin, "%d %x %x\n", in.idx, in.a, in.b)
	}
	cmd := exec.Command(exe)
	cmd.Stdin = &stdin
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("running the C functions: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(got))
	models := make([]*compiled, len(cases))
	var m machine
	bad := 0
	for k, in := range inputs {
		if !sc.Scan() {
			t.Fatalf("the C program printed %d results for %d inputs", k, len(inputs))
		}
		r, err := strconv.ParseUint(sc.Text(), 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		c := cases[in.idx]
		if models[in.idx] == nil {
			p, err := build(c.fn, c.t)
			if err != nil {
				t.Fatal(err)
			}
			models[in.idx] = compile(p)
		}
		want := models[in.idx].run(&m, in.a, in.b)
		if !sameBits(r, want, c.t) {
			if bad++; bad <= 10 {
				t.Errorf("%s(%#x, %#x): C gives %#x, the PTX model %#x", c.name, in.a, in.b, r, want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d results differ", bad, len(inputs))
	}
	t.Logf("%d functions, %d inputs: C and the PTX model agree bit for bit (NaNs as a class)", len(cases), len(inputs))
}

// sameBits compares results; any NaN matches any NaN (payloads differ
// between hosts and are not part of Go's semantics).
func sameBits(a, b uint64, t ir.Type) bool {
	if t == ir.F32 {
		x, y := math.Float32frombits(uint32(a)), math.Float32frombits(uint32(b))
		if x != x && y != y {
			return true
		}
		return uint32(a) == uint32(b)
	}
	x, y := math.Float64frombits(a), math.Float64frombits(b)
	if x != x && y != y {
		return true
	}
	return a == b
}
