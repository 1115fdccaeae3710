package csrc

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/amdtools"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/ptxas"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// A block task's entry: the stride over blocks, the shared buffer zeroed
// by all threads between barriers, a barrier after each thread loop, the
// launch bound of the loop's size (1024 when the launch sets it).
func TestBlockSource(t *testing.T) {
	src, layout := generate(t, suitekernels.BlockTreeSum(), mustTarget(t, "gfx90a"))
	if task := layout.Tasks[0]; task.Kind != lower.Block || task.BlockDim != 128 || task.SharedBytes != 512 {
		t.Fatalf("task %+v", task)
	}
	e := entries(src)
	match(t, e,
		`QD_KERNEL void QD_BOUNDS\(128\) blockTreeSum_t0\(`,
		`QD_SHARED qd_u64 bk_shm\[64\];`,
		`if \(a1_d0 <= 0\)\n\t\treturn;`,
		`for \(bk_b = qd_bid\(\); bk_b < \(qd_u64\)a1_d0; bk_b \+= qd_gdim\(\)\) \{\n\t\tv\d+_b = \(qd_i64\)bk_b;`,
		`for \(bk_i = bk_tid; bk_i < 64u; bk_i \+= 128u\)\n\t\t\tbk_shm\[bk_i\] = 0ULL;\n\t\tQD_BARRIER\(\);`,
		`v\d+_t = \(qd_i64\)bk_tid;`, // a thread loop's index: the thread's, unguarded
		`\(\(qd_i32 \*\)\(\(unsigned char \*\)bk_shm \+ 0\)\)\[v\d+_t\] = t\d+;\n\t\t\}\n\t\tQD_BARRIER\(\);`,
		`(?s)goto L2;\n\t+// thread loop.*QD_BARRIER\(\);\n.*L1:;\n\t\t\}\nL2:;`, // a thread loop inside a uniform loop
		`!before the next block`, // the body ends with a thread loop's barrier
		`!qd_shfl`,
	)
	if strings.Contains(src, "qd_shfl_down_u32") || strings.Contains(src, "qd_satomic") {
		t.Error("a block task without collectives or shared atomics has their primitives")
	}
	src, _ = generate(t, saxpy(), mustTarget(t, "gfx90a"))
	if strings.Contains(src, "bk_") || strings.Contains(src, "qd_block") {
		t.Error("a kernel without block loops has block code")
	}
	// Shared atomics use the shared-memory primitives; a record array is
	// addressed by its leaves.
	src, _ = generate(t, suitekernels.BlockHistogram(), mustTarget(t, "sm_80"))
	match(t, src, `qd_sred_add_u32\(\(qd_u32 \*\)&\(\(qd_i32 \*\)\(\(unsigned char \*\)bk_shm \+ 0\)\)\[`,
		`qd_red_add_u32\(\(qd_u32 \*\)&a1\[`, `red\.shared\.add\.u32 \[%0\], %1;`, `cvta\.to\.shared\.u64`)
	src, _ = generate(t, alignedShared(), mustTarget(t, "sm_80"))
	match(t, src, `QD_SHARED __attribute__\(\(aligned\(16\)\)\) qd_u64 bk_shm\[18\];`, `\(\(unsigned char \*\)bk_shm \+ 16\)`)
	src, _ = generate(t, suitekernels.BlockRecords(), mustTarget(t, "gfx1100"))
	match(t, src, `\*\(qd_i32 \*\)\(\(\(unsigned char \*\)\(\(unsigned char \*\)bk_shm \+ 0\)\) \+ \(qd_u64\)t\d+ \* 8u \+ 4\)\) = t\d+;`)
}

// The collectives: warp shuffles, then one barrier and the scratch's two
// halves in turn; redux.sync for 32-bit integers on sm_80 and later; a
// block of one warp at most broadcasts lane 0's result and needs no
// scratch.
func TestBlockCollectivesSource(t *testing.T) {
	for _, c := range []struct {
		arch, scratch string
	}{{"gfx90a", `bk_scr\[32\]`}, {"sm_70", `bk_scr\[64\]`}} {
		src, _ := generate(t, suitekernels.BlockCollectives(ir.F64), mustTarget(t, c.arch))
		match(t, src,
			`QD_KERNEL void QD_BOUNDS\(1024\) blockCollectives_t0\(`,
			`QD_SHARED qd_u64 `+c.scratch+`;`,
			`QD_DEV double qd_wred_add_f64\(double v, qd_u32 lane, qd_u32 lanes, qd_u32 mask, qd_u32 d0\)`,
			`double o = qd_f64_from\(qd_shfl_down_u64\(qd_bits_f64\(v\), lane, d, mask\)\);\n\t\tif \(lane \+ d < lanes\)\n\t\t\tv = v \+ o;`,
			`QD_DEV double qd_wscan_f64\(`, `qd_shfl_up_u64\(`,
			`if \(bk_lane == 0u\)\n\t+\*\(double \*\)&bk_scr\[bk_par \+ bk_warp\] = t\d+;\n\t+QD_BARRIER\(\);`,
			`bk_par \^= \d+u; // the next collective writes the other half`,
			`t\d+ = t\d+ \+ \(0x0p\+00\);`, // a float sum is +0, not -0
			`bk_mask = bk_lanes >= 32u \? 0xFFFFFFFFu : \(1u << bk_lanes\) - 1u;`,
		)
	}
	cuda, _ := generate(t, suitekernels.BlockCollectives(ir.F64), mustTarget(t, "sm_70"))
	match(t, cuda, `shfl\.sync\.down\.b32 %0, %1, %2, 0x1f, %3;`, `shfl\.sync\.up\.b32 %0, %1, %2, 0, %3;`, `!redux`)
	amd, _ := generate(t, suitekernels.BlockCollectives(ir.F64), mustTarget(t, "gfx942"))
	match(t, amd, `__builtin_amdgcn_ds_bpermute\(\(int\)\(\(lane \+ d\) << 2\), \(int\)v\)`, `bk_lane = bk_tid & 63u;`)
	src, _ := generate(t, suitekernels.BlockCollectives(ir.I32), mustTarget(t, "sm_90"))
	match(t, src, `qd_redux_add_u32\(\(qd_u32\)\(qd_i32\)v, mask\)`, `redux\.sync\.min\.s32`)
	src, _ = generate(t, constCollectives(7, ir.F32), mustTarget(t, "gfx1100"))
	match(t, entries(src), `!bk_scr`, `!QD_BARRIER\(\);\n\t\tt\d+ = \*`, `qd_wred_add_f32\(v\d+_v, bk_lane, bk_lanes, bk_mask, 4u\)`,
		`qd_f32_from\(qd_bcast0_u32\(qd_bits_f32\(t\d+\), bk_mask\)\)`, `qd_wscan_f32\(v\d+_v, bk_lane, bk_mask, 7u\)`,
		`bk_lanes = bk_warp == 0u \? 7u : 32u;`)
	src, _ = generate(t, constCollectives(100, ir.I32), mustTarget(t, "sm_80"))
	match(t, entries(src), `QD_SHARED qd_u64 bk_scr\[8\];`, `bk_lanes = bk_warp == 3u \? 4u : 32u;`,
		`t\d+ = \(qd_i32\)\(\(qd_u32\)t\d+ \+ \(qd_u32\)t\d+\);`) // the pairwise fold of 4 warps
}

// clangAMDAssembly compiles HIP source src for target with clang to
// AMDGPU assembly.
func clangAMDAssembly(t *testing.T, clang amdtools.Clang, target, src string) string {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "k.hip"), filepath.Join(dir, "k.s")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-x", "hip", "--offload-arch=" + target, "--cuda-device-only", "-nogpuinc", "-nogpulib", "-S"}, ClangOptions()...)
	if b, err := exec.Command(clang.Path, append(args, "-o", out, in)...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// What the compilers make of block tasks: barriers, shared memory (of the
// size the arrays and the scratch take), shuffles, shared atomics, and
// redux.sync on sm_80 and later. The PTX is clang's (the CUDA flavour;
// NVRTC compiles the same text on a GPU machine), assembled by ptxas; the
// AMD assembly is clang's for gfx90a (wave64) and gfx1100 (wave32).
func TestBlockAssembly(t *testing.T) {
	clang, err := amdtools.FindClang()
	if err != nil {
		amdtools.Unavailable(t, "clang", err)
	}
	kernels := []*ir.Kernel{suitekernels.BlockCollectives(ir.I32), suitekernels.BlockHistogram(), constCollectives(32, ir.F32)}
	unit := func(arch string) string {
		u, err := NewUnit(mustTarget(t, arch))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range kernels {
			plan, err := lower.Lower(k)
			if err != nil {
				t.Fatal(err)
			}
			layout, err := kabi.Layout(plan)
			if err == nil {
				err = u.Add(plan, layout)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		return u.Source()
	}
	for _, c := range []struct {
		arch string
		want []string
	}{
		{"gfx90a", []string{`ds_bpermute_b32`, `s_barrier`, `v_readlane_b32`, `ds_add_u32`, `ds_write_b64`,
			`\.amdhsa_kernel blockCollectives_t0\n\s+\.amdhsa_group_segment_fixed_size 256\n`, // the scratch, 2 × 16 warps
			`\.amdhsa_kernel blockHistogram_t0\n\s+\.amdhsa_group_segment_fixed_size 64\n`}},  // the bins, in 8-byte words
		{"gfx1100", []string{`ds_bpermute_b32`, `s_barrier`, `ds_add_u32`,
			`\.amdhsa_kernel blockCollectives_t0\n\s+\.amdhsa_group_segment_fixed_size 512\n`}},
	} {
		s := clangAMDAssembly(t, clang, c.arch, unit(c.arch))
		for _, w := range c.want {
			if !regexp.MustCompile(w).MatchString(s) {
				t.Errorf("%s: no %q in the assembly", c.arch, w)
			}
		}
	}
	tool, err := ptxas.Find()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	for _, sm := range tool.Archs {
		text, err := clang.CompileCUDA(dir, "blocks", sm, unit("sm_"+strconv.Itoa(sm)), ClangOptions())
		if err != nil {
			t.Fatal(err)
		}
		want := []string{`bar\.sync 0;`, `shfl\.sync\.down\.b32`, `shfl\.sync\.up\.b32`, `shfl\.sync\.idx\.b32`,
			`red\.shared\.add\.u32`, `ld\.shared\.`, `st\.shared\.u64`, `\.shared \.align 8 \.b8 \S*bk_scr\S*\[512\]`}
		if sm >= 80 {
			want = append(want, `redux\.sync\.add\.u32`, `redux\.sync\.min\.s32`, `redux\.sync\.max\.s32`)
		} else if strings.Contains(text, "redux.sync") {
			t.Errorf("sm_%d: redux.sync before sm_80", sm)
		}
		for _, w := range want {
			if !regexp.MustCompile(w).MatchString(text) {
				t.Errorf("sm_%d: no %q in the PTX", sm, w)
			}
		}
		if err := tool.Assemble(dir, "blocks", sm, text); err != nil {
			t.Error(err)
		}
	}
}

// bigShared is a block loop of bs threads (a parameter) with a shared
// array of n bytes and a block sum.
func bigShared(n int) *ir.Kernel {
	b := ir.NewBuilder("bigShared")
	out := b.Array("out", ir.I32, 1)
	bs := b.Scalar("bs", ir.I64)
	b.Blocks(ir.LenOf(out, 0), ir.P(bs), func(blk *ir.Var) {
		sh := b.Shared("sh", ir.U8, n)
		v := b.PerThread("v", ir.I32)
		b.Threads(func(t *ir.Var) { b.Assign(v, ir.Conv(ir.I32, ir.Ld(sh, ir.Ref(t)))) })
		s := b.BlockReduce(ir.Add, v)
		b.Threads(func(t *ir.Var) {
			b.If(ir.Op(ir.Eq, ir.Ref(t), ir.I64c(0)), func() { b.Store(out, ir.Ref(s), ir.Ref(blk)) }, nil)
		})
	})
	return b.Kernel()
}

// The scratch fits beside the shared arrays under the 48 KiB limit: in two
// halves (one barrier per collective) when it can, in one (two barriers)
// when only that fits, and not at all is an error that says so.
func TestBlockScratchLimit(t *testing.T) {
	sm := mustTarget(t, "sm_80") // 32 warps of 32 at most: 256 bytes a half
	src, _ := generate(t, bigShared(ir.MaxSharedBytes-512), sm)
	match(t, src, `QD_SHARED qd_u64 bk_shm\[\d+\], bk_scr\[64\];`, `bk_par \^= 32u;`)
	src, _ = generate(t, bigShared(ir.MaxSharedBytes-300), sm)
	match(t, src, `QD_SHARED qd_u64 bk_shm\[\d+\], bk_scr\[32\];`, `!bk_par`, `QD_BARRIER\(\); // the next collective may write the scratch`)
	plan, err := lower.Lower(bigShared(ir.MaxSharedBytes - 100))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Generate(plan, sm, Options{}); err == nil || !strings.Contains(err.Error(), "scratch") {
		t.Errorf("shared arrays leaving no room for the scratch: %v", err)
	}
}

// Index checks cover shared arrays: the site names the array, the extent
// is its constant one.
func TestBlockBounds(t *testing.T) {
	plan, err := lower.Lower(sharedBounds())
	if err != nil {
		t.Fatal(err)
	}
	src, layout, err := Generate(plan, mustTarget(t, "gfx90a"), Options{Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range layout.Sites {
		names = append(names, s.Array)
	}
	if strings.Join(names, " ") != "sh out sh" {
		t.Errorf("sites %v, want sh (the store), out, then sh (the load in its value)", names)
	}
	match(t, src, `if \(\(qd_u64\)t\d+ >= \(qd_u64\)32LL\) \{\n\t+qd_bounds\(temps \+ 0, 1, \(qd_u64\)t\d+, \(qd_u64\)32LL, 0\);`)
}

// Block statements outside a block task are internal errors, reported.
func TestBlockErrors(t *testing.T) {
	b := ir.NewBuilder("bad")
	x := b.Array("x", ir.F32, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) { b.Store(x, ir.F32c(1), ir.Ref(i)) })
	plan, err := lower.Lower(b.Kernel())
	if err != nil {
		t.Fatal(err)
	}
	v := &ir.Var{Name: "v", Type: ir.F32}
	for _, c := range []struct {
		s    ir.Stmt
		want string
	}{
		{&ir.Threads{Var: &ir.Var{Name: "t", Type: ir.I64}}, "thread loop outside a block loop"},
		{&ir.BlockReduce{Op: ir.Add, X: v, Result: v}, "block reduction outside a block loop"},
		{&ir.BlockScan{X: v, Result: v}, "block scan outside a block loop"},
	} {
		plan.Tasks[0].Loop.Body = []ir.Stmt{c.s}
		if _, _, err := Generate(plan, mustTarget(t, "gfx90a"), Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%T in a parallel task: %v", c.s, err)
		}
	}
}
