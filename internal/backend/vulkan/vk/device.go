package vk

import (
	"fmt"
	"runtime"
	"slices"
	"unsafe"
)

// Device is a VkDevice with its device-level functions, resolved through
// vkGetDeviceProcAddr so that calls skip the loader's dispatch.
type Device struct {
	Handle   uintptr
	Physical *PhysicalDeviceInfo
	Family   int       // the queue family of Queues
	Queues   []uintptr // every queue of Family
	// CopyFamily is the transfer-only family of CopyQueues (-1: none);
	// buffers are then shared by both families (SharingModeConcurrent).
	CopyFamily int
	CopyQueues []uintptr

	destroyDevice                uintptr
	getDeviceQueue               uintptr
	deviceWaitIdle               uintptr
	createBuffer                 uintptr
	destroyBuffer                uintptr
	getBufferMemoryRequirements  uintptr
	allocateMemory               uintptr
	freeMemory                   uintptr
	bindBufferMemory             uintptr
	mapMemory                    uintptr
	unmapMemory                  uintptr
	getBufferDeviceAddress       uintptr
	createShaderModule           uintptr
	destroyShaderModule          uintptr
	createPipelineLayout         uintptr
	destroyPipelineLayout        uintptr
	createComputePipelines       uintptr
	destroyPipeline              uintptr
	createCommandPool            uintptr
	destroyCommandPool           uintptr
	allocateCommandBuffers       uintptr
	freeCommandBuffers           uintptr
	beginCommandBuffer           uintptr
	endCommandBuffer             uintptr
	resetCommandBuffer           uintptr
	cmdBindPipeline              uintptr
	cmdPushConstants             uintptr
	cmdDispatch                  uintptr
	cmdPipelineBarrier           uintptr
	cmdCopyBuffer                uintptr
	cmdFillBuffer                uintptr
	cmdWriteTimestamp            uintptr
	cmdResetQueryPool            uintptr
	queueSubmit                  uintptr
	queueWaitIdle                uintptr
	createSemaphore              uintptr
	destroySemaphore             uintptr
	waitSemaphores               uintptr
	signalSemaphore              uintptr
	getSemaphoreCounterValue     uintptr
	createQueryPool              uintptr
	destroyQueryPool             uintptr
	getQueryPoolResults          uintptr
	invalidateMappedMemoryRanges uintptr
	flushMappedMemoryRanges      uintptr
}

// requiredExtensions are enabled when the device offers them.
var optionalExtensions = []string{AtomicFloatExtension}

// CreateDevice creates a logical device on p with every queue of its
// compute family, enabling the optional features qd uses that p has.
// Timeline semaphores and buffer device addresses are required.
func (in *Instance) CreateDevice(p *PhysicalDeviceInfo) (*Device, error) {
	f := p.Features
	if p.APIVersion < MakeAPIVersion(1, 2, 0) || !f.TimelineSemaphore || !f.BufferDeviceAddress {
		return nil, fmt.Errorf("%s (Vulkan %s) lacks Vulkan 1.2 with timeline semaphores and buffer device addresses, which qd needs", p.Name, APIVersionString(p.APIVersion))
	}
	family := p.ComputeFamily()
	if family < 0 {
		return nil, fmt.Errorf("%s has no compute queue", p.Name)
	}
	count := p.QueueFamilies[family].Count
	prio := make([]float32, count)
	for i := range prio {
		prio[i] = 1
	}
	qinfos := []DeviceQueueCreateInfo{{
		SType:            StructureTypeDeviceQueueCreateInfo,
		QueueFamilyIndex: uint32(family),
		QueueCount:       uint32(count),
		PQueuePriorities: unsafe.Pointer(&prio[0]),
	}}
	copyFamily, copyCount := p.TransferFamily(), 0
	if copyFamily >= 0 {
		copyCount = min(p.QueueFamilies[copyFamily].Count, len(prio))
		qinfos = append(qinfos, DeviceQueueCreateInfo{
			SType:            StructureTypeDeviceQueueCreateInfo,
			QueueFamilyIndex: uint32(copyFamily),
			QueueCount:       uint32(copyCount),
			PQueuePriorities: unsafe.Pointer(&prio[0]),
		})
	}
	var exts []string
	for _, e := range optionalExtensions {
		if slices.Contains(p.Extensions, e) {
			exts = append(exts, e)
		}
	}
	strs, ptrs := cstrings(exts)
	en := enabledFeatures(p)
	info := &DeviceCreateInfo{
		SType:                   StructureTypeDeviceCreateInfo,
		PNext:                   unsafe.Pointer(&en.f2),
		QueueCreateInfoCount:    uint32(len(qinfos)),
		PQueueCreateInfos:       unsafe.Pointer(&qinfos[0]),
		EnabledExtensionCount:   uint32(len(exts)),
		PpEnabledExtensionNames: ptrOf(ptrs),
	}
	var h uintptr
	_, err := callResult("vkCreateDevice", in.createDevice, p.Handle, uintptr(unsafe.Pointer(info)), 0, uintptr(unsafe.Pointer(&h)))
	runtime.KeepAlive(strs)
	runtime.KeepAlive(prio)
	runtime.KeepAlive(qinfos)
	runtime.KeepAlive(en)
	if err != nil {
		return nil, err
	}
	d := &Device{Handle: h, Physical: p, Family: family, CopyFamily: copyFamily}
	for _, b := range d.bindings() {
		s := append([]byte(b.name), 0)
		if *b.fn = call(in.getDeviceProcAddr, h, uintptr(unsafe.Pointer(&s[0]))); *b.fn == 0 {
			if d.destroyDevice != 0 {
				call(d.destroyDevice, h, 0)
			}
			return nil, fmt.Errorf("%w: %s's driver lacks %s", ErrNoLoader, p.Name, b.name)
		}
	}
	d.Queues = make([]uintptr, count)
	for i := range d.Queues {
		call(d.getDeviceQueue, h, uintptr(family), uintptr(i), uintptr(unsafe.Pointer(&d.Queues[i])))
	}
	d.CopyQueues = make([]uintptr, copyCount)
	for i := range d.CopyQueues {
		call(d.getDeviceQueue, h, uintptr(copyFamily), uintptr(i), uintptr(unsafe.Pointer(&d.CopyQueues[i])))
	}
	return d, nil
}

// enabledFeatures is the chain of features to enable on p: those qd uses
// that p reports.
func enabledFeatures(p *PhysicalDeviceInfo) *featureChain {
	q := p.Features.raw
	hasAtomicFloat := slices.Contains(p.Extensions, AtomicFloatExtension)
	c := new(featureChain)
	c.link(p.APIVersion, hasAtomicFloat)
	c.f2.Features.ShaderFloat64 = q.f2.Features.ShaderFloat64
	c.f2.Features.ShaderInt64 = q.f2.Features.ShaderInt64
	c.f2.Features.ShaderInt16 = q.f2.Features.ShaderInt16
	c.v11.StorageBuffer16BitAccess = q.v11.StorageBuffer16BitAccess
	c.v12.StorageBuffer8BitAccess = q.v12.StorageBuffer8BitAccess
	c.v12.ShaderInt8 = q.v12.ShaderInt8
	c.v12.ShaderFloat16 = q.v12.ShaderFloat16
	c.v12.ShaderBufferInt64Atomics = q.v12.ShaderBufferInt64Atomics
	c.v12.ShaderSharedInt64Atomics = q.v12.ShaderSharedInt64Atomics
	c.v12.TimelineSemaphore = q.v12.TimelineSemaphore
	c.v12.BufferDeviceAddress = q.v12.BufferDeviceAddress
	c.v12.VulkanMemoryModel = q.v12.VulkanMemoryModel
	c.v12.VulkanMemoryModelDeviceScope = q.v12.VulkanMemoryModelDeviceScope
	c.v12.ScalarBlockLayout = q.v12.ScalarBlockLayout
	c.v13.Synchronization2 = q.v13.Synchronization2
	c.v13.SubgroupSizeControl = q.v13.SubgroupSizeControl
	c.v13.ComputeFullSubgroups = q.v13.ComputeFullSubgroups
	c.v13.Maintenance4 = q.v13.Maintenance4
	if hasAtomicFloat {
		c.atomicFloat = q.atomicFloat
		c.atomicFloat.SType = StructureTypePhysicalDeviceShaderAtomicFloatFeats
		c.atomicFloat.PNext = nil
	}
	return c
}

type binding struct {
	fn   *uintptr
	name string
}

func (d *Device) bindings() []binding {
	return []binding{
		{&d.destroyDevice, "vkDestroyDevice"},
		{&d.getDeviceQueue, "vkGetDeviceQueue"},
		{&d.deviceWaitIdle, "vkDeviceWaitIdle"},
		{&d.createBuffer, "vkCreateBuffer"},
		{&d.destroyBuffer, "vkDestroyBuffer"},
		{&d.getBufferMemoryRequirements, "vkGetBufferMemoryRequirements"},
		{&d.allocateMemory, "vkAllocateMemory"},
		{&d.freeMemory, "vkFreeMemory"},
		{&d.bindBufferMemory, "vkBindBufferMemory"},
		{&d.mapMemory, "vkMapMemory"},
		{&d.unmapMemory, "vkUnmapMemory"},
		{&d.getBufferDeviceAddress, "vkGetBufferDeviceAddress"},
		{&d.createShaderModule, "vkCreateShaderModule"},
		{&d.destroyShaderModule, "vkDestroyShaderModule"},
		{&d.createPipelineLayout, "vkCreatePipelineLayout"},
		{&d.destroyPipelineLayout, "vkDestroyPipelineLayout"},
		{&d.createComputePipelines, "vkCreateComputePipelines"},
		{&d.destroyPipeline, "vkDestroyPipeline"},
		{&d.createCommandPool, "vkCreateCommandPool"},
		{&d.destroyCommandPool, "vkDestroyCommandPool"},
		{&d.allocateCommandBuffers, "vkAllocateCommandBuffers"},
		{&d.freeCommandBuffers, "vkFreeCommandBuffers"},
		{&d.beginCommandBuffer, "vkBeginCommandBuffer"},
		{&d.endCommandBuffer, "vkEndCommandBuffer"},
		{&d.resetCommandBuffer, "vkResetCommandBuffer"},
		{&d.cmdBindPipeline, "vkCmdBindPipeline"},
		{&d.cmdPushConstants, "vkCmdPushConstants"},
		{&d.cmdDispatch, "vkCmdDispatch"},
		{&d.cmdPipelineBarrier, "vkCmdPipelineBarrier"},
		{&d.cmdCopyBuffer, "vkCmdCopyBuffer"},
		{&d.cmdFillBuffer, "vkCmdFillBuffer"},
		{&d.cmdWriteTimestamp, "vkCmdWriteTimestamp"},
		{&d.cmdResetQueryPool, "vkCmdResetQueryPool"},
		{&d.queueSubmit, "vkQueueSubmit"},
		{&d.queueWaitIdle, "vkQueueWaitIdle"},
		{&d.createSemaphore, "vkCreateSemaphore"},
		{&d.destroySemaphore, "vkDestroySemaphore"},
		{&d.waitSemaphores, "vkWaitSemaphores"},
		{&d.signalSemaphore, "vkSignalSemaphore"},
		{&d.getSemaphoreCounterValue, "vkGetSemaphoreCounterValue"},
		{&d.createQueryPool, "vkCreateQueryPool"},
		{&d.destroyQueryPool, "vkDestroyQueryPool"},
		{&d.getQueryPoolResults, "vkGetQueryPoolResults"},
		{&d.invalidateMappedMemoryRanges, "vkInvalidateMappedMemoryRanges"},
		{&d.flushMappedMemoryRanges, "vkFlushMappedMemoryRanges"},
	}
}

// Destroy destroys the device; every object made from it must be
// destroyed first.
func (d *Device) Destroy() {
	if d.Handle != 0 {
		call(d.destroyDevice, d.Handle, 0)
		d.Handle = 0
	}
}

// WaitIdle waits for every queue of the device.
func (d *Device) WaitIdle() error {
	_, err := callResult("vkDeviceWaitIdle", d.deviceWaitIdle, d.Handle)
	return err
}
