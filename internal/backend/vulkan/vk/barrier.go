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
