package vk

import "unsafe"

// CmdHostReadBarrier records a barrier that makes the writes of the
// earlier commands (copies, fills, shaders) available to host reads. A
// host wait on a semaphore orders the host after the device's work but
// covers device accesses only; memory the host reads after such a wait
// needs this barrier before the signal.
func (d *Device) CmdHostReadBarrier(cb uintptr) {
	b := &MemoryBarrier{
		SType:         StructureTypeMemoryBarrier,
		SrcAccessMask: AccessShaderWrite | AccessTransferWrite | AccessMemoryWrite,
		DstAccessMask: AccessHostRead,
	}
	call(d.cmdPipelineBarrier, cb, PipelineStageAllCommands, PipelineStageHost, 0, 1, uintptr(unsafe.Pointer(b)), 0, 0, 0, 0)
}

// CmdHostReadBarrierAfterCopy makes the transfers recorded before it
// available to host reads: CmdHostReadBarrier for a command buffer of a
// transfer queue, whose stages have no shader writes.
func (d *Device) CmdHostReadBarrierAfterCopy(cb uintptr) {
	b := &MemoryBarrier{
		SType:         StructureTypeMemoryBarrier,
		SrcAccessMask: AccessTransferWrite,
		DstAccessMask: AccessHostRead,
	}
	call(d.cmdPipelineBarrier, cb, PipelineStageTransfer, PipelineStageHost, 0, 1, uintptr(unsafe.Pointer(b)), 0, 0, 0, 0)
}

// CmdDeviceBarrier records a memory barrier between the device's own
// work: the shader and transfer writes of the earlier commands are
// visible to the shader and transfer accesses of the later ones. It is
// CmdBarrier without the host's accesses and the other stages, for
// commands recorded back to back (a graph's levels), which the host
// neither writes nor reads between.
func (d *Device) CmdDeviceBarrier(cb uintptr) {
	b := &MemoryBarrier{
		SType:         StructureTypeMemoryBarrier,
		SrcAccessMask: AccessShaderWrite | AccessTransferWrite,
		DstAccessMask: AccessShaderRead | AccessShaderWrite | AccessTransferRead | AccessTransferWrite,
	}
	stages := uintptr(PipelineStageComputeShader | PipelineStageTransfer)
	call(d.cmdPipelineBarrier, cb, stages, stages, 0, 1, uintptr(unsafe.Pointer(b)), 0, 0, 0, 0)
}
