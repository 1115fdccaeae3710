package csrc

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/quadrants-go/qd/internal/ir"
)

// The C a block task (blocks.go) needs beyond the prelude, added to the
// unit's functions once it is used, so that kernels without block loops
// keep the prelude they had:
//
//   - the vendor part (blockVendor, key "qd_block0"): warp shuffles of 32
//     bits, the broadcast of lane 0, and the atomics of shared memory;
//     on CUDA sm_80 and later also redux.sync, the warp's reduction of
//     32-bit integers in one instruction;
//   - vendor-neutral helpers over those: 64-bit shuffles ("qd_block1"),
//     and per operation and type the warp's reduction and inclusive scan
//     ("qd_block2_*"), which the entries call.
//
// The keys sort in that order (Unit.Source writes functions by name), so
// each text follows what it calls. The tests run the vendor-neutral
// helpers on the host over stand-ins for the vendor part.

// Shuffles take the value, the caller's lane (AMD's ds_bpermute addresses
// the source lane itself), the distance and mask, the lanes of the warp
// that exist: a block whose size is not a multiple of the warp's has a
// last warp of fewer lanes, and CUDA's shfl.sync must name exactly the
// lanes that take part. A value shuffled from a lane that does not exist
// is undefined: every caller discards it.
const cudaShuffles = `QD_DEV qd_u32 qd_shfl_down_u32(qd_u32 v, qd_u32 lane, qd_u32 d, qd_u32 mask) { qd_u32 r; (void)lane; asm volatile("shfl.sync.down.b32 %0, %1, %2, 0x1f, %3;" : "=r"(r) : "r"(v), "r"(d), "r"(mask)); return r; }
QD_DEV qd_u32 qd_shfl_up_u32(qd_u32 v, qd_u32 lane, qd_u32 d, qd_u32 mask) { qd_u32 r; (void)lane; asm volatile("shfl.sync.up.b32 %0, %1, %2, 0, %3;" : "=r"(r) : "r"(v), "r"(d), "r"(mask)); return r; }
QD_DEV qd_u32 qd_bcast0_u32(qd_u32 v, qd_u32 mask) { qd_u32 r; asm volatile("shfl.sync.idx.b32 %0, %1, 0, 0x1f, %2;" : "=r"(r) : "r"(v), "r"(mask)); return r; }
// The shared-window address of a generic pointer into shared memory, for
// atom.shared (the generic atom would work too, resolving the window at
// run time).
QD_DEV qd_u32 qd_saddr(const void *p) { qd_u64 r; asm("cvta.to.shared.u64 %0, %1;" : "=l"(r) : "l"(p)); return (qd_u32)r; }
`

// amdShuffles: ds_bpermute reads the lane its byte address names (modulo
// the wave), as HIP's __shfl_down and __shfl_up do; readlane reads lane 0
// into a scalar register. The mask is CUDA's.
const amdShuffles = `QD_DEV qd_u32 qd_shfl_down_u32(qd_u32 v, qd_u32 lane, qd_u32 d, qd_u32 mask) { (void)mask; return (qd_u32)__builtin_amdgcn_ds_bpermute((int)((lane + d) << 2), (int)v); }
QD_DEV qd_u32 qd_shfl_up_u32(qd_u32 v, qd_u32 lane, qd_u32 d, qd_u32 mask) { (void)mask; return (qd_u32)__builtin_amdgcn_ds_bpermute((int)((lane - d) << 2), (int)v); }
QD_DEV qd_u32 qd_bcast0_u32(qd_u32 v, qd_u32 mask) { (void)mask; return (qd_u32)__builtin_amdgcn_readlane((int)v, 0); }
`

// shuffles64 are the 64-bit shuffles, two 32-bit ones each.
const shuffles64 = `QD_DEV qd_u64 qd_shfl_down_u64(qd_u64 v, qd_u32 lane, qd_u32 d, qd_u32 mask) { qd_u32 lo = qd_shfl_down_u32((qd_u32)v, lane, d, mask), hi = qd_shfl_down_u32((qd_u32)(v >> 32), lane, d, mask); return (qd_u64)hi << 32 | lo; }
QD_DEV qd_u64 qd_shfl_up_u64(qd_u64 v, qd_u32 lane, qd_u32 d, qd_u32 mask) { qd_u32 lo = qd_shfl_up_u32((qd_u32)v, lane, d, mask), hi = qd_shfl_up_u32((qd_u32)(v >> 32), lane, d, mask); return (qd_u64)hi << 32 | lo; }
QD_DEV qd_u64 qd_bcast0_u64(qd_u64 v, qd_u32 mask) { qd_u32 lo = qd_bcast0_u32((qd_u32)v, mask), hi = qd_bcast0_u32((qd_u32)(v >> 32), mask); return (qd_u64)hi << 32 | lo; }
`

// smVersion is an NVIDIA target's compute capability (90 for sm_90a), 0
// for AMD.
func (t Target) smVersion() int {
	if t.Vendor != CUDA {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(t.Processor(), "sm_"), "a"))
	return n
}

// hasRedux reports whether t reduces 32-bit integers across a warp in one
// instruction (redux.sync, sm_80 and later).
func (t Target) hasRedux() bool { return t.smVersion() >= 80 }

// blockVendor is the vendor part of the block primitives for t.
func blockVendor(t Target) string {
	var sb strings.Builder
	sb.WriteString("// Block primitives (qd.Blocks): warp shuffles and shared-memory atomics.\n")
	switch t.Vendor {
	case CUDA:
		sb.WriteString(cudaShuffles)
		if t.hasRedux() {
			for _, op := range []string{"add", "min", "max"} {
				for _, ty := range []string{"u32", "s32"} {
					if op == "add" && ty == "s32" {
						continue // the same bits as u32
					}
					fmt.Fprintf(&sb, "QD_DEV qd_u32 qd_redux_%[1]s_%[2]s(qd_u32 v, qd_u32 mask) { qd_u32 r; asm volatile(\"redux.sync.%[1]s.%[2]s %%0, %%1, %%2;\" : \"=r\"(r) : \"r\"(v), \"r\"(mask)); return r; }\n", op, ty)
				}
			}
		}
		// atom.shared and red.shared with the shared-window address:
		// the prelude's atomics (inline PTX on generic addresses) would
		// hide the state space from the compiler.
		for _, a := range atomicOps {
			for _, ty := range a.types {
				ct, c, pt := cTypes[ty], ptxReg[ty], ptxType(a.op, ty)
				fmt.Fprintf(&sb, "QD_DEV %[1]s qd_satomic_%[2]s_%[3]s(%[1]s *p, %[1]s v) { %[1]s r; asm volatile(\"atom.shared.%[2]s.%[4]s %%0, [%%1], %%2;\" : \"=%[5]s\"(r) : \"r\"(qd_saddr(p)), \"%[5]s\"(v) : \"memory\"); return r; }\n",
					ct, a.op, ty, pt, c)
				if a.op != "exch" {
					fmt.Fprintf(&sb, "QD_DEV void qd_sred_%[2]s_%[3]s(%[1]s *p, %[1]s v) { asm volatile(\"red.shared.%[2]s.%[4]s [%%0], %%1;\" :: \"r\"(qd_saddr(p)), \"%[5]s\"(v) : \"memory\"); }\n",
						ct, a.op, ty, pt, c)
				}
			}
		}
		for _, ty := range []string{"u32", "u64"} {
			ct, c := cTypes[ty], ptxReg[ty]
			fmt.Fprintf(&sb, "QD_DEV %[1]s qd_satomic_cas_%[2]s(%[1]s *p, %[1]s cmp, %[1]s v) { %[1]s r; asm volatile(\"atom.shared.cas.b%[3]s %%0, [%%1], %%2, %%3;\" : \"=%[4]s\"(r) : \"r\"(qd_saddr(p)), \"%[4]s\"(cmp), \"%[4]s\"(v) : \"memory\"); return r; }\n",
				ct, ty, ty[1:], c)
		}
	case AMD:
		sb.WriteString(amdShuffles)
		// The prelude's builtins at work-group scope: the compiler sees
		// the pointer's address space once they are inlined and writes
		// ds_* instructions.
		const scope = "__ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP"
		for _, a := range atomicOps {
			builtin := "__hip_atomic_fetch_" + a.op
			if a.op == "exch" {
				builtin = "__hip_atomic_exchange"
			}
			for _, ty := range a.types {
				ct := cTypes[ty]
				fmt.Fprintf(&sb, "QD_DEV %[1]s qd_satomic_%[2]s_%[3]s(%[1]s *p, %[1]s v) { return %[4]s(p, v, %[5]s); }\n", ct, a.op, ty, builtin, scope)
				if a.op != "exch" {
					fmt.Fprintf(&sb, "QD_DEV void qd_sred_%[2]s_%[3]s(%[1]s *p, %[1]s v) { (void)%[4]s(p, v, %[5]s); }\n", ct, a.op, ty, builtin, scope)
				}
			}
		}
		for _, ty := range []string{"u32", "u64"} {
			fmt.Fprintf(&sb, "QD_DEV %[1]s qd_satomic_cas_%[2]s(%[1]s *p, %[1]s cmp, %[1]s v) { __hip_atomic_compare_exchange_strong(p, &cmp, v, %[3]s); return cmp; }\n",
				cTypes[ty], ty, "__ATOMIC_RELAXED, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP")
		}
	}
	floatMinMaxAtomics(&sb, "qd_satomic", "float", "f32", "qd_u32")
	floatMinMaxAtomics(&sb, "qd_satomic", "double", "f64", "qd_u64")
	return sb.String()
}

// shfl is the C expression of shuffle kind ("down", "up" or "bcast0") of
// the value v of type t, with the shuffle's other arguments.
func shfl(kind string, t ir.Type, v, args string) string {
	switch {
	case t == ir.F32:
		return fmt.Sprintf("qd_f32_from(qd_%s_u32(qd_bits_f32(%s), %s))", shflName(kind), v, args)
	case t == ir.F64:
		return fmt.Sprintf("qd_f64_from(qd_%s_u64(qd_bits_f64(%s), %s))", shflName(kind), v, args)
	case t.Size() == 8:
		return fmt.Sprintf("(%s)qd_%s_u64((qd_u64)%s, %s)", cType(t), shflName(kind), v, args)
	}
	// 32 bits and fewer: the low bits travel, converted back as C does.
	return fmt.Sprintf("(%s)qd_%s_u32((qd_u32)%s, %s)", cType(t), shflName(kind), v, args)
}

func shflName(kind string) string {
	if kind == "bcast0" {
		return kind
	}
	return "shfl_" + kind
}

// usesRedux reports whether the warp reduction op of t is redux.sync on
// target tg: the 32-bit integers and the smaller ones (extended by their
// signedness; a sum's low bits are the same). Its result is then in every
// lane, not in lane 0 alone.
func usesRedux(tg Target, op ir.BinOp, t ir.Type) bool {
	return tg.hasRedux() && t.IsInteger() && t.Size() <= 4
}

// warpReduce returns the name and definition of the warp reduction of op
// over t: lane 0 gets op over the lanes below lanes. Down-shuffles by d0,
// d0/2, …, 1 (d0 a power of two, half the warp or the block's size
// rounded up) form a tree; each lane adds the value d lanes up only when
// that lane exists.
func warpReduce(tg Target, op ir.BinOp, t ir.Type) (name, def string) {
	ct := cType(t)
	name = fmt.Sprintf("qd_wred_%v_%v", opName(op), t)
	if usesRedux(tg, op, t) {
		kind := "u32"
		if op != ir.Add && t.IsSigned() {
			kind = "s32"
		}
		def = fmt.Sprintf("QD_DEV %[1]s %[2]s(%[1]s v, qd_u32 lane, qd_u32 lanes, qd_u32 mask, qd_u32 d0) { (void)lane; (void)lanes; (void)d0; return (%[1]s)qd_redux_%[3]s_%[4]s((qd_u32)(%[5]s)v, mask); }\n",
			ct, name, opName(op), kind, map[bool]string{true: "qd_i32", false: "qd_u32"}[t.IsSigned()])
		return name, def
	}
	def = fmt.Sprintf(`QD_DEV %[1]s %[2]s(%[1]s v, qd_u32 lane, qd_u32 lanes, qd_u32 mask, qd_u32 d0)
{
	for (qd_u32 d = d0; d > 0u; d >>= 1) {
		%[1]s o = %[3]s;
		if (lane + d < lanes)
			v = %[4]s;
	}
	return v;
}
`, ct, name, shfl("down", t, "v", "lane, d, mask"), combineOp(op, t, "v", "o"))
	return name, def
}

// warpScan returns the name and definition of the inclusive warp scan
// (sum) over t: lane l gets the sum of lanes 0..l, by up-shuffles of 1, 2,
// 4, … below dn (the warp's size, or the block's when smaller). Lanes
// below l always exist.
func warpScan(t ir.Type) (name, def string) {
	ct := cType(t)
	name = fmt.Sprintf("qd_wscan_%v", t)
	def = fmt.Sprintf(`QD_DEV %[1]s %[2]s(%[1]s v, qd_u32 lane, qd_u32 mask, qd_u32 dn)
{
	for (qd_u32 d = 1u; d < dn; d <<= 1) {
		%[1]s o = %[3]s;
		if (lane >= d)
			v = %[4]s;
	}
	return v;
}
`, ct, name, shfl("up", t, "v", "lane, d, mask"), combineOp(ir.Add, t, "o", "v"))
	return name, def
}

func opName(op ir.BinOp) string {
	switch op {
	case ir.Add:
		return "add"
	case ir.Min:
		return "min"
	}
	return "max"
}
