package vk

import (
	"fmt"
	"runtime"
	"slices"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// Instance is a VkInstance with its instance-level functions.
type Instance struct {
	Handle uintptr
	loader *Loader

	destroyInstance                        uintptr
	enumeratePhysicalDevices               uintptr
	getPhysicalDeviceProperties2           uintptr
	getPhysicalDeviceFeatures2             uintptr
	getPhysicalDeviceQueueFamilyProperties uintptr
	getPhysicalDeviceMemoryProperties      uintptr
	enumerateDeviceExtensionProperties     uintptr
	createDevice                           uintptr
	getDeviceProcAddr                      uintptr
}

// portabilityExtension lets the loader list portability implementations
// (MoltenVK on macOS), which it hides otherwise.
const portabilityExtension = "VK_KHR_portability_enumeration"

// CreateInstance creates an instance for Vulkan 1.2 or later (timeline
// semaphores and buffer device addresses are core there), enabling the
// portability enumeration where the loader offers it.
func (l *Loader) CreateInstance(appName string) (*Instance, error) {
	if v := l.Version(); v < MakeAPIVersion(1, 2, 0) {
		return nil, fmt.Errorf("%w: the loader %s supports Vulkan %s; qd needs 1.2", ErrNoLoader, l.Name, APIVersionString(v))
	}
	exts, err := l.InstanceExtensions()
	if err != nil {
		return nil, err
	}
	var enable []string
	var flags uint32
	if slices.Contains(exts, portabilityExtension) {
		enable = append(enable, portabilityExtension)
		flags |= InstanceCreateEnumeratePortability
	}
	name := gpu.CString(appName)
	engine := gpu.CString("qd")
	app := &ApplicationInfo{
		SType:            StructureTypeApplicationInfo,
		PApplicationName: unsafe.Pointer(&name[0]),
		PEngineName:      unsafe.Pointer(&engine[0]),
		ApiVersion:       MakeAPIVersion(1, 3, 0),
	}
	strs, ptrs := cstrings(enable)
	info := &InstanceCreateInfo{
		SType:                   StructureTypeInstanceCreateInfo,
		Flags:                   flags,
		PApplicationInfo:        unsafe.Pointer(app),
		EnabledExtensionCount:   uint32(len(enable)),
		PpEnabledExtensionNames: ptrOf(ptrs),
	}
	var h uintptr
	_, err = callResult("vkCreateInstance", l.createInstance, uintptr(unsafe.Pointer(info)), 0, uintptr(unsafe.Pointer(&h)))
	runtime.KeepAlive(strs)
	runtime.KeepAlive(name)
	runtime.KeepAlive(engine)
	if err != nil {
		return nil, err
	}
	in := &Instance{Handle: h, loader: l}
	for _, b := range []struct {
		fn   *uintptr
		name string
	}{
		{&in.destroyInstance, "vkDestroyInstance"},
		{&in.enumeratePhysicalDevices, "vkEnumeratePhysicalDevices"},
		{&in.getPhysicalDeviceProperties2, "vkGetPhysicalDeviceProperties2"},
		{&in.getPhysicalDeviceFeatures2, "vkGetPhysicalDeviceFeatures2"},
		{&in.getPhysicalDeviceQueueFamilyProperties, "vkGetPhysicalDeviceQueueFamilyProperties"},
		{&in.getPhysicalDeviceMemoryProperties, "vkGetPhysicalDeviceMemoryProperties"},
		{&in.enumerateDeviceExtensionProperties, "vkEnumerateDeviceExtensionProperties"},
		{&in.createDevice, "vkCreateDevice"},
		{&in.getDeviceProcAddr, "vkGetDeviceProcAddr"},
	} {
		if *b.fn = l.instanceProc(h, b.name); *b.fn == 0 {
			in.Destroy()
			return nil, fmt.Errorf("%w: %s lacks %s", ErrNoLoader, l.Name, b.name)
		}
	}
	return in, nil
}

// Destroy destroys the instance; every device made from it must be
// destroyed first.
func (in *Instance) Destroy() {
	if in.Handle != 0 && in.destroyInstance != 0 {
		call(in.destroyInstance, in.Handle, 0)
	}
	in.Handle = 0
}

// PhysicalDevices lists the instance's physical devices in the loader's
// order (which is the order of their ordinals in qd).
func (in *Instance) PhysicalDevices() ([]uintptr, error) {
	for {
		var n uint32
		if _, err := callResult("vkEnumeratePhysicalDevices", in.enumeratePhysicalDevices, in.Handle, uintptr(unsafe.Pointer(&n)), 0); err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, nil
		}
		devs := make([]uintptr, n)
		r, err := callResult("vkEnumeratePhysicalDevices", in.enumeratePhysicalDevices, in.Handle, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&devs[0])))
		if err != nil {
			return nil, err
		}
		if r == Incomplete {
			continue
		}
		return devs[:n], nil
	}
}

// QueueFamily is one queue family of a physical device.
type QueueFamily struct {
	Index              int
	Flags              uint32 // QueueGraphics | QueueCompute | QueueTransfer ...
	Count              int
	TimestampValidBits int
}

// Features are the optional features qd uses, as a physical device reports
// them.
type Features struct {
	Float64, Int64, Int16, Int8         bool
	StorageBuffer8Bit, StorageBuffer16  bool
	BufferInt64Atomics, SharedInt64Atom bool
	TimelineSemaphore                   bool
	BufferDeviceAddress                 bool
	VulkanMemoryModel                   bool
	Synchronization2                    bool
	SubgroupSizeControl                 bool
	ComputeFullSubgroups                bool
	ShaderFloat16                       bool
	// Float atomics (VK_EXT_shader_atomic_float), on storage buffers and
	// workgroup memory; false where the extension is absent.
	BufferFloat32Atomics, BufferFloat32AtomicAdd bool
	BufferFloat64Atomics, BufferFloat64AtomicAdd bool
	SharedFloat32Atomics, SharedFloat32AtomicAdd bool
	SharedFloat64Atomics, SharedFloat64AtomicAdd bool

	// raw holds the chain as queried, to enable exactly these features at
	// device creation.
	raw *featureChain
}

// featureChain is VkPhysicalDeviceFeatures2 with the 1.1, 1.2 and 1.3
// feature structures and the float-atomics extension's chained after it.
type featureChain struct {
	f2          PhysicalDeviceFeatures2
	v11         PhysicalDeviceVulkan11Features
	v12         PhysicalDeviceVulkan12Features
	v13         PhysicalDeviceVulkan13Features
	atomicFloat PhysicalDeviceShaderAtomicFloatFeaturesEXT
}

// link sets the sTypes and pNext pointers; with atomicFloat false the
// extension's structure is left out of the chain.
func (c *featureChain) link(apiVersion uint32, atomicFloat bool) {
	c.f2.SType = StructureTypePhysicalDeviceFeatures2
	c.v11.SType = StructureTypePhysicalDeviceVulkan11Features
	c.v12.SType = StructureTypePhysicalDeviceVulkan12Features
	c.v13.SType = StructureTypePhysicalDeviceVulkan13Features
	c.atomicFloat.SType = StructureTypePhysicalDeviceShaderAtomicFloatFeats
	c.f2.PNext = unsafe.Pointer(&c.v11)
	c.v11.PNext = unsafe.Pointer(&c.v12)
	c.v12.PNext = nil
	c.v13.PNext = nil
	tail := &c.v12.PNext
	if apiVersion >= MakeAPIVersion(1, 3, 0) {
		*tail = unsafe.Pointer(&c.v13)
		tail = &c.v13.PNext
	}
	if atomicFloat {
		*tail = unsafe.Pointer(&c.atomicFloat)
	}
}

// AtomicFloatExtension is the extension that adds float atomics.
const AtomicFloatExtension = "VK_EXT_shader_atomic_float"

// PhysicalDeviceInfo is what qd reads from a physical device.
type PhysicalDeviceInfo struct {
	Handle        uintptr
	Name          string
	Type          uint32 // PhysicalDeviceType*
	APIVersion    uint32
	DriverVersion uint32
	VendorID      uint32
	DeviceID      uint32
	Limits        PhysicalDeviceLimits
	SubgroupSize  int
	SubgroupOps   uint32 // SubgroupFeature*
	QueueFamilies []QueueFamily
	Memory        PhysicalDeviceMemoryProperties
	Extensions    []string
	Features      Features
}

// TypeName names a physical device type: "discrete GPU", "CPU".
func TypeName(t uint32) string {
	switch t {
	case PhysicalDeviceTypeIntegratedGPU:
		return "integrated GPU"
	case PhysicalDeviceTypeDiscreteGPU:
		return "discrete GPU"
	case PhysicalDeviceTypeVirtualGPU:
		return "virtual GPU"
	case PhysicalDeviceTypeCPU:
		return "CPU"
	}
	return "other"
}

// DeviceLocalBytes is the size of the largest device-local heap (the
// only heap, on a device with unified memory).
func (p *PhysicalDeviceInfo) DeviceLocalBytes() uint64 {
	var best uint64
	for i := range p.Memory.MemoryHeapCount {
		h := p.Memory.MemoryHeaps[i]
		if h.Flags&MemoryHeapDeviceLocal != 0 && h.Size > best {
			best = h.Size
		}
	}
	return best
}

// Describe reads everything qd needs to know about physical device pd.
func (in *Instance) Describe(pd uintptr) (*PhysicalDeviceInfo, error) {
	p := &PhysicalDeviceInfo{Handle: pd}

	sub := &PhysicalDeviceSubgroupProperties{SType: StructureTypePhysicalDeviceSubgroupProperties}
	props := &PhysicalDeviceProperties2{SType: StructureTypePhysicalDeviceProperties2, PNext: unsafe.Pointer(sub)}
	call(in.getPhysicalDeviceProperties2, pd, uintptr(unsafe.Pointer(props)))
	pr := &props.Properties
	p.Name = gpu.CBytes(pr.DeviceName[:])
	p.Type, p.APIVersion, p.DriverVersion = pr.DeviceType, pr.ApiVersion, pr.DriverVersion
	p.VendorID, p.DeviceID = pr.VendorID, pr.DeviceID
	p.Limits = pr.Limits
	p.SubgroupSize, p.SubgroupOps = int(sub.SubgroupSize), sub.SupportedOperations

	var n uint32
	call(in.getPhysicalDeviceQueueFamilyProperties, pd, uintptr(unsafe.Pointer(&n)), 0)
	if n > 0 {
		qf := make([]QueueFamilyProperties, n)
		call(in.getPhysicalDeviceQueueFamilyProperties, pd, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&qf[0])))
		for i, q := range qf[:n] {
			p.QueueFamilies = append(p.QueueFamilies, QueueFamily{Index: i, Flags: q.QueueFlags, Count: int(q.QueueCount), TimestampValidBits: int(q.TimestampValidBits)})
		}
	}
	call(in.getPhysicalDeviceMemoryProperties, pd, uintptr(unsafe.Pointer(&p.Memory)))

	exts, err := enumerateExtensions("vkEnumerateDeviceExtensionProperties", func(n *uint32, e *ExtensionProperties) uintptr {
		return call(in.enumerateDeviceExtensionProperties, pd, 0, uintptr(unsafe.Pointer(n)), uintptr(unsafe.Pointer(e)))
	})
	if err != nil {
		return nil, err
	}
	p.Extensions = exts

	c := new(featureChain)
	hasAtomicFloat := slices.Contains(exts, AtomicFloatExtension)
	c.link(p.APIVersion, hasAtomicFloat)
	call(in.getPhysicalDeviceFeatures2, pd, uintptr(unsafe.Pointer(&c.f2)))
	f := &p.Features
	f.raw = c
	b := func(v uint32) bool { return v != 0 }
	f.Float64, f.Int64, f.Int16 = b(c.f2.Features.ShaderFloat64), b(c.f2.Features.ShaderInt64), b(c.f2.Features.ShaderInt16)
	f.Int8, f.ShaderFloat16 = b(c.v12.ShaderInt8), b(c.v12.ShaderFloat16)
	f.StorageBuffer8Bit, f.StorageBuffer16 = b(c.v12.StorageBuffer8BitAccess), b(c.v11.StorageBuffer16BitAccess)
	f.BufferInt64Atomics, f.SharedInt64Atom = b(c.v12.ShaderBufferInt64Atomics), b(c.v12.ShaderSharedInt64Atomics)
	f.TimelineSemaphore, f.BufferDeviceAddress = b(c.v12.TimelineSemaphore), b(c.v12.BufferDeviceAddress)
	f.VulkanMemoryModel = b(c.v12.VulkanMemoryModel)
	f.Synchronization2, f.SubgroupSizeControl, f.ComputeFullSubgroups = b(c.v13.Synchronization2), b(c.v13.SubgroupSizeControl), b(c.v13.ComputeFullSubgroups)
	if hasAtomicFloat {
		a := &c.atomicFloat
		f.BufferFloat32Atomics, f.BufferFloat32AtomicAdd = b(a.ShaderBufferFloat32Atomics), b(a.ShaderBufferFloat32AtomicAdd)
		f.BufferFloat64Atomics, f.BufferFloat64AtomicAdd = b(a.ShaderBufferFloat64Atomics), b(a.ShaderBufferFloat64AtomicAdd)
		f.SharedFloat32Atomics, f.SharedFloat32AtomicAdd = b(a.ShaderSharedFloat32Atomics), b(a.ShaderSharedFloat32AtomicAdd)
		f.SharedFloat64Atomics, f.SharedFloat64AtomicAdd = b(a.ShaderSharedFloat64Atomics), b(a.ShaderSharedFloat64AtomicAdd)
	}
	return p, nil
}

// ComputeFamily is the queue family qd runs on: a family with compute and
// without graphics (an asynchronous compute family) if there is one, else
// one with graphics; the one with the most queues among those; -1 when
// there is none.
const queueSparseBinding = 0x8 // VK_QUEUE_SPARSE_BINDING_BIT

// TransferFamily is the index of a queue family for transfers alone (no
// graphics, no compute): a GPU's copy engines, which move data between
// host and device memory while the compute queues run kernels; -1 when
// the device has none (lavapipe).
func (p *PhysicalDeviceInfo) TransferFamily() int {
	for _, q := range p.QueueFamilies {
		// Transfer alone (sparse binding aside): not a video family.
		if q.Flags&QueueTransfer != 0 && q.Flags&^(QueueTransfer|queueSparseBinding) == 0 && q.Count > 0 {
			return q.Index
		}
	}
	return -1
}

func (p *PhysicalDeviceInfo) ComputeFamily() int {
	// A family without graphics is the device's asynchronous compute:
	// on NVIDIA's driver the queues of the graphics family share one
	// engine (kernels on two of them never overlapped, measured on an
	// H200), while those of the compute family run at once.
	best := -1
	better := func(q, b QueueFamily) bool {
		qg, bg := q.Flags&QueueGraphics != 0, b.Flags&QueueGraphics != 0
		if qg != bg {
			return !qg
		}
		return q.Count > b.Count
	}
	for _, q := range p.QueueFamilies {
		if q.Flags&QueueCompute == 0 || q.Count == 0 {
			continue
		}
		if best < 0 || better(q, p.QueueFamilies[best]) {
			best = q.Index
		}
	}
	return best
}
