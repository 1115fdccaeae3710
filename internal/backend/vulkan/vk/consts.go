package vk

// Structure types (VkStructureType) of the structures in structs.go.
const (
	StructureTypeApplicationInfo                      = 0
	StructureTypeInstanceCreateInfo                   = 1
	StructureTypeDeviceQueueCreateInfo                = 2
	StructureTypeDeviceCreateInfo                     = 3
	StructureTypeSubmitInfo                           = 4
	StructureTypeMemoryAllocateInfo                   = 5
	StructureTypeMappedMemoryRange                    = 6
	StructureTypeSemaphoreCreateInfo                  = 9
	StructureTypeQueryPoolCreateInfo                  = 11
	StructureTypeBufferCreateInfo                     = 12
	StructureTypeShaderModuleCreateInfo               = 16
	StructureTypePipelineShaderStageCreateInfo        = 18
	StructureTypeComputePipelineCreateInfo            = 29
	StructureTypePipelineLayoutCreateInfo             = 30
	StructureTypeCommandPoolCreateInfo                = 39
	StructureTypeCommandBufferAllocateInfo            = 40
	StructureTypeCommandBufferBeginInfo               = 42
	StructureTypeMemoryBarrier                        = 46
	StructureTypePhysicalDeviceVulkan11Features       = 49
	StructureTypePhysicalDeviceVulkan12Features       = 51
	StructureTypePhysicalDeviceVulkan13Features       = 53
	StructureTypePhysicalDeviceFeatures2              = 1000059000
	StructureTypePhysicalDeviceProperties2            = 1000059001
	StructureTypeMemoryAllocateFlagsInfo              = 1000060000
	StructureTypePhysicalDeviceSubgroupProperties     = 1000094000
	StructureTypeSemaphoreTypeCreateInfo              = 1000207002
	StructureTypeTimelineSemaphoreSubmitInfo          = 1000207003
	StructureTypeSemaphoreWaitInfo                    = 1000207004
	StructureTypeSemaphoreSignalInfo                  = 1000207005
	StructureTypeBufferDeviceAddressInfo              = 1000244001
	StructureTypePhysicalDeviceShaderAtomicFloatFeats = 1000260000
)

// Flags and enumerants.
const (
	InstanceCreateEnumeratePortability = 0x1 // VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR

	PhysicalDeviceTypeOther         = 0
	PhysicalDeviceTypeIntegratedGPU = 1
	PhysicalDeviceTypeDiscreteGPU   = 2
	PhysicalDeviceTypeVirtualGPU    = 3
	PhysicalDeviceTypeCPU           = 4

	QueueGraphics = 0x1
	QueueCompute  = 0x2
	QueueTransfer = 0x4

	MemoryPropertyDeviceLocal  = 0x1
	MemoryPropertyHostVisible  = 0x2
	MemoryPropertyHostCoherent = 0x4
	MemoryPropertyHostCached   = 0x8

	MemoryHeapDeviceLocal = 0x1

	MemoryAllocateDeviceAddress = 0x2

	BufferUsageTransferSrc          = 0x1
	BufferUsageTransferDst          = 0x2
	BufferUsageStorageBuffer        = 0x20
	BufferUsageShaderDeviceAddress  = 0x20000
	SharingModeExclusive            = 0
	SharingModeConcurrent           = 1
	ShaderStageCompute              = 0x20
	PipelineBindPointCompute        = 1
	CommandBufferLevelPrimary       = 0
	CommandPoolCreateTransient      = 0x1
	CommandPoolCreateResetBuffer    = 0x2
	CommandBufferUsageOneTimeSubmit = 0x1
	CommandBufferUsageSimultaneous  = 0x4
	SemaphoreTypeTimeline           = 1

	PipelineStageTopOfPipe     = 0x1
	PipelineStageComputeShader = 0x800
	PipelineStageTransfer      = 0x1000
	PipelineStageBottomOfPipe  = 0x2000
	PipelineStageHost          = 0x4000
	PipelineStageAllCommands   = 0x10000

	AccessShaderRead    = 0x20
	AccessShaderWrite   = 0x40
	AccessTransferRead  = 0x800
	AccessTransferWrite = 0x1000
	AccessHostRead      = 0x2000
	AccessHostWrite     = 0x4000
	AccessMemoryRead    = 0x8000
	AccessMemoryWrite   = 0x10000

	QueryTypeTimestamp = 2
	QueryResult64      = 0x1
	QueryResultWait    = 0x2

	SubgroupFeatureBasic      = 0x1
	SubgroupFeatureVote       = 0x2
	SubgroupFeatureArithmetic = 0x4
	SubgroupFeatureBallot     = 0x8
	SubgroupFeatureShuffle    = 0x10

	WholeSize = ^uint64(0) // VK_WHOLE_SIZE
)

// MakeAPIVersion is VK_MAKE_API_VERSION(0, major, minor, patch).
func MakeAPIVersion(major, minor, patch uint32) uint32 {
	return major<<22 | minor<<12 | patch
}

// APIVersionString renders a packed API version as "1.3.230".
func APIVersionString(v uint32) string {
	return itoa(v>>22&0x7f) + "." + itoa(v>>12&0x3ff) + "." + itoa(v&0xfff)
}

func itoa(v uint32) string {
	if v == 0 {
		return "0"
	}
	var b [10]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[i:])
}
