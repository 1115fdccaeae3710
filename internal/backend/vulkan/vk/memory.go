package vk

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Memory is a VkDeviceMemory allocation bound to one VkBuffer, with the
// buffer's device address (usable by shaders through
// PhysicalStorageBuffer pointers) and, for host-visible memory, its
// mapping.
type Memory struct {
	Buffer  uint64
	Memory  uint64
	Address uint64         // vkGetBufferDeviceAddress; 0 when not asked for
	Mapped  unsafe.Pointer // nil unless host-visible
	Bytes   int
	Type    int    // the memory type index
	Flags   uint32 // the memory type's property flags
}

// MemoryTypeFor picks the memory type for an allocation whose buffer
// accepts the types in bits: the first that has every flag of want, then
// the first that has every flag of fallback; -1 when neither exists.
func (p *PhysicalDeviceInfo) MemoryTypeFor(bits uint32, want, fallback uint32) int {
	for _, flags := range []uint32{want, fallback} {
		for i := range p.Memory.MemoryTypeCount {
			if bits&(1<<i) != 0 && p.Memory.MemoryTypes[i].PropertyFlags&flags == flags {
				return int(i)
			}
		}
	}
	return -1
}

// Allocate makes a buffer of bytes (rounded up to 4, as fills and copies
// need), with storage, transfer and device-address use, in memory with the
// properties want (or fallback where no type has want), and maps it when
// the memory is host-visible.
func (d *Device) Allocate(bytes int, want, fallback uint32) (*Memory, error) {
	if bytes <= 0 {
		bytes = 4
	}
	size := uint64(bytes+3) &^ 3
	// No check against maxStorageBufferRange: it bounds what a
	// descriptor can cover, and kernels reach buffers through device
	// addresses, not descriptors (lavapipe's 128 MiB would refuse a 256
	// MiB array it runs fine).
	m := &Memory{Bytes: bytes}
	binfo := &BufferCreateInfo{
		SType:       StructureTypeBufferCreateInfo,
		Size:        size,
		Usage:       BufferUsageStorageBuffer | BufferUsageTransferSrc | BufferUsageTransferDst | BufferUsageShaderDeviceAddress,
		SharingMode: SharingModeExclusive,
	}
	families := [2]uint32{uint32(d.Family), uint32(d.CopyFamily)}
	if d.CopyFamily >= 0 {
		// Copies run on the transfer queues, kernels on the compute ones.
		binfo.SharingMode, binfo.QueueFamilyIndexCount, binfo.PQueueFamilyIndices = SharingModeConcurrent, 2, unsafe.Pointer(&families[0])
	}
	if _, err := callResult("vkCreateBuffer", d.createBuffer, d.Handle, uintptr(unsafe.Pointer(binfo)), 0, uintptr(unsafe.Pointer(&m.Buffer))); err != nil {
		return nil, err
	}
	runtime.KeepAlive(&families)
	var req MemoryRequirements
	call(d.getBufferMemoryRequirements, d.Handle, uintptr(m.Buffer), uintptr(unsafe.Pointer(&req)))
	m.Type = d.Physical.MemoryTypeFor(req.MemoryTypeBits, want, fallback)
	if m.Type < 0 {
		d.Free(m)
		return nil, fmt.Errorf("%s has no memory type with properties %#x for a buffer", d.Physical.Name, want)
	}
	m.Flags = d.Physical.Memory.MemoryTypes[m.Type].PropertyFlags
	flags := &MemoryAllocateFlagsInfo{SType: StructureTypeMemoryAllocateFlagsInfo, Flags: MemoryAllocateDeviceAddress}
	ainfo := &MemoryAllocateInfo{
		SType:           StructureTypeMemoryAllocateInfo,
		PNext:           unsafe.Pointer(flags),
		AllocationSize:  req.Size,
		MemoryTypeIndex: uint32(m.Type),
	}
	if _, err := callResult("vkAllocateMemory", d.allocateMemory, d.Handle, uintptr(unsafe.Pointer(ainfo)), 0, uintptr(unsafe.Pointer(&m.Memory))); err != nil {
		d.Free(m)
		return nil, err
	}
	if _, err := callResult("vkBindBufferMemory", d.bindBufferMemory, d.Handle, uintptr(m.Buffer), uintptr(m.Memory), 0); err != nil {
		d.Free(m)
		return nil, err
	}
	ainf := &BufferDeviceAddressInfo{SType: StructureTypeBufferDeviceAddressInfo, Buffer: m.Buffer}
	m.Address = uint64(call(d.getBufferDeviceAddress, d.Handle, uintptr(unsafe.Pointer(ainf))))
	if m.Flags&MemoryPropertyHostVisible != 0 {
		var p unsafe.Pointer
		if _, err := callResult("vkMapMemory", d.mapMemory, d.Handle, uintptr(m.Memory), 0, uintptr(WholeSize), 0, uintptr(unsafe.Pointer(&p))); err != nil {
			d.Free(m)
			return nil, err
		}
		m.Mapped = p
	}
	return m, nil
}

// Free releases m's buffer and memory (unmapping it). m must be idle.
func (d *Device) Free(m *Memory) {
	if m.Buffer != 0 {
		call(d.destroyBuffer, d.Handle, uintptr(m.Buffer), 0)
		m.Buffer = 0
	}
	if m.Memory != 0 {
		if m.Mapped != nil {
			call(d.unmapMemory, d.Handle, uintptr(m.Memory))
			m.Mapped = nil
		}
		call(d.freeMemory, d.Handle, uintptr(m.Memory), 0)
		m.Memory = 0
	}
}

// Coherent reports whether host writes to m need no flush and device
// writes no invalidate.
func (m *Memory) Coherent() bool { return m.Flags&MemoryPropertyHostCoherent != 0 }

// Invalidate makes device writes to a mapped, non-coherent m visible to
// the host.
func (d *Device) Invalidate(m *Memory) error {
	if m.Mapped == nil || m.Coherent() {
		return nil
	}
	r := &MappedMemoryRange{SType: StructureTypeMappedMemoryRange, Memory: m.Memory, Size: WholeSize}
	_, err := callResult("vkInvalidateMappedMemoryRanges", d.invalidateMappedMemoryRanges, d.Handle, 1, uintptr(unsafe.Pointer(r)))
	return err
}

// Flush makes host writes to a mapped, non-coherent m visible to the
// device.
func (d *Device) Flush(m *Memory) error {
	if m.Mapped == nil || m.Coherent() {
		return nil
	}
	r := &MappedMemoryRange{SType: StructureTypeMappedMemoryRange, Memory: m.Memory, Size: WholeSize}
	_, err := callResult("vkFlushMappedMemoryRanges", d.flushMappedMemoryRanges, d.Handle, 1, uintptr(unsafe.Pointer(r)))
	return err
}
