package csrc

import (
	"fmt"
	"strings"
	"sync"
)

// The prelude is the C every source starts with: no #include, no vendor
// header. It has three parts, written by the functions below from small
// tables rather than by hand per type:
//
//   - the vendor part (amdPrelude, cudaPrelude): qualifiers, thread and
//     block indices, the exact floating primitives, bit casts and the
//     atomic primitives. AMD maps them to clang's __builtin_amdgcn_* and
//     __hip_atomic_* builtins; CUDA to inline PTX, which NVRTC and clang
//     both accept, so the very same text is checked offline by clang and
//     ptxas.
//   - the common part (commonHelpers): Go's semantics where C's differ,
//     the rules of package codegen/gosem — integer division by zero and
//     MinInt / -1, shift counts of the width or more, saturating
//     float-to-integer conversion with NaN → 0, NaN-aware min and max with
//     -0 < +0 — and math.Round, float atomic min and max as
//     compare-and-swap loops.
//   - the primitives devmath's C functions call (devmath.CPrimitives),
//     which the vendor parts define.

// cTypes are the C types of the IR's scalar types in registers. The 8-
// and 16-bit integers are C's own (no typedef in the prelude: they need
// no helper), which C converts as Go does: to them by their low bits,
// from them by their signedness (values.go).
var cTypes = map[string]string{"i32": "qd_i32", "u32": "qd_u32", "i64": "qd_i64", "u64": "qd_u64", "f32": "float", "f64": "double",
	"i8": "signed char", "i16": "short", "u8": "unsigned char", "u16": "unsigned short"}

const typedefs = `typedef int qd_i32;
typedef unsigned int qd_u32;
typedef long long qd_i64;
typedef unsigned long long qd_u64;
`

// preludes caches prelude's text per target: it is the same every time,
// and writing it costs more than a small kernel's entries.
var preludes sync.Map // Target → string

// prelude returns the whole prelude for t.
func prelude(t Target) string {
	if p, ok := preludes.Load(t); ok {
		return p.(string)
	}
	p := writePrelude(t)
	preludes.Store(t, p)
	return p
}

func writePrelude(t Target) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "// qd prelude for %s (%s); header-free.\n", t.Processor(), t.Vendor)
	switch t.Vendor {
	case AMD:
		sb.WriteString(amdPrelude(t))
	case CUDA:
		sb.WriteString(cudaPrelude(t))
	}
	sb.WriteString(commonHelpers())
	return sb.String()
}

// atomicOps are the read-modify-write primitives the vendors provide, with
// the C types they take (signed integers go through the unsigned forms,
// which have the same bits, except for min and max).
var atomicOps = []struct {
	op    string
	types []string
}{
	{"add", []string{"u32", "u64", "f32", "f64"}},
	{"min", []string{"i32", "u32", "i64", "u64"}},
	{"max", []string{"i32", "u32", "i64", "u64"}},
	{"and", []string{"u32", "u64"}},
	{"or", []string{"u32", "u64"}},
	{"xor", []string{"u32", "u64"}},
	{"exch", []string{"u32", "u64"}},
}

func amdPrelude(t Target) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, `// AMD: clang's AMDGPU builtins (hiprtc, or clang -x hip -nogpuinc -nogpulib).
#pragma clang fp contract(off)
#define QD_DEV static __attribute__((device)) __attribute__((always_inline)) inline
#define QD_MATH static __attribute__((device))
#define QD_KERNEL extern "C" __attribute__((global))
#define QD_BOUNDS(block) __attribute__((amdgpu_flat_work_group_size(1, block)))
#define QD_SHARED __attribute__((shared))
// A block barrier that also orders the block's memory accesses, as CUDA's
// bar.sync does: release, s_barrier, acquire at work-group scope.
#define QD_BARRIER() do { __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"); } while (0)
#define QD_WAVE_SIZE %[1]d
#ifdef __AMDGCN_WAVEFRONT_SIZE
static_assert(QD_WAVE_SIZE == __AMDGCN_WAVEFRONT_SIZE, "qd: wave size %[1]d for %[2]s is not the compiler's");
#endif
%[3]s
#define QD_CONST __attribute__((address_space(4))) const
QD_DEV qd_u32 qd_tid(void) { return __builtin_amdgcn_workitem_id_x(); }
QD_DEV qd_u32 qd_bid(void) { return __builtin_amdgcn_workgroup_id_x(); }
// The block size and the grid (in work-items) from the HSA dispatch packet:
// workgroup_size_x is the u16 at byte 4, grid_size_x the u32 at byte 12.
QD_DEV qd_u32 qd_bdim(void) { return ((QD_CONST unsigned short *)__builtin_amdgcn_dispatch_ptr())[2]; }
QD_DEV qd_u32 qd_gdim(void) { return ((QD_CONST qd_u32 *)__builtin_amdgcn_dispatch_ptr())[3] / qd_bdim(); }
QD_DEV double qd_fma_f64(double a, double b, double c) { return __builtin_fma(a, b, c); }
%[4]sQD_DEV double qd_rint_f64(double x) { return __builtin_rint(x); }
QD_DEV qd_u64 qd_mulhi_u64(qd_u64 a, qd_u64 b) { return (qd_u64)(((unsigned __int128)a * b) >> 64); }
QD_DEV qd_u32 qd_clz_u64(qd_u64 x) { return x ? (qd_u32)__builtin_clzll(x) : 64u; }
QD_DEV qd_u64 qd_bits_f64(double x) { return __builtin_bit_cast(qd_u64, x); }
QD_DEV double qd_f64_from(qd_u64 u) { return __builtin_bit_cast(double, u); }
QD_DEV qd_u32 qd_bits_f32(float x) { return __builtin_bit_cast(qd_u32, x); }
QD_DEV float qd_f32_from(qd_u32 u) { return __builtin_bit_cast(float, u); }
`, t.WaveSize, t.Processor(), typedefs, amdSqrt)
	for _, f := range []string{"floor", "ceil", "trunc"} {
		fmt.Fprintf(&sb, "QD_DEV double qd_%[1]s_f64(double x) { return __builtin_%[1]s(x); }\n", f)
		fmt.Fprintf(&sb, "QD_DEV float qd_%[1]s_f32(float x) { return __builtin_%[1]sf(x); }\n", f)
	}
	// Relaxed atomics at agent (device) scope, as PTX's default .gpu scope.
	const scope = "__ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT"
	for _, a := range atomicOps {
		builtin := "__hip_atomic_fetch_" + a.op
		if a.op == "exch" {
			builtin = "__hip_atomic_exchange"
		}
		for _, ty := range a.types {
			ct := cTypes[ty]
			fmt.Fprintf(&sb, "QD_DEV %[1]s qd_atomic_%[2]s_%[3]s(%[1]s *p, %[1]s v) { return %[4]s(p, v, %[5]s); }\n", ct, a.op, ty, builtin, scope)
			if a.op != "exch" {
				fmt.Fprintf(&sb, "QD_DEV void qd_red_%[2]s_%[3]s(%[1]s *p, %[1]s v) { (void)%[4]s(p, v, %[5]s); }\n", ct, a.op, ty, builtin, scope)
			}
		}
	}
	for _, ty := range []string{"u32", "u64"} {
		fmt.Fprintf(&sb, "QD_DEV %[1]s qd_atomic_cas_%[2]s(%[1]s *p, %[1]s cmp, %[1]s v) { __hip_atomic_compare_exchange_strong(p, &cmp, v, %[3]s); return cmp; }\n",
			cTypes[ty], ty, "__ATOMIC_RELAXED, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT")
	}
	return sb.String()
}

// amdSqrt is a correctly rounded sqrt for AMDGPU whatever the compiler's
// version: LLVM before 17 (ROCm 5's hiprtc among them) lowers sqrt to the
// hardware's v_sqrt, which is not correctly rounded. This is the expansion
// LLVM 17 adopted from ROCm's device libraries: a v_rsq_f64 estimate
// refined by Goldschmidt and two Newton steps with fma, tiny inputs scaled
// by 2^256 (and the root by 2^-128, exactly), ±0 and +Inf passed through;
// a negative input or NaN gives NaN (rsq's). A float's sqrt computed in
// double and rounded once is correctly rounded (53 ≥ 2·24 + 2: the double
// rounding is innocuous). csrc's tests run this text on the host with a
// deliberately coarse estimate in place of v_rsq_f64 and check every
// result against the correctly rounded root.
const amdSqrt = `QD_DEV double qd_sqrt_f64(double x)
{
	bool scale = x < 0x1p-767;
	double sx = scale ? x * 0x1p+256 : x;
	double y = __builtin_amdgcn_rsq(sx);
	double s = sx * y, h = y * 0.5;
	double r = __builtin_fma(-h, s, 0.5);
	h = __builtin_fma(h, r, h);
	s = __builtin_fma(s, r, s);
	double d = __builtin_fma(-s, s, sx);
	s = __builtin_fma(d, h, s);
	d = __builtin_fma(-s, s, sx);
	s = __builtin_fma(d, h, s);
	s = scale ? s * 0x1p-128 : s;
	return sx == 0 || sx == __builtin_inf() ? sx : s;
}
QD_DEV float qd_sqrt_f32(float x) { return (float)qd_sqrt_f64((double)x); }
`

// ptxReg is the inline-assembly constraint of a C type: r and l for 32- and
// 64-bit integers, f and d for floats.
var ptxReg = map[string]string{"i32": "r", "u32": "r", "i64": "l", "u64": "l", "f32": "f", "f64": "d"}

// ptxType is the PTX type of an atomic primitive.
func ptxType(op, ty string) string {
	switch {
	case ty[0] == 'f':
		return ty
	case op == "and" || op == "or" || op == "xor" || op == "exch":
		return "b" + ty[1:]
	case ty[0] == 'i':
		return "s" + ty[1:]
	}
	return ty
}

func cudaPrelude(t Target) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, `// CUDA: inline PTX for everything beyond C (NVRTC, or clang -x cuda -nocudainc -nocudalib).
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#ifndef __device__
#define __device__ __attribute__((device))
#endif
#ifndef __forceinline__
#define __forceinline__ __inline__ __attribute__((always_inline))
#endif
#ifndef __launch_bounds__
#define __launch_bounds__(n) __attribute__((launch_bounds(n)))
#endif
#ifndef __shared__
#define __shared__ __attribute__((shared))
#endif
#define QD_SHARED __shared__
#define QD_BARRIER() asm volatile("bar.sync 0;" ::: "memory")
#define QD_DEV static __device__ __forceinline__
#define QD_MATH static __device__
// Entries as CUDA's guide writes them: __global__ void __launch_bounds__(n) k(...).
#define QD_KERNEL extern "C" __global__
#define QD_BOUNDS(block) __launch_bounds__(block)
#define QD_WAVE_SIZE %d
%s`, t.WaveSize, typedefs)
	for _, s := range []struct{ name, reg string }{{"tid", "tid"}, {"bid", "ctaid"}, {"bdim", "ntid"}, {"gdim", "nctaid"}} {
		fmt.Fprintf(&sb, "QD_DEV qd_u32 qd_%s(void) { qd_u32 r; asm(\"mov.u32 %%0, %%%%%s.x;\" : \"=r\"(r)); return r; }\n", s.name, s.reg)
	}
	// asm1 writes a one-instruction primitive over registers.
	asm1 := func(ret, name, params, ins, outC, inC string, args ...string) {
		ops := make([]string, len(args))
		for i, a := range args {
			ops[i] = fmt.Sprintf(`"%s"(%s)`, inC, a)
		}
		fmt.Fprintf(&sb, "QD_DEV %s %s(%s) { %s r; asm(\"%s;\" : \"=%s\"(r) : %s); return r; }\n",
			ret, name, params, ret, ins, outC, strings.Join(ops, ", "))
	}
	asm1("double", "qd_fma_f64", "double a, double b, double c", "fma.rn.f64 %0, %1, %2, %3", "d", "d", "a", "b", "c")
	asm1("double", "qd_sqrt_f64", "double x", "sqrt.rn.f64 %0, %1", "d", "d", "x")
	asm1("float", "qd_sqrt_f32", "float x", "sqrt.rn.f32 %0, %1", "f", "f", "x")
	asm1("double", "qd_rint_f64", "double x", "cvt.rni.f64.f64 %0, %1", "d", "d", "x")
	for _, f := range []struct{ name, mode string }{{"floor", "rmi"}, {"ceil", "rpi"}, {"trunc", "rzi"}} {
		asm1("double", "qd_"+f.name+"_f64", "double x", "cvt."+f.mode+".f64.f64 %0, %1", "d", "d", "x")
		asm1("float", "qd_"+f.name+"_f32", "float x", "cvt."+f.mode+".f32.f32 %0, %1", "f", "f", "x")
	}
	asm1("qd_u64", "qd_mulhi_u64", "qd_u64 a, qd_u64 b", "mul.hi.u64 %0, %1, %2", "l", "l", "a", "b")
	asm1("qd_u32", "qd_clz_u64", "qd_u64 x", "clz.b64 %0, %1", "r", "l", "x")
	asm1("qd_u64", "qd_bits_f64", "double x", "mov.b64 %0, %1", "l", "d", "x")
	asm1("double", "qd_f64_from", "qd_u64 u", "mov.b64 %0, %1", "d", "l", "u")
	asm1("qd_u32", "qd_bits_f32", "float x", "mov.b32 %0, %1", "r", "f", "x")
	asm1("float", "qd_f32_from", "qd_u32 u", "mov.b32 %0, %1", "f", "r", "u")
	// Atomics on generic addresses (global memory's generic and global
	// addresses coincide), relaxed at .gpu scope, PTX's defaults. The
	// memory clobber keeps the compiler from moving memory accesses across.
	for _, a := range atomicOps {
		for _, ty := range a.types {
			ct, c, pt := cTypes[ty], ptxReg[ty], ptxType(a.op, ty)
			fmt.Fprintf(&sb, "QD_DEV %[1]s qd_atomic_%[2]s_%[3]s(%[1]s *p, %[1]s v) { %[1]s r; asm volatile(\"atom.%[2]s.%[4]s %%0, [%%1], %%2;\" : \"=%[5]s\"(r) : \"l\"(p), \"%[5]s\"(v) : \"memory\"); return r; }\n",
				ct, a.op, ty, pt, c)
			if a.op != "exch" {
				fmt.Fprintf(&sb, "QD_DEV void qd_red_%[2]s_%[3]s(%[1]s *p, %[1]s v) { asm volatile(\"red.%[2]s.%[4]s [%%0], %%1;\" :: \"l\"(p), \"%[5]s\"(v) : \"memory\"); }\n",
					ct, a.op, ty, pt, c)
			}
		}
	}
	for _, ty := range []string{"u32", "u64"} {
		ct, c := cTypes[ty], ptxReg[ty]
		fmt.Fprintf(&sb, "QD_DEV %[1]s qd_atomic_cas_%[2]s(%[1]s *p, %[1]s cmp, %[1]s v) { %[1]s r; asm volatile(\"atom.cas.b%[3]s %%0, [%%1], %%2, %%3;\" : \"=%[4]s\"(r) : \"l\"(p), \"%[4]s\"(cmp), \"%[4]s\"(v) : \"memory\"); return r; }\n",
			ct, ty, ty[1:], c)
	}
	return sb.String()
}

// intTypes describes the integer types for the generated helpers: C type,
// unsigned C type, width, and the extreme values as C literals.
var intTypes = []struct {
	name, ct, ut   string
	bits           int
	signed         bool
	maxLit, minLit string
}{
	{"i32", "qd_i32", "qd_u32", 32, true, "(qd_i32)0x7FFFFFFF", "(qd_i32)0x80000000u"},
	{"u32", "qd_u32", "qd_u32", 32, false, "0xFFFFFFFFu", "0u"},
	{"i64", "qd_i64", "qd_u64", 64, true, "(qd_i64)0x7FFFFFFFFFFFFFFFULL", "(qd_i64)0x8000000000000000ULL"},
	{"u64", "qd_u64", "qd_u64", 64, false, "0xFFFFFFFFFFFFFFFFULL", "0ULL"},
}

// commonHelpers are the vendor-neutral helpers with Go's semantics.
func commonHelpers() string {
	var sb strings.Builder
	sb.WriteString("// Go's semantics where C's differ (C leaves these cases undefined).\n")
	for _, it := range intTypes {
		// Division: x / 0 gives all ones and x % 0 gives x (gosem.DivZero:
		// Go panics; the GPU has no trap, and C must not see a division by
		// zero); MinInt / -1 is MinInt with remainder 0, as in Go
		// (gosem.Division).
		if it.signed {
			fmt.Fprintf(&sb, "QD_DEV %[1]s qd_div_%[2]s(%[1]s x, %[1]s y) { return y == 0 ? (%[1]s)-1 : y == -1 ? (%[1]s)(0 - (%[3]s)x) : x / y; }\n", it.ct, it.name, it.ut)
			fmt.Fprintf(&sb, "QD_DEV %[1]s qd_rem_%[2]s(%[1]s x, %[1]s y) { return y == 0 ? x : y == -1 ? 0 : x %% y; }\n", it.ct, it.name)
			// >> of a signed value shifts in sign bits: a count of the
			// width or more is width-1 (gosem.ShiftWide).
			fmt.Fprintf(&sb, "QD_DEV %[1]s qd_shr_%[2]s(%[1]s x, qd_u64 n) { return x >> (n >= %[3]d ? %[3]d : n); }\n", it.ct, it.name, it.bits-1)
		} else {
			fmt.Fprintf(&sb, "QD_DEV %[1]s qd_div_%[2]s(%[1]s x, %[1]s y) { return y == 0 ? ~(%[1]s)0 : x / y; }\n", it.ct, it.name)
			fmt.Fprintf(&sb, "QD_DEV %[1]s qd_rem_%[2]s(%[1]s x, %[1]s y) { return y == 0 ? x : x %% y; }\n", it.ct, it.name)
			fmt.Fprintf(&sb, "QD_DEV %[1]s qd_shr_%[2]s(%[1]s x, qd_u64 n) { return n >= %[3]d ? 0 : x >> n; }\n", it.ct, it.name, it.bits)
		}
		fmt.Fprintf(&sb, "QD_DEV %[1]s qd_shl_%[2]s(%[1]s x, qd_u64 n) { return n >= %[4]d ? 0 : (%[1]s)((%[3]s)x << n); }\n", it.ct, it.name, it.ut, it.bits)
		// Float to integer truncates; out of range saturates and NaN gives
		// 0, as PTX's cvt.rzi does (gosem.FloatToInt: Go leaves both
		// implementation-defined).
		for _, ft := range []struct{ name, ct, suffix string }{{"f32", "float", "f"}, {"f64", "double", ""}} {
			if it.signed {
				fmt.Fprintf(&sb, "QD_DEV %[1]s qd_cvt_%[2]s_%[3]s(%[4]s x) { return x >= 0x1p%[5]d%[6]s ? %[7]s : x > -0x1p%[5]d%[6]s ? (%[1]s)x : x == x ? %[8]s : 0; }\n",
					it.ct, it.name, ft.name, ft.ct, it.bits-1, ft.suffix, it.maxLit, it.minLit)
			} else {
				fmt.Fprintf(&sb, "QD_DEV %[1]s qd_cvt_%[2]s_%[3]s(%[4]s x) { return x >= 0x1p%[5]d%[6]s ? %[7]s : x > -1.0%[6]s ? (%[1]s)x : 0; }\n",
					it.ct, it.name, ft.name, ft.ct, it.bits, ft.suffix, it.maxLit)
			}
		}
	}
	for _, ft := range []struct{ name, ct, ut, suffix, sign, one string }{
		{"f32", "float", "qd_u32", "f", "0x80000000u", "0x3F800000u"},
		{"f64", "double", "qd_u64", "", "0x8000000000000000ULL", "0x3FF0000000000000ULL"},
	} {
		fmt.Fprintf(&sb, "QD_DEV %[1]s qd_abs_%[2]s(%[1]s x) { return qd_%[2]s_from(qd_bits_%[2]s(x) & ~%[3]s); }\n", ft.ct, ft.name, ft.sign)
		// min and max: NaN if either is NaN (x+y is then NaN); equal
		// operands combine their bits, so min(-0, +0) = -0, max = +0
		// (gosem.MinMaxFloat).
		fmt.Fprintf(&sb, "QD_DEV %[1]s qd_min_%[2]s(%[1]s x, %[1]s y) { return x != x || y != y ? x + y : x == y ? qd_%[2]s_from(qd_bits_%[2]s(x) | qd_bits_%[2]s(y)) : x < y ? x : y; }\n", ft.ct, ft.name)
		fmt.Fprintf(&sb, "QD_DEV %[1]s qd_max_%[2]s(%[1]s x, %[1]s y) { return x != x || y != y ? x + y : x == y ? qd_%[2]s_from(qd_bits_%[2]s(x) & qd_bits_%[2]s(y)) : x > y ? x : y; }\n", ft.ct, ft.name)
		// math.Round: t = trunc(x) and x - t are exact, so |x - t| >= 0.5
		// decides without double rounding; the step is copysign(1, x).
		fmt.Fprintf(&sb, "QD_DEV %[1]s qd_round_%[2]s(%[1]s x) { %[1]s t = qd_trunc_%[2]s(x); %[1]s s = qd_%[2]s_from((qd_bits_%[2]s(x) & %[4]s) | %[5]s); return qd_abs_%[2]s(x - t) >= 0.5%[3]s ? t + s : t; }\n",
			ft.ct, ft.name, ft.suffix, ft.sign, ft.one)
		floatMinMaxAtomics(&sb, "qd_atomic", ft.ct, ft.name, ft.ut)
	}
	return sb.String()
}

// floatMinMaxAtomics writes the float atomic min and max of one type
// (prefix_min_f32, ...) over the compare-and-swap prefix_cas_u32 (or u64):
// a loop on the bits, which neither loops forever on NaN nor confuses -0
// with +0; no write when the value would not change (still linearizable:
// the element held old when it was read). The prefix is qd_atomic for
// global memory, qd_satomic for a block's shared memory (blockprims.go).
func floatMinMaxAtomics(sb *strings.Builder, prefix, ct, name, ut string) {
	for _, op := range []string{"min", "max"} {
		fmt.Fprintf(sb, `QD_DEV %[1]s %[6]s_%[3]s_%[2]s(%[1]s *p, %[1]s v)
{
	%[4]s *q = (%[4]s *)p;
	%[4]s old = *(volatile %[4]s *)q;
	for (;;) {
		%[4]s nv = qd_bits_%[2]s(qd_%[3]s_%[2]s(qd_%[2]s_from(old), v));
		if (nv == old)
			break;
		%[4]s seen = %[6]s_cas_%[5]s(q, old, nv);
		if (seen == old)
			break;
		old = seen;
	}
	return qd_%[2]s_from(old);
}
`, ct, name, op, ut, "u"+name[1:], prefix)
	}
}
