package vk

import (
	"runtime"
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
	f := getFrame()
	defer putFrame(f)
	f.alloc = CommandBufferAllocateInfo{
		SType:              StructureTypeCommandBufferAllocateInfo,
		CommandPool:        pool,
		Level:              CommandBufferLevelPrimary,
		CommandBufferCount: 1,
	}
	err := check("vkAllocateCommandBuffers", f.result(d.allocateCommandBuffers, 3, [8]uintptr{d.Handle, uintptr(unsafe.Pointer(&f.alloc)), uintptr(unsafe.Pointer(&f.out))}))
	return uintptr(f.out), err
}

// FreeCommandBuffer returns cb to pool.
func (d *Device) FreeCommandBuffer(pool uint64, cb uintptr) {
	f := getFrame()
	f.out = uint64(cb)
	f.call(d.freeCommandBuffers, 4, [8]uintptr{d.Handle, uintptr(pool), 1, uintptr(unsafe.Pointer(&f.out))})
	putFrame(f)
}

// Begin starts recording cb (resetting it); flags are
// CommandBufferUsage* bits.
func (d *Device) Begin(cb uintptr, flags uint32) error {
	f := getFrame()
	defer putFrame(f)
	if err := check("vkResetCommandBuffer", f.result(d.resetCommandBuffer, 2, [8]uintptr{cb, 0})); err != nil {
		return err
	}
	f.begin = CommandBufferBeginInfo{SType: StructureTypeCommandBufferBeginInfo, Flags: flags}
	return check("vkBeginCommandBuffer", f.result(d.beginCommandBuffer, 2, [8]uintptr{cb, uintptr(unsafe.Pointer(&f.begin))}))
}

// End ends recording cb.
func (d *Device) End(cb uintptr) error {
	f := getFrame()
	defer putFrame(f)
	return check("vkEndCommandBuffer", f.result(d.endCommandBuffer, 1, [8]uintptr{cb}))
}

// CmdDispatch records a dispatch of p with the push constants push (at
// most p.PushBytes bytes) over groups x × y × z workgroups.
func (d *Device) CmdDispatch(cb uintptr, p *Pipeline, push []byte, x, y, z uint32) {
	f := getFrame()
	f.call(d.cmdBindPipeline, 3, [8]uintptr{cb, PipelineBindPointCompute, uintptr(p.Pipeline)})
	if len(push) > 0 {
		f.call(d.cmdPushConstants, 6, [8]uintptr{cb, uintptr(p.Layout), ShaderStageCompute, 0, uintptr(len(push)), uintptr(unsafe.Pointer(unsafe.SliceData(push)))})
	}
	f.call(d.cmdDispatch, 4, [8]uintptr{cb, uintptr(x), uintptr(y), uintptr(z)})
	runtime.KeepAlive(push)
	putFrame(f)
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
//
// The submit's structures are a pooled frame's,
// so that a submit allocates nothing.
func (d *Device) Submit(queue uintptr, cbs []uintptr, waits []Wait, signal, value uint64) error {
	f := getFrame()
	defer putFrame(f)
	f.sems, f.vals, f.stages = f.sems[:0], f.vals[:0], f.stages[:0]
	for _, w := range waits {
		f.sems = append(f.sems, w.Semaphore)
		f.vals = append(f.vals, w.Value)
		f.stages = append(f.stages, PipelineStageAllCommands)
	}
	f.signal, f.value = signal, value
	f.tl = TimelineSemaphoreSubmitInfo{
		SType:                     StructureTypeTimelineSemaphoreSubmitInfo,
		WaitSemaphoreValueCount:   uint32(len(waits)),
		PWaitSemaphoreValues:      ptrOf(f.vals),
		SignalSemaphoreValueCount: 1,
		PSignalSemaphoreValues:    unsafe.Pointer(&f.value),
	}
	f.submit = SubmitInfo{
		SType:                StructureTypeSubmitInfo,
		PNext:                unsafe.Pointer(&f.tl),
		WaitSemaphoreCount:   uint32(len(waits)),
		PWaitSemaphores:      ptrOf(f.sems),
		PWaitDstStageMask:    ptrOf(f.stages),
		CommandBufferCount:   uint32(len(cbs)),
		PCommandBuffers:      ptrOf(cbs),
		SignalSemaphoreCount: 1,
		PSignalSemaphores:    unsafe.Pointer(&f.signal),
	}
	err := check("vkQueueSubmit", f.result(d.queueSubmit, 4, [8]uintptr{queue, 1, uintptr(unsafe.Pointer(&f.submit)), 0}))
	runtime.KeepAlive(cbs)
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
	f := getFrame()
	defer putFrame(f)
	err := check("vkGetSemaphoreCounterValue", f.result(d.getSemaphoreCounterValue, 3, [8]uintptr{d.Handle, uintptr(s), uintptr(unsafe.Pointer(&f.out))}))
	return f.out, err
}

// WaitSemaphore waits until s reaches value or timeout passes; it reports
// whether it did (false on timeout).
func (d *Device) WaitSemaphore(s, value uint64, timeout time.Duration) (bool, error) {
	f := getFrame()
	defer putFrame(f)
	f.signal, f.value = s, value
	f.wait = SemaphoreWaitInfo{
		SType:          StructureTypeSemaphoreWaitInfo,
		SemaphoreCount: 1,
		PSemaphores:    unsafe.Pointer(&f.signal),
		PValues:        unsafe.Pointer(&f.value),
	}
	r := f.result(d.waitSemaphores, 3, [8]uintptr{d.Handle, uintptr(unsafe.Pointer(&f.wait)), uintptr(timeout.Nanoseconds())})
	if err := check("vkWaitSemaphores", r); err != nil {
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
