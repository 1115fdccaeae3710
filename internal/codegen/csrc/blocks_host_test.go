package csrc

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// The entries of block tasks run on the host: every GPU thread of a block
// is a POSIX thread, a barrier is a pthread barrier of the block, and a
// shuffle is an exchange through memory between two barriers of the warp,
// so the lanes meet at each shuffle as a warp's do. A shuffle from a lane
// the warp lacks gives a poison value, and a mask that is not the warp's
// lanes stops the program: a collective that used either would show.
// Blocks run one after another on the grid the test gives, fewer than the
// count, so the entries stride. What is checked is the entries' logic
// (vendor-neutral text); the vendor part, the shuffles and shared atomics
// of blockprims.go, is the compilers' to check (blocks_test.go).

// hostBlockVendor stands in for the vendor prelude and blockVendor.
const hostBlockVendor = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
typedef int qd_i32;
typedef unsigned int qd_u32;
typedef long long qd_i64;
typedef unsigned long long qd_u64;
#define QD_DEV static inline
#define QD_KERNEL extern "C"
#define QD_BOUNDS(block)
#define QD_SHARED static
static qd_u32 qd_bits_f32(float x) { qd_u32 u; __builtin_memcpy(&u, &x, 4); return u; }
static float qd_f32_from(qd_u32 u) { float x; __builtin_memcpy(&x, &u, 4); return x; }
static qd_u64 qd_bits_f64(double x) { qd_u64 u; __builtin_memcpy(&u, &x, 8); return u; }
static double qd_f64_from(qd_u64 u) { double x; __builtin_memcpy(&x, &u, 8); return x; }
static float qd_trunc_f32(float x) { return __builtin_truncf(x); }
static double qd_trunc_f64(double x) { return __builtin_trunc(x); }
static __thread qd_u32 h_tid;
static qd_u32 h_bid, h_bdim, h_gdim;
static pthread_barrier_t h_block, h_warp[1024];
static qd_u32 h_slot[1024];
static qd_u32 qd_tid(void) { return h_tid; }
static qd_u32 qd_bid(void) { return h_bid; }
static qd_u32 qd_bdim(void) { return h_bdim; }
static qd_u32 qd_gdim(void) { return h_gdim; }
#define QD_BARRIER() pthread_barrier_wait(&h_block)
static qd_u32 h_lanes(qd_u32 w) { qd_u32 n = h_bdim - w * QD_WAVE_SIZE; return n < QD_WAVE_SIZE ? n : QD_WAVE_SIZE; }
// h_exchange: every lane of the caller's warp passes v; each gets lane src's.
static qd_u32 h_exchange(qd_u32 v, qd_u32 lane, qd_u32 src, qd_u32 mask)
{
	qd_u32 w = h_tid / QD_WAVE_SIZE, n = h_lanes(w);
	if (lane != h_tid % QD_WAVE_SIZE || mask != (n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1u)) {
		fprintf(stderr, "thread %u: lane %u, mask %#x for a warp of %u lanes\n", h_tid, lane, mask, n);
		abort();
	}
	h_slot[h_tid] = v;
	pthread_barrier_wait(&h_warp[w]);
	qd_u32 r = src < n ? h_slot[w * QD_WAVE_SIZE + src] : 0xDEADBEEFu ^ (lane * 0x01000193u);
	pthread_barrier_wait(&h_warp[w]);
	return r;
}
static qd_u32 qd_shfl_down_u32(qd_u32 v, qd_u32 lane, qd_u32 d, qd_u32 mask) { return h_exchange(v, lane, lane + d, mask); }
static qd_u32 qd_shfl_up_u32(qd_u32 v, qd_u32 lane, qd_u32 d, qd_u32 mask) { return h_exchange(v, lane, lane >= d ? lane - d : 1000u, mask); }
static qd_u32 qd_bcast0_u32(qd_u32 v, qd_u32 mask) { return h_exchange(v, h_tid % QD_WAVE_SIZE, 0u, mask); }
static void (*h_fn)(void);
static void *h_thread(void *arg) { h_tid = (qd_u32)(size_t)arg; h_fn(); return 0; }
// h_launch runs gdim blocks of bdim threads of fn, one block after another.
static void h_launch(void (*fn)(void), qd_u32 bdim, qd_u32 gdim)
{
	static pthread_t th[1024];
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1 << 18);
	h_fn = fn, h_bdim = bdim, h_gdim = gdim;
	pthread_barrier_init(&h_block, 0, bdim);
	for (qd_u32 w = 0; w * QD_WAVE_SIZE < bdim; w++)
		pthread_barrier_init(&h_warp[w], 0, h_lanes(w));
	for (h_bid = 0; h_bid < gdim; h_bid++) {
		for (qd_u32 t = 0; t < bdim; t++)
			if (pthread_create(&th[t], &attr, h_thread, (void *)(size_t)t) != 0)
				abort();
		for (qd_u32 t = 0; t < bdim; t++)
			pthread_join(th[t], 0);
	}
	pthread_barrier_destroy(&h_block);
	for (qd_u32 w = 0; w * QD_WAVE_SIZE < bdim; w++)
		pthread_barrier_destroy(&h_warp[w]);
}
`

// hostAtomics are the atomics of global and shared memory, made of the
// host compiler's: the float ones and integer min and max by
// compare-and-swap loops.
func hostAtomics() string {
	var sb strings.Builder
	for _, space := range []struct{ atomic, red string }{{"qd_atomic", "qd_red"}, {"qd_satomic", "qd_sred"}} {
		for _, a := range atomicOps {
			for _, ty := range a.types {
				ct := cTypes[ty]
				var body string
				switch {
				case a.op == "exch":
					body = "return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);"
				case a.op == "add" && ty[0] != 'f' || a.op == "and" || a.op == "or" || a.op == "xor":
					body = fmt.Sprintf("return __atomic_fetch_%s(p, v, __ATOMIC_SEQ_CST);", a.op)
				default:
					combine := "old + v"
					if a.op == "min" {
						combine = "old < v ? old : v"
					} else if a.op == "max" {
						combine = "old > v ? old : v"
					}
					body = fmt.Sprintf("%[1]s old = *p; for (;;) { %[1]s nv = %[2]s; if (__atomic_compare_exchange(p, &old, &nv, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return old; }", ct, combine)
				}
				fmt.Fprintf(&sb, "QD_DEV %[1]s %[2]s_%[3]s_%[4]s(%[1]s *p, %[1]s v) { %[5]s }\n", ct, space.atomic, a.op, ty, body)
				if a.op != "exch" {
					fmt.Fprintf(&sb, "QD_DEV void %[2]s_%[3]s_%[4]s(%[1]s *p, %[1]s v) { (void)%[5]s_%[3]s_%[4]s(p, v); }\n", ct, space.red, a.op, ty, space.atomic)
				}
			}
		}
		for _, ty := range []string{"u32", "u64"} {
			fmt.Fprintf(&sb, "QD_DEV %[1]s %[3]s_cas_%[2]s(%[1]s *p, %[1]s cmp, %[1]s v) { __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); return cmp; }\n", cTypes[ty], ty, space.atomic)
		}
	}
	return sb.String()
}

// hostCase is one launch of a kernel on the host: its arrays (by name,
// each element's bits), scalars, the grid for its block and parallel
// tasks, and the check of what the arrays hold after it.
type hostCase struct {
	k       *ir.Kernel
	shapes  map[string][]int
	arrays  map[string][]uint64
	scalars map[string]uint64
	grid    int
	debug   bool
	// check sees the arrays, the violation record and the layout (whose
	// Sites the record's first word numbers, plus one).
	check func(t *testing.T, got map[string][]uint64, record []uint64, layout *kabi.Module)
}

// hostWrite adds c's kernel to u and writes its launch: the arrays as
// static data, one function per task calling its entry, and in main the
// launches and the printing of every array and the violation record.
func hostWrite(t *testing.T, u *Unit, ci int, c *hostCase, defs, main *strings.Builder) *kabi.Module {
	t.Helper()
	c.k.Name = fmt.Sprintf("h%d_%s", ci, c.k.Name)
	plan, err := lower.Lower(c.k)
	if err != nil {
		t.Fatalf("lower %s: %v", c.k.Name, err)
	}
	layout, err := kabi.LayoutWith(plan, kabi.Options{Bounds: c.debug})
	if err == nil {
		err = u.Add(plan, layout)
	}
	if err != nil {
		t.Fatalf("%s: %v", c.k.Name, err)
	}
	params := c.k.Params
	scalars := make([]uint64, len(params))
	shapes := make([][4]int, len(params))
	for i, p := range params {
		if !p.IsArray() {
			scalars[i] = c.scalars[p.Name]
			continue
		}
		data := c.arrays[p.Name]
		n := 1
		for d, e := range c.shapes[p.Name] {
			shapes[i][d] = e
			n *= e
		}
		if len(data) != n || len(c.shapes[p.Name]) != p.Dims {
			t.Fatalf("%s: array %s has %d values for its shape %v", c.k.Name, p.Name, len(data), c.shapes[p.Name])
		}
		words := make([]string, max(n, 1))
		for j := range words {
			words[j] = "0"
			if j < n {
				words[j] = strconv.FormatUint(data[j], 10) + "ULL"
			}
		}
		fmt.Fprintf(defs, "static %s h%d_a%d[%d] = {%s};\n", bitsType(p.Elem), ci, i, len(words), strings.Join(words, ", "))
	}
	temps := 8 * (layout.NumTemps + kabi.DebugWords)
	fmt.Fprintf(defs, "static qd_u64 h%d_temps[%d];\n", ci, temps/8)
	for ti, task := range layout.Tasks {
		var args []string
		for _, s := range task.Slots {
			switch s.Kind {
			case kabi.ScalarSlot:
				args = append(args, fmt.Sprintf("(%s)%dULL", slotType(params[s.Param].Elem), scalars[s.Param]))
			case kabi.ArraySlot:
				args = append(args, fmt.Sprintf("(%s *)h%d_a%d", arrayType(params[s.Param]), ci, s.Param))
			case kabi.DimSlot:
				args = append(args, fmt.Sprintf("%dLL", shapes[s.Param][s.Dim]))
			case kabi.TempsSlot:
				args = append(args, fmt.Sprintf("(unsigned char *)h%d_temps", ci))
			}
		}
		fmt.Fprintf(defs, "static void h%d_t%d(void) { %s(%s); }\n", ci, ti, task.Entry, strings.Join(args, ", "))
		bdim, gdim := task.BlockDim, c.grid
		switch {
		case task.Kind == lower.Serial:
			bdim, gdim = 1, 1
		case task.BlockDim == 0:
			bdim = int(task.BlockSize(scalars, shapes))
		}
		if task.Kind == lower.Block && task.HostTotal != nil {
			gdim = int(min(int64(gdim), max(task.HostTotal(scalars, shapes), 1)))
		}
		fmt.Fprintf(main, "\th_launch(h%d_t%d, %d, %d);\n", ci, ti, bdim, gdim)
	}
	for i, p := range params {
		if p.IsArray() {
			fmt.Fprintf(main, "\tfor (int j = 0; j < %d; j++) printf(\"%%llx\\n\", (qd_u64)h%d_a%d[j]);\n", len(c.arrays[p.Name]), ci, i)
		}
	}
	fmt.Fprintf(main, "\tfor (int j = 0; j < %d; j++) printf(\"%%llx\\n\", h%d_temps[%d + j]);\n", kabi.DebugWords, ci, layout.NumTemps)
	return layout
}

// bitsType is the C type that holds an element's bits.
func bitsType(t ir.Type) string {
	return map[int]string{1: "unsigned char", 2: "unsigned short", 4: "qd_u32", 8: "qd_u64"}[t.Size()]
}

// runHostCases runs the cases' entries for arch on the host and checks
// each.
func runHostCases(t *testing.T, arch string, cases []*hostCase) {
	cxx, err := exec.LookPath("c++")
	if err != nil {
		t.Skipf("no host C++ compiler (c++): the block entries are NOT run: %v", err)
	}
	tg := mustTarget(t, arch)
	u, err := NewUnit(tg)
	if err != nil {
		t.Fatal(err)
	}
	var defs, main strings.Builder
	layouts := make([]*kabi.Module, len(cases))
	for ci, c := range cases {
		layouts[ci] = hostWrite(t, u, ci, c, &defs, &main)
	}
	var src strings.Builder
	fmt.Fprintf(&src, "#define QD_WAVE_SIZE %d\n", tg.WaveSize)
	src.WriteString(hostBlockVendor + hostAtomics() + commonHelpers())
	floatMinMaxAtomics(&src, "qd_satomic", "float", "f32", "qd_u32")
	floatMinMaxAtomics(&src, "qd_satomic", "double", "f64", "qd_u64")
	for _, name := range slices.Sorted(maps.Keys(u.funcs)) {
		if name != "qd_block0" { // the vendor's: stood in for above
			src.WriteString(u.funcs[name])
		}
	}
	src.WriteString(strings.Join(u.entries, "\n"))
	src.WriteString(defs.String())
	src.WriteString("int main(void) {\n" + main.String() + "\treturn 0;\n}\n")
	dir := t.TempDir()
	file, exe := filepath.Join(dir, "blocks.cc"), filepath.Join(dir, "blocks")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cxx, "-std=c++17", "-O1", "-ffp-contract=off", "-fno-strict-aliasing", "-pthread", "-o", exe, file).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, Numbered(src.String()))
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(exe)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	words := strings.Fields(stdout.String())
	for ci, c := range cases {
		got := map[string][]uint64{}
		next := func() uint64 {
			if len(words) == 0 {
				t.Fatal("the program printed too few values")
			}
			v, err := strconv.ParseUint(words[0], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			words = words[1:]
			return v
		}
		for _, p := range c.k.Params {
			if p.IsArray() {
				for range c.arrays[p.Name] {
					got[p.Name] = append(got[p.Name], next())
				}
			}
		}
		record := make([]uint64, kabi.DebugWords)
		for j := range record {
			record[j] = next()
		}
		t.Run(c.k.Name, func(t *testing.T) { c.check(t, got, record, layouts[ci]) })
	}
	if len(words) != 0 {
		t.Errorf("%d values left over", len(words))
	}
}
