package spirv

import "math"

// FMAProbe is a compute shader of one invocation that reads float64 a, b
// and c from words 1 to 3 at the address in its one 8-byte push constant
// and writes fma(a, b, c) to word 0. Run on FMAInputs, a device that fuses
// the multiply and the add writes -2⁻⁶⁰; one that rounds the product first
// (Vulkan allows it: its Fma may be an OpFMul then an OpFAdd) writes 0.
// The inputs come from memory so that no compiler folds them with an fma
// of its own. Options.ExactFMA comes from
// it: the corrections of division and square root need a fused fma.
func FMAProbe() []uint32 {
	m := NewModule(AddressingModelPhysicalStorageBuffer64, MemoryModelGLSL450)
	m.Capability(CapabilityShader)
	m.Capability(CapabilityPhysicalStorageBufferAddresses)
	i64, f64 := m.Int(64), m.Float(64)
	st := m.Struct(i64)
	m.Decorate(st, DecorationBlock)
	m.MemberDecorate(st, 0, DecorationOffset, 0)
	push := m.Global(m.Pointer(StorageClassPushConstant, st), StorageClassPushConstant)
	void := m.Void()
	id := m.ID()
	f := m.NewFunction(id, void, m.FuncType(void))
	addr := f.Op(OpLoad, i64, f.Op(OpAccessChain, m.Pointer(StorageClassPushConstant, i64), push, m.ConstInt(32, 0)))
	ptr := f.Op(OpConvertUToPtr, m.Pointer(StorageClassPhysicalStorageBuffer, f64), addr)
	in := make([]ID, 3)
	for i := range in {
		at := f.Op(OpConvertUToPtr, m.Pointer(StorageClassPhysicalStorageBuffer, f64), f.Op(OpIAdd, i64, addr, m.ConstInt(64, uint64(8*(i+1)))))
		in[i] = f.Op(OpLoad, f64, at, MemoryAccessAligned, 8)
	}
	r := f.Ext(f64, GLSLFma, in[0], in[1], in[2])
	f.Void(OpStore, ptr, r, MemoryAccessAligned, 8)
	f.Return()
	m.AddFunction(f)
	m.EntryPoint(ExecutionModelGLCompute, id, EntryName, push)
	m.ExecutionMode(id, ExecutionModeLocalSize, 1, 1, 1)
	return m.Words()
}

// FMAInputs are the probe's a, b and c.
func FMAInputs() [3]float64 { return [3]float64{1 + math.Ldexp(1, -30), 1 - math.Ldexp(1, -30), -1} }

// FusedFMA says whether the probe's result shows a fused fma.
func FusedFMA(result float64) bool { return result == -math.Ldexp(1, -60) }
