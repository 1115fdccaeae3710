package csrc

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/devmath"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/ptxas"
)

func mustTarget(t testing.TB, arch string) Target {
	t.Helper()
	tg, err := TargetFor(arch)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func generate(t testing.TB, k *ir.Kernel, tg Target) (string, *kabi.Module) {
	t.Helper()
	plan, err := lower.Lower(k)
	if err != nil {
		t.Fatalf("lower %s: %v", k.Name, err)
	}
	src, layout, err := Generate(plan, tg, Options{})
	if err != nil {
		t.Fatalf("csrc %s for %s: %v", k.Name, tg.Arch, err)
	}
	return src, layout
}

// match checks src against regexps; a leading '!' means must not match.
func match(t *testing.T, src string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		if regexp.MustCompile(strings.TrimPrefix(p, "!")).MatchString(src) == neg {
			t.Errorf("source (un)expectedly matches %q; its entries:\n%s", p, ptxas.Numbered(entries(src)))
		}
	}
}

// entries is the source from its first entry on (what a failure shows).
func entries(src string) string {
	if i := strings.Index(src, "\n// task "); i >= 0 {
		return src[i+1:]
	}
	return src
}

func TestTargetFor(t *testing.T) {
	for _, c := range []struct {
		arch   string
		vendor Vendor
		wave   int
		proc   string
	}{
		{"gfx90a", AMD, 64, "gfx90a"},
		{"gfx90a:sramecc+:xnack-", AMD, 64, "gfx90a"},
		{"gfx942", AMD, 64, "gfx942"},
		{"gfx908", AMD, 64, "gfx908"},
		{"gfx1100", AMD, 32, "gfx1100"},
		{"gfx1030", AMD, 32, "gfx1030"},
		{"gfx1201", AMD, 32, "gfx1201"},
		{"sm_90", CUDA, 32, "sm_90"},
		{"sm_90a", CUDA, 32, "sm_90a"},
		{"sm_70", CUDA, 32, "sm_70"},
	} {
		tg, err := TargetFor(c.arch)
		if err != nil || tg.Vendor != c.vendor || tg.WaveSize != c.wave || tg.Processor() != c.proc {
			t.Errorf("TargetFor(%q) = %+v, %v", c.arch, tg, err)
		}
	}
	for _, bad := range []string{"", "gfx803", "gfx", "sm_50", "sm_x", "x86",
		"gfx9999999", "gfx90", "gfx090a", "gfx90A", "gfx-90a", "gfx90a:", "gfx90a:xnack", "gfx90a:+", "gfx90a:Xnack+",
		"sm_9999999999", "sm_1000", "sm_090", "sm_+90", "sm_90:x+"} {
		if tg, err := TargetFor(bad); err == nil {
			t.Errorf("TargetFor(%q) = %+v, want an error", bad, tg)
		}
	}
}

// Every primitive devmath's C calls is defined by every vendor's prelude.
func TestPreludesDefineMathPrimitives(t *testing.T) {
	for _, arch := range []string{"gfx90a", "gfx1100", "sm_80"} {
		p := prelude(mustTarget(t, arch))
		for _, name := range devmath.CPrimitives {
			if !strings.Contains(p, " "+name+"(") {
				t.Errorf("%s prelude lacks %s", arch, name)
			}
		}
	}
}

// The wave size is a per-target constant that the AMD compiler checks.
func TestWaveSize(t *testing.T) {
	for arch, want := range map[string]string{"gfx90a": "64", "gfx942": "64", "gfx1100": "32", "sm_90": "32"} {
		src, _ := generate(t, saxpy(), mustTarget(t, arch))
		match(t, src, `#define QD_WAVE_SIZE `+want+`\n`)
		if strings.HasPrefix(arch, "gfx") {
			match(t, src, `static_assert\(QD_WAVE_SIZE == __AMDGCN_WAVEFRONT_SIZE`)
		}
	}
}

// The source is header-free and its entries are the layout's, parameter
// for parameter.
func TestEntriesFollowLayout(t *testing.T) {
	for _, k := range corpus() {
		for _, arch := range []string{"gfx90a", "sm_80"} {
			src, layout := generate(t, k, mustTarget(t, arch))
			if strings.Contains(src, "#include") {
				t.Errorf("%s: the source includes a header", k.Name)
			}
			for _, task := range layout.Tasks {
				var params []string
				for _, s := range task.Slots {
					params = append(params, `[\w ]+\*?`+regexp.QuoteMeta(slotName(s)))
				}
				bound := task.BlockDim
				if bound == 0 {
					bound = kabi.MaxBlockDim // a block loop sized at launch
				}
				match(t, src, fmt.Sprintf(`QD_KERNEL void QD_BOUNDS\(%d\) %s\(%s\)\n\{`, bound, task.Entry, strings.Join(params, ", ")))
			}
		}
	}
}

func TestSaxpySource(t *testing.T) {
	src, _ := generate(t, saxpy(), mustTarget(t, "gfx90a"))
	match(t, entries(src),
		`QD_KERNEL void QD_BOUNDS\(256\) saxpy_t0\(float s0, float \*a1, qd_i64 a1_d0, float \*a2\)`,
		`if \(a1_d0 <= 0\)\n\t\treturn;`,
		`= \(qd_u64\)qd_gdim\(\) \* qd_bdim\(\);`, // grid-stride
		`< 0x80000000LL && t\d+ < 0x80000000ULL;`, // 32-bit indices when they fit
		`t\d+ = s0 \* t\d+;\n\t\tt\d+ = a2\[v\d+_i\];\n\t\tt\d+ = t\d+ \+ t\d+;`,
		`!fma`,
	)
}

func TestGoSemanticsHelpersUsed(t *testing.T) {
	src, _ := generate(t, intOps(ir.I32), mustTarget(t, "gfx90a"))
	match(t, src,
		`\(qd_i32\)\(\(qd_u32\)v\d+_acc \+ \(qd_u32\)t\d+\)`, // wrapping add
		`qd_div_i32\(`, `qd_rem_i32\(`,
		`qd_shl_i32\(v\d+_acc, \(qd_u64\)s\d+\)`, // a signed count sign-extends: negative is huge
		`qd_shr_i32\(v\d+_acc, \(qd_u64\)70LL\)`,
	)
	src, _ = generate(t, conversions(), mustTarget(t, "gfx90a"))
	match(t, src, `qd_cvt_i32_f32\(`, `qd_cvt_u64_f64\(`, `\(float\)t\d+`, `\(double\)t\d+`)
	src, _ = generate(t, floatOps(ir.F64), mustTarget(t, "gfx90a"))
	match(t, src, `qd_min_f64\(`, `qd_max_f64\(`, `qd_round_f64\(`, `__qd_sin_f64\(`,
		`QD_MATH double __qd_sin_f64\(double a\)`, `t\d+ = t\d+ != t\d+;`)
}

func TestLogicalEvaluatesRightOnlyWhenNeeded(t *testing.T) {
	src, _ := generate(t, logic(), mustTarget(t, "sm_80"))
	match(t, src,
		`(?s)t(\d+) = t\d+;\n\t\tif \(t(\d+)\) \{\n\t\t\tt\d+ = \(qd_i32\)qd_atomic_add_u32`, // &&
		`(?s)if \(!t\d+\) \{\n\t\t\tt\d+ = \(qd_i32\)qd_atomic_add_u32`,                      // ||
	)
}

func TestAtomics(t *testing.T) {
	src, _ := generate(t, atomics(), mustTarget(t, "gfx942"))
	match(t, src,
		`qd_red_add_u32\(\(qd_u32 \*\)&a1\[`, // an i32 add, old value unused
		`qd_atomic_add_u64\(\(qd_u64 \*\)&a3\[`,
		`qd_red_add_f32\(&a5\[`,
		`qd_atomic_min_i64\(&a3\[`, `qd_atomic_max_u32\(&a2\[`,
		`qd_atomic_min_f64\(&a6\[`, // the CAS loop
		`qd_f32_from\(qd_atomic_exch_u32\(\(qd_u32 \*\)&a5\[v\d+_i\], qd_bits_f32\(`,
		`qd_atomic_cas_u64\(\(qd_u64 \*\)&a6\[v\d+_i\], qd_bits_f64\(\(0x0p\+00\)\), qd_bits_f64\(`,
	)
}

func TestControlFlow(t *testing.T) {
	src, _ := generate(t, control(), mustTarget(t, "gfx1100"))
	match(t, src, `(?s)for \(;;\) \{.*for \(;;\) \{.*goto L1;.*goto L2;`, `L1:;`, `L2:;`)
}

func TestSerialTemps(t *testing.T) {
	src, layout := generate(t, serialTemps(), mustTarget(t, "gfx90a"))
	if len(layout.Tasks) != 3 {
		t.Fatalf("%d tasks", len(layout.Tasks))
	}
	match(t, src,
		`if \(\(qd_tid\(\) \| qd_bid\(\)\) != 0\)\n\t\treturn;`,
		`\*\(unsigned char \*\)\(temps \+ 8\) = v\d+_flag \? 1 : 0;`, // a bool temporary is a byte
		`v\d+_flag = \(\*\(unsigned char \*\)\(temps \+ 8\) != 0\);`,
		`\*\(double \*\)\(temps \+ 0\) = v\d+_s;`,
	)
}

func TestConstants(t *testing.T) {
	src, _ := generate(t, constants(), mustTarget(t, "sm_90"))
	match(t, src, `\(qd_i32\)0x80000000u`, `\(qd_i64\)0x8000000000000000ULL`, `\(-7\)`, `\(-7LL\)`,
		`qd_f64_from\(0x7FF8000000000001ULL\)`, `qd_f64_from\(0x7FF0000000000000ULL\)`, `qd_f32_from\(0xFF800000u\)`,
		`\(-0x0p\+00\)`, `\(0x1p-1074\)`, `\(0x1p-149f\)`)
}

func TestUnitRejectsDuplicateEntries(t *testing.T) {
	u, err := NewUnit(mustTarget(t, "gfx90a"))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := lower.Lower(saxpy())
	if err != nil {
		t.Fatal(err)
	}
	layout, _ := kabi.Layout(plan)
	if err := u.Add(plan, layout); err != nil {
		t.Fatal(err)
	}
	if err := u.Add(plan, layout); err == nil {
		t.Fatal("a second saxpy_t0 was accepted")
	}
	if _, err := NewUnit(Target{Arch: "gfx90a"}); err == nil {
		t.Error("a target without a vendor was accepted")
	}
}

// Malformed IR (which the verifier would reject) gives a positioned error,
// never a panic.
func TestErrors(t *testing.T) {
	tg := mustTarget(t, "gfx90a")
	mk := func(edit func(b *ir.Builder, x *ir.Param, i *ir.Var)) *lower.Plan {
		b := ir.NewBuilder("bad")
		x := b.Array("x", ir.F32, 1)
		var plan *lower.Plan
		b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) { edit(b, x, i) })
		plan, err := lower.Lower(b.Kernel())
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	plan := mk(func(b *ir.Builder, x *ir.Param, i *ir.Var) { b.Store(x, ir.F32c(1), ir.Ref(i)) })
	// Break the plan after lowering: a store of the wrong type, and a
	// layout without the slots the entry needs.
	plan.Tasks[0].Loop.Body[0].(*ir.Store).Value = ir.I32c(1)
	if _, _, err := Generate(plan, tg, Options{}); err == nil || !strings.Contains(err.Error(), "store to x") {
		t.Errorf("store of a wrong type: %v", err)
	}
	plan = mk(func(b *ir.Builder, x *ir.Param, i *ir.Var) { b.Store(x, ir.F32c(1), ir.Ref(i)) })
	layout, _ := kabi.Layout(plan)
	layout.Tasks[0].Slots = nil
	var ie *ir.Error
	if _, err := Compile(plan, layout, tg); err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), "missing from the layout") {
		t.Errorf("layout without slots: %v", err)
	}
	if _, _, err := Generate(nil, tg, Options{}); err == nil {
		t.Error("nil plan accepted")
	}
}

func TestReductions(t *testing.T) {
	src, layout := generate(t, reductions(), mustTarget(t, "gfx90a"))
	if layout.Tasks[0].BlockDim != 100 {
		t.Fatalf("block %d", layout.Tasks[0].BlockDim)
	}
	e := entries(src)
	match(t, e,
		`QD_SHARED float r0_block\[100\]`,
		`r0_acc = \(-0x0p\+00f\);`, // the identity of a float sum is -0
		`r1_acc = 2147483647;`,
		`r2_acc = qd_f64_from\(0xFFF0000000000000ULL\);`,
		`r0_acc = r0_acc \+ t\d+;`,
		`r1_acc = t\d+ < r1_acc \? t\d+ : r1_acc;|r1_acc = r1_acc < t\d+ \? r1_acc : t\d+;`,
		`r2_acc = qd_max_f64\(r2_acc, t\d+\);`,
		`r3_acc = \(qd_u64\)\(\(qd_u64\)r3_acc \+ \(qd_u64\)1ULL\);`,
		`\t\tgoto done;`,
		`done:;`,
		`for \(qd_u32 s = 64u; s > 0u; s >>= 1\)`,
		`if \(t\d+ < s && t\d+ \+ s < 100u\)`,
		`QD_BARRIER\(\);`,
		`qd_red_add_f32\(&a1\[0LL\], r0_block\[0\]\);`,
		`t\d+ = qd_atomic_max_f64\(&a3\[t\d+\], r2_block\[0\]\);`, // a CAS loop: no reduction form
		`!return;\n\t\t\} else`,                                   // no thread leaves before the barriers
	)
	// The 2-D task's sum follows the outer index: per-iteration atomics.
	second := e[strings.Index(e, "// task 1"):]
	match(t, second, `qd_red_add_u64\(\(qd_u64 \*\)&a6\[`, `!QD_BARRIER`, `!r\d_acc`)
}
