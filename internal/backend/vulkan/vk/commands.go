package vk

import (
	"time"
	"unsafe"
)

// CreateCommandPool makes a pool for command buffers of the device's
// compute family whose buffers can be reset one by one.
func (d *Device) CreateCommandPool() (uint64, error) { return d.CreateCommandPoolFor(d.Family) }

// CreateCommandPoolFor creates a command pool for queue family family
// (CopyFamily: for CopyQueues).
func (d *Device) CreateCommandPoolFor(family int) (uint64, error) {
	info := &CommandPoolCreateInfo{
		SType:            StructureTypeCommandPoolCreateInfo,
		Flags:            CommandPoolCreateResetBuffer,
		QueueFamilyIndex: uint32(family),
	}
	var pool uint64
	_, err := callResult("vkCreateCommandPool", d.createCommandPool, d.Handle, uintptr(unsafe.Pointer(info)), 0, uintptr(unsafe.Pointer(&pool)))
	return pool, err
}

// DestroyCommandPool destroys pool and its command buffers.
func (d *Device) DestroyCommandPool(pool uint64) {
	if pool != 0 {
		call(d.destroyCommandPool, d.Handle, uintptr(pool), 0)
	}
}

// AllocateCommandBuffer allocates one primary command buffer from pool.
// Pools are not thread-safe: the caller serialises use of a pool and its
// buffers.
func (d *Device) AllocateCommandBuffer(pool uint64) (uintptr, error) {
	info := &CommandBufferAllocateInfo{
		SType:              StructureTypeCommandBufferAllocateInfo,
		CommandPool:        pool,
		Level:              CommandBufferLevelPrimary,
		CommandBufferCount: 1,
	}
	var cb uintptr
	_, err := callResult("vkAllocateCommandBuffers", d.allocateCommandBuffers, d.Handle, uintptr(unsafe.Pointer(info)), uintptr(unsafe.Pointer(&cb)))
	return cb, err
}

// FreeCommandBuffer returns cb to pool.
func (d *Device) FreeCommandBuffer(pool uint64, cb uintptr) {
	call(d.freeCommandBuffers, d.Handle, uintptr(pool), 1, uintptr(unsafe.Pointer(&cb)))
}

// Begin starts recording cb (resetting it); flags are
// CommandBufferUsage* bits.
func (d *Device) Begin(cb uintptr, flags uint32) error {
	if _, err := callResult("vkResetCommandBuffer", d.resetCommandBuffer, cb, 0); err != nil {
		return err
	}
	info := &CommandBufferBeginInfo{SType: StructureTypeCommandBufferBeginInfo, Flags: flags}
	_, err := callResult("vkBeginCommandBuffer", d.beginCommandBuffer, cb, uintptr(unsafe.Pointer(info)))
	return err
}

// End ends recording cb.
func (d *Device) End(cb uintptr) error {
	_, err := callResult("vkEndCommandBuffer", d.endCommandBuffer, cb)
	return err
}

// CmdDispatch records a dispatch of p with the push constants push (at
// most p.PushBytes bytes) over groups x × y × z workgroups.
func (d *Device) CmdDispatch(cb uintptr, p *Pipeline, push []byte, x, y, z uint32) {
	call(d.cmdBindPipeline, cb, PipelineBindPointCompute, uintptr(p.Pipeline))
	if len(push) > 0 {
		call(d.cmdPushConstants, cb, uintptr(p.Layout), ShaderStageCompute, 0, uintptr(len(push)), uintptr(unsafe.Pointer(&push[0])))
	}
	call(d.cmdDispatch, cb, uintptr(x), uintptr(y), uintptr(z))
}

// CmdBarrier records a global memory barrier: every write of the earlier
// commands (shaders, copies, fills, host) is visible to every read and
// write of the later ones.
func (d *Device) CmdBarrier(cb uintptr) {
	b := &MemoryBarrier{
		SType:         StructureTypeMemoryBarrier,
		SrcAccessMask: AccessShaderWrite | AccessTransferWrite | AccessHostWrite | AccessMemoryWrite,
		DstAccessMask: AccessShaderRead | AccessShaderWrite | AccessTransferRead | AccessTransferWrite | AccessHostRead | AccessMemoryRead | AccessMemoryWrite,
	}
	stages := uintptr(PipelineStageAllCommands)
	call(d.cmdPipelineBarrier, cb, stages, stages, 0, 1, uintptr(unsafe.Pointer(b)), 0, 0, 0, 0)
}

// CmdCopy records a copy of n bytes from src+srcOff to dst+dstOff.
func (d *Device) CmdCopy(cb uintptr, dst uint64, dstOff int, src uint64, srcOff int, n int) {
	r := &BufferCopy{SrcOffset: uint64(srcOff), DstOffset: uint64(dstOff), Size: uint64(n)}
	call(d.cmdCopyBuffer, cb, uintptr(src), uintptr(dst), 1, uintptr(unsafe.Pointer(r)))
}

// CmdFill records a fill of n bytes (a multiple of 4) of buf from off with
// the 32-bit word data.
func (d *Device) CmdFill(cb uintptr, buf uint64, off, n int, data uint32) {
	call(d.cmdFillBuffer, cb, uintptr(buf), uintptr(off), uintptr(n), uintptr(data))
}

// Wait is one semaphore wait of a submit: sem reaching value.
type Wait struct {
	Semaphore uint64
	Value     uint64
}

// Submit submits cbs (possibly none) to queue, waiting for waits first and
// then signalling the timeline semaphore signal to value. Submits to one
// queue are not thread-safe: the caller serialises them per queue.
func (d *Device) Submit(queue uintptr, cbs []uintptr, waits []Wait, signal, value uint64) error {
	sems := make([]uint64, len(waits))
	vals := make([]uint64, len(waits))
	stages := make([]uint32, len(waits))
	for i, w := range waits {
		sems[i], vals[i], stages[i] = w.Semaphore, w.Value, PipelineStageAllCommands
	}
	tl := &TimelineSemaphoreSubmitInfo{
		SType:                     StructureTypeTimelineSemaphoreSubmitInfo,
		WaitSemaphoreValueCount:   uint32(len(waits)),
		PWaitSemaphoreValues:      ptrOf(vals),
		SignalSemaphoreValueCount: 1,
		PSignalSemaphoreValues:    unsafe.Pointer(&value),
	}
	info := &SubmitInfo{
		SType:                StructureTypeSubmitInfo,
		PNext:                unsafe.Pointer(tl),
		WaitSemaphoreCount:   uint32(len(waits)),
		PWaitSemaphores:      ptrOf(sems),
		PWaitDstStageMask:    ptrOf(stages),
		CommandBufferCount:   uint32(len(cbs)),
		PCommandBuffers:      ptrOf(cbs),
		SignalSemaphoreCount: 1,
		PSignalSemaphores:    unsafe.Pointer(&signal),
	}
	_, err := callResult("vkQueueSubmit", d.queueSubmit, queue, 1, uintptr(unsafe.Pointer(info)), 0)
	return err
}

// CreateTimeline makes a timeline semaphore starting at 0.
func (d *Device) CreateTimeline() (uint64, error) {
	ti := &SemaphoreTypeCreateInfo{SType: StructureTypeSemaphoreTypeCreateInfo, SemaphoreType: SemaphoreTypeTimeline}
	info := &SemaphoreCreateInfo{SType: StructureTypeSemaphoreCreateInfo, PNext: unsafe.Pointer(ti)}
	var s uint64
	_, err := callResult("vkCreateSemaphore", d.createSemaphore, d.Handle, uintptr(unsafe.Pointer(info)), 0, uintptr(unsafe.Pointer(&s)))
	return s, err
}

// DestroySemaphore destroys s, which no pending submit may use.
func (d *Device) DestroySemaphore(s uint64) {
	if s != 0 {
		call(d.destroySemaphore, d.Handle, uintptr(s), 0)
	}
}

// SemaphoreValue is the current value of timeline semaphore s.
func (d *Device) SemaphoreValue(s uint64) (uint64, error) {
	var v uint64
	_, err := callResult("vkGetSemaphoreCounterValue", d.getSemaphoreCounterValue, d.Handle, uintptr(s), uintptr(unsafe.Pointer(&v)))
	return v, err
}

// WaitSemaphore waits until s reaches value or timeout passes; it reports
// whether it did (false on timeout).
func (d *Device) WaitSemaphore(s, value uint64, timeout time.Duration) (bool, error) {
	info := &SemaphoreWaitInfo{
		SType:          StructureTypeSemaphoreWaitInfo,
		SemaphoreCount: 1,
		PSemaphores:    unsafe.Pointer(&s),
		PValues:        unsafe.Pointer(&value),
	}
	r, err := callResult("vkWaitSemaphores", d.waitSemaphores, d.Handle, uintptr(unsafe.Pointer(info)), uintptr(timeout.Nanoseconds()))
	if err != nil {
		return false, err
	}
	return r == Success, nil
}

// SignalSemaphore sets timeline semaphore s to value from the host.
func (d *Device) SignalSemaphore(s, value uint64) error {
	info := &SemaphoreSignalInfo{SType: StructureTypeSemaphoreSignalInfo, Semaphore: s, Value: value}
	_, err := callResult("vkSignalSemaphore", d.signalSemaphore, d.Handle, uintptr(unsafe.Pointer(info)))
	return err
}

// CreateTimestampPool makes a query pool of n timestamps.
func (d *Device) CreateTimestampPool(n int) (uint64, error) {
	info := &QueryPoolCreateInfo{SType: StructureTypeQueryPoolCreateInfo, QueryType: QueryTypeTimestamp, QueryCount: uint32(n)}
	var p uint64
	_, err := callResult("vkCreateQueryPool", d.createQueryPool, d.Handle, uintptr(unsafe.Pointer(info)), 0, uintptr(unsafe.Pointer(&p)))
	return p, err
}

// DestroyQueryPool destroys pool.
func (d *Device) DestroyQueryPool(pool uint64) {
	if pool != 0 {
		call(d.destroyQueryPool, d.Handle, uintptr(pool), 0)
	}
}

// CmdTimestamp records a reset of query q of pool and a timestamp into it
// once every earlier command has completed.
func (d *Device) CmdTimestamp(cb uintptr, pool uint64, q int) {
	call(d.cmdResetQueryPool, cb, uintptr(pool), uintptr(q), 1)
	call(d.cmdWriteTimestamp, cb, PipelineStageBottomOfPipe, uintptr(pool), uintptr(q))
}

// Timestamp reads query q of pool, in ticks of the device's
// timestampPeriod nanoseconds; ok is false when it is not yet written.
func (d *Device) Timestamp(pool uint64, q int) (ticks uint64, ok bool, err error) {
	var v uint64
	r, err := callResult("vkGetQueryPoolResults", d.getQueryPoolResults, d.Handle, uintptr(pool), uintptr(q), 1, 8, uintptr(unsafe.Pointer(&v)), 8, QueryResult64)
	if err != nil {
		return 0, false, err
	}
	return v, r == Success, nil
}
