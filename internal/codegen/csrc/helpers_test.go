package csrc

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/gosem"
	"github.com/quadrants-go/qd/internal/ir"
)

// The prelude's Go-semantics helpers (commonHelpers) are compiled for the
// host with host stand-ins for the vendor primitives and run on a grid of
// edge values, every pair of them; every result must be what Go computes,
// or what the rules of package codegen/gosem require where Go panics or
// leaves it open (float-to-int conversion out of range: saturation and
// NaN → 0; division by zero: all ones and the dividend). The rules' own
// table runs through whole kernels in gosem_test.go.

const hostVendor = `typedef int qd_i32;
typedef unsigned int qd_u32;
typedef long long qd_i64;
typedef unsigned long long qd_u64;
#define QD_DEV static inline
static qd_u32 qd_bits_f32(float x) { qd_u32 u; __builtin_memcpy(&u, &x, 4); return u; }
static float qd_f32_from(qd_u32 u) { float x; __builtin_memcpy(&x, &u, 4); return x; }
static qd_u64 qd_bits_f64(double x) { qd_u64 u; __builtin_memcpy(&u, &x, 8); return u; }
static double qd_f64_from(qd_u64 u) { double x; __builtin_memcpy(&x, &u, 8); return x; }
static float qd_trunc_f32(float x) { return __builtin_truncf(x); }
static double qd_trunc_f64(double x) { return __builtin_trunc(x); }
static qd_u32 qd_atomic_cas_u32(qd_u32 *p, qd_u32 c, qd_u32 v) { qd_u32 o = *p; if (o == c) *p = v; return o; }
static qd_u64 qd_atomic_cas_u64(qd_u64 *p, qd_u64 c, qd_u64 v) { qd_u64 o = *p; if (o == c) *p = v; return o; }
`

// helperCases are the calls checked: a C expression over the inputs a and b
// (bit patterns as qd_u64) giving the result's bits, and Go's answer.
var helperCases = []struct {
	name string
	c    string
	gofn func(a, b uint64) uint64
}{
	{"div_i32", "(qd_u32)qd_div_i32((qd_i32)a, (qd_i32)b)", func(a, b uint64) uint64 {
		x, y := int32(a), int32(b)
		if y == 0 {
			return 0xFFFFFFFF
		}
		return uint64(uint32(x / y))
	}},
	{"rem_i64", "(qd_u64)qd_rem_i64((qd_i64)a, (qd_i64)b)", func(a, b uint64) uint64 {
		x, y := int64(a), int64(b)
		if y == 0 {
			return uint64(x)
		}
		return uint64(x % y)
	}},
	{"div_u64", "qd_div_u64(a, b)", func(a, b uint64) uint64 {
		if b == 0 {
			return math.MaxUint64
		}
		return a / b
	}},
	{"rem_u32", "qd_rem_u32((qd_u32)a, (qd_u32)b)", func(a, b uint64) uint64 {
		if uint32(b) == 0 {
			return uint64(uint32(a))
		}
		return uint64(uint32(a) % uint32(b))
	}},
	{"shl_i32", "(qd_u32)qd_shl_i32((qd_i32)a, b)", func(a, b uint64) uint64 { return uint64(uint32(int32(a) << b)) }},
	{"shr_i32", "(qd_u32)qd_shr_i32((qd_i32)a, b)", func(a, b uint64) uint64 { return uint64(uint32(int32(a) >> b)) }},
	{"shl_u64", "qd_shl_u64(a, b)", func(a, b uint64) uint64 { return a << b }},
	{"shr_i64", "(qd_u64)qd_shr_i64((qd_i64)a, b)", func(a, b uint64) uint64 { return uint64(int64(a) >> b) }},
	{"shr_u32", "qd_shr_u32((qd_u32)a, b)", func(a, b uint64) uint64 { return uint64(uint32(a) >> b) }},
	{"cvt_i32_f32", "(qd_u32)qd_cvt_i32_f32(qd_f32_from((qd_u32)a))", func(a, _ uint64) uint64 {
		return uint64(uint32(saturate(ir.I32, float64(math.Float32frombits(uint32(a))))))
	}},
	{"cvt_u32_f64", "qd_cvt_u32_f64(qd_f64_from(a))", func(a, _ uint64) uint64 {
		return saturate(ir.U32, math.Float64frombits(a))
	}},
	{"cvt_i64_f64", "(qd_u64)qd_cvt_i64_f64(qd_f64_from(a))", func(a, _ uint64) uint64 {
		return saturate(ir.I64, math.Float64frombits(a))
	}},
	{"cvt_u64_f32", "qd_cvt_u64_f32(qd_f32_from((qd_u32)a))", func(a, _ uint64) uint64 {
		return saturate(ir.U64, float64(math.Float32frombits(uint32(a))))
	}},
	{"min_f64", "qd_bits_f64(qd_min_f64(qd_f64_from(a), qd_f64_from(b)))", func(a, b uint64) uint64 {
		return math.Float64bits(min(math.Float64frombits(a), math.Float64frombits(b)))
	}},
	{"max_f32", "qd_bits_f32(qd_max_f32(qd_f32_from((qd_u32)a), qd_f32_from((qd_u32)b)))", func(a, b uint64) uint64 {
		return uint64(math.Float32bits(max(math.Float32frombits(uint32(a)), math.Float32frombits(uint32(b)))))
	}},
	{"round_f64", "qd_bits_f64(qd_round_f64(qd_f64_from(a)))", func(a, _ uint64) uint64 {
		return math.Float64bits(math.Round(math.Float64frombits(a)))
	}},
	{"round_f32", "qd_bits_f32(qd_round_f32(qd_f32_from((qd_u32)a)))", func(a, _ uint64) uint64 {
		return uint64(math.Float32bits(float32(math.Round(float64(math.Float32frombits(uint32(a)))))))
	}},
	{"abs_f64", "qd_bits_f64(qd_abs_f64(qd_f64_from(a)))", func(a, _ uint64) uint64 { return a &^ (1 << 63) }},
	{"atomic_min_f32", "({ qd_u32 m = (qd_u32)a; (void)qd_atomic_min_f32((float *)&m, qd_f32_from((qd_u32)b)); (qd_u64)m; })", func(a, b uint64) uint64 {
		return uint64(math.Float32bits(min(math.Float32frombits(uint32(a)), math.Float32frombits(uint32(b)))))
	}},
}

// saturate is gosem.FloatToInt's GPU result (PTX cvt.rzi's).
func saturate(t ir.Type, x float64) uint64 {
	bits, _ := gosem.Saturate(t, x)
	return bits
}

func helperInputs() [][2]uint64 {
	ints := []uint64{0, 1, 2, 3, 7, 31, 32, 33, 63, 64, 65, 100, 1 << 31, 1<<31 - 1, 1<<32 - 1, 1 << 63, 1<<63 - 1, math.MaxUint64,
		uint64(1<<64 - 7), uint64(0xFFFFFFFF80000000), uint64(0xFFFFFFFFFFFFFFFF - 30)}
	floats := []float64{0, math.Copysign(0, -1), 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, 1e-310, -1e-310,
		2147483647.5, 2147483648, -2147483648.5, -2147483649, 4294967295.5, 4294967296, 9.3e18, -9.3e18, 1.9e19,
		math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, 1e30, -1e30, 3.4e38}
	var in [][2]uint64
	for _, a := range ints {
		for _, b := range ints {
			in = append(in, [2]uint64{a, b})
		}
	}
	for _, x := range floats {
		for _, y := range floats {
			in = append(in, [2]uint64{math.Float64bits(x), math.Float64bits(y)})
			in = append(in, [2]uint64{uint64(math.Float32bits(float32(x))), uint64(math.Float32bits(float32(y)))})
		}
	}
	return in
}

func TestGoSemanticsHelpersOnHost(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skipf("no host C compiler (cc): the prelude's helpers are NOT run: %v", err)
	}
	var src strings.Builder
	src.WriteString("#include <stdio.h>\n" + hostVendor + commonHelpers())
	src.WriteString("int main(void) {\n\tunsigned op; qd_u64 a, b;\n\twhile (scanf(\"%u %llx %llx\", &op, &a, &b) == 3) {\n\t\tqd_u64 r = 0;\n\t\tswitch (op) {\n")
	for i, c := range helperCases {
		fmt.Fprintf(&src, "\t\tcase %d: r = %s; break;\n", i, c.c)
	}
	src.WriteString("\t\t}\n\t\tprintf(\"%llx\\n\", r);\n\t}\n\treturn 0;\n}\n")
	inputs := helperInputs()
	var stdin bytes.Buffer
	for i := range helperCases {
		for _, in := range inputs {
			fmt.Fprintf(&stdin, "%d %x %x\n", i, in[0], in[1])
		}
	}
	lines := runOnHost(t, cc, "helpers.c", src.String(), &stdin, "-O2", "-fno-strict-aliasing", "-ffp-contract=off", "-lm")
	if len(lines) != len(helperCases)*len(inputs) {
		t.Fatalf("the C program printed %d results for %d calls", len(lines), len(helperCases)*len(inputs))
	}
	bad := 0
	for i, c := range helperCases {
		for j, in := range inputs {
			got, _ := strconv.ParseUint(lines[i*len(inputs)+j], 16, 64)
			want := c.gofn(in[0], in[1])
			if got != want && !bothNaN(c.name, got, want) {
				if bad++; bad <= 10 {
					t.Errorf("%s(%#x, %#x) = %#x, Go gives %#x", c.name, in[0], in[1], got, want)
				}
			}
		}
	}
	t.Logf("%d helpers × %d inputs agree with Go", len(helperCases), len(inputs))
}

// runOnHost compiles the C or C++ program src, as file, with the host
// compiler cc and flags, runs it on stdin and returns what it printed,
// split at white space.
func runOnHost(t *testing.T, cc, file, src string, stdin io.Reader, flags ...string) []string {
	t.Helper()
	dir := t.TempDir()
	path, exe := filepath.Join(dir, file), filepath.Join(dir, "prog")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, append([]string{"-o", exe, path}, flags...)...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, Numbered(src))
	}
	cmd := exec.Command(exe)
	cmd.Stdin = stdin
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(out))
}

// bothNaN: NaN payloads are not part of Go's semantics.
func bothNaN(name string, a, b uint64) bool {
	if strings.HasSuffix(name, "f64") {
		return math.IsNaN(math.Float64frombits(a)) && math.IsNaN(math.Float64frombits(b))
	}
	if strings.HasSuffix(name, "f32") {
		x, y := math.Float32frombits(uint32(a)), math.Float32frombits(uint32(b))
		return x != x && y != y
	}
	return false
}
