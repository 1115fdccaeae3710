package vk

import "unsafe"

// The structures qd passes to Vulkan, in C layout: each field in the order,
// and with the type width, of vulkan_core.h (1.3.239), so that Go lays them
// out as a C compiler does on every 64-bit target (uint64 aligned to 8,
// pointers 8 bytes). layout_test.go compares every offset with the C
// compiler's where the headers are present (QD_VULKAN_HEADERS, set by
// .ci/install-vulkan.sh). Names drop the Vk prefix; fields keep Vulkan's
// names with the first letter raised. Dispatchable handles are uintptr,
// non-dispatchable ones uint64, enums and flags uint32, VkBool32 uint32.

type ApplicationInfo struct {
	SType              uint32
	PNext              unsafe.Pointer
	PApplicationName   unsafe.Pointer
	ApplicationVersion uint32
	PEngineName        unsafe.Pointer
	EngineVersion      uint32
	ApiVersion         uint32
}

type InstanceCreateInfo struct {
	SType                   uint32
	PNext                   unsafe.Pointer
	Flags                   uint32
	PApplicationInfo        unsafe.Pointer
	EnabledLayerCount       uint32
	PpEnabledLayerNames     unsafe.Pointer
	EnabledExtensionCount   uint32
	PpEnabledExtensionNames unsafe.Pointer
}

type DeviceQueueCreateInfo struct {
	SType            uint32
	PNext            unsafe.Pointer
	Flags            uint32
	QueueFamilyIndex uint32
	QueueCount       uint32
	PQueuePriorities unsafe.Pointer
}

type DeviceCreateInfo struct {
	SType                   uint32
	PNext                   unsafe.Pointer
	Flags                   uint32
	QueueCreateInfoCount    uint32
	PQueueCreateInfos       unsafe.Pointer
	EnabledLayerCount       uint32
	PpEnabledLayerNames     unsafe.Pointer
	EnabledExtensionCount   uint32
	PpEnabledExtensionNames unsafe.Pointer
	PEnabledFeatures        unsafe.Pointer
}

type Extent3D struct {
	Width  uint32
	Height uint32
	Depth  uint32
}

type QueueFamilyProperties struct {
	QueueFlags                  uint32
	QueueCount                  uint32
	TimestampValidBits          uint32
	MinImageTransferGranularity Extent3D
}

type MemoryType struct {
	PropertyFlags uint32
	HeapIndex     uint32
}

type MemoryHeap struct {
	Size  uint64
	Flags uint32
}

type PhysicalDeviceMemoryProperties struct {
	MemoryTypeCount uint32
	MemoryTypes     [32]MemoryType
	MemoryHeapCount uint32
	MemoryHeaps     [16]MemoryHeap
}

type BufferCreateInfo struct {
	SType                 uint32
	PNext                 unsafe.Pointer
	Flags                 uint32
	Size                  uint64
	Usage                 uint32
	SharingMode           uint32
	QueueFamilyIndexCount uint32
	PQueueFamilyIndices   unsafe.Pointer
}

type MemoryRequirements struct {
	Size           uint64
	Alignment      uint64
	MemoryTypeBits uint32
}

type MemoryAllocateInfo struct {
	SType           uint32
	PNext           unsafe.Pointer
	AllocationSize  uint64
	MemoryTypeIndex uint32
}

type MemoryAllocateFlagsInfo struct {
	SType      uint32
	PNext      unsafe.Pointer
	Flags      uint32
	DeviceMask uint32
}

type BufferDeviceAddressInfo struct {
	SType  uint32
	PNext  unsafe.Pointer
	Buffer uint64
}

type ShaderModuleCreateInfo struct {
	SType    uint32
	PNext    unsafe.Pointer
	Flags    uint32
	CodeSize uintptr
	PCode    unsafe.Pointer
}

type PushConstantRange struct {
	StageFlags uint32
	Offset     uint32
	Size       uint32
}

type PipelineLayoutCreateInfo struct {
	SType                  uint32
	PNext                  unsafe.Pointer
	Flags                  uint32
	SetLayoutCount         uint32
	PSetLayouts            unsafe.Pointer
	PushConstantRangeCount uint32
	PPushConstantRanges    unsafe.Pointer
}

type PipelineShaderStageCreateInfo struct {
	SType               uint32
	PNext               unsafe.Pointer
	Flags               uint32
	Stage               uint32
	Module              uint64
	PName               unsafe.Pointer
	PSpecializationInfo unsafe.Pointer
}

type ComputePipelineCreateInfo struct {
	SType              uint32
	PNext              unsafe.Pointer
	Flags              uint32
	Stage              PipelineShaderStageCreateInfo
	Layout             uint64
	BasePipelineHandle uint64
	BasePipelineIndex  int32
}

type CommandPoolCreateInfo struct {
	SType            uint32
	PNext            unsafe.Pointer
	Flags            uint32
	QueueFamilyIndex uint32
}

type CommandBufferAllocateInfo struct {
	SType              uint32
	PNext              unsafe.Pointer
	CommandPool        uint64
	Level              uint32
	CommandBufferCount uint32
}

type CommandBufferBeginInfo struct {
	SType            uint32
	PNext            unsafe.Pointer
	Flags            uint32
	PInheritanceInfo unsafe.Pointer
}

type SemaphoreTypeCreateInfo struct {
	SType         uint32
	PNext         unsafe.Pointer
	SemaphoreType uint32
	InitialValue  uint64
}

type SemaphoreCreateInfo struct {
	SType uint32
	PNext unsafe.Pointer
	Flags uint32
}

type TimelineSemaphoreSubmitInfo struct {
	SType                     uint32
	PNext                     unsafe.Pointer
	WaitSemaphoreValueCount   uint32
	PWaitSemaphoreValues      unsafe.Pointer
	SignalSemaphoreValueCount uint32
	PSignalSemaphoreValues    unsafe.Pointer
}

type SubmitInfo struct {
	SType                uint32
	PNext                unsafe.Pointer
	WaitSemaphoreCount   uint32
	PWaitSemaphores      unsafe.Pointer
	PWaitDstStageMask    unsafe.Pointer
	CommandBufferCount   uint32
	PCommandBuffers      unsafe.Pointer
	SignalSemaphoreCount uint32
	PSignalSemaphores    unsafe.Pointer
}

type SemaphoreWaitInfo struct {
	SType          uint32
	PNext          unsafe.Pointer
	Flags          uint32
	SemaphoreCount uint32
	PSemaphores    unsafe.Pointer
	PValues        unsafe.Pointer
}

type SemaphoreSignalInfo struct {
	SType     uint32
	PNext     unsafe.Pointer
	Semaphore uint64
	Value     uint64
}

type BufferCopy struct {
	SrcOffset uint64
	DstOffset uint64
	Size      uint64
}

type MemoryBarrier struct {
	SType         uint32
	PNext         unsafe.Pointer
	SrcAccessMask uint32
	DstAccessMask uint32
}

type PhysicalDeviceFeatures struct {
	RobustBufferAccess                      uint32
	FullDrawIndexUint32                     uint32
	ImageCubeArray                          uint32
	IndependentBlend                        uint32
	GeometryShader                          uint32
	TessellationShader                      uint32
	SampleRateShading                       uint32
	DualSrcBlend                            uint32
	LogicOp                                 uint32
	MultiDrawIndirect                       uint32
	DrawIndirectFirstInstance               uint32
	DepthClamp                              uint32
	DepthBiasClamp                          uint32
	FillModeNonSolid                        uint32
	DepthBounds                             uint32
	WideLines                               uint32
	LargePoints                             uint32
	AlphaToOne                              uint32
	MultiViewport                           uint32
	SamplerAnisotropy                       uint32
	TextureCompressionETC2                  uint32
	TextureCompressionASTC_LDR              uint32
	TextureCompressionBC                    uint32
	OcclusionQueryPrecise                   uint32
	PipelineStatisticsQuery                 uint32
	VertexPipelineStoresAndAtomics          uint32
	FragmentStoresAndAtomics                uint32
	ShaderTessellationAndGeometryPointSize  uint32
	ShaderImageGatherExtended               uint32
	ShaderStorageImageExtendedFormats       uint32
	ShaderStorageImageMultisample           uint32
	ShaderStorageImageReadWithoutFormat     uint32
	ShaderStorageImageWriteWithoutFormat    uint32
	ShaderUniformBufferArrayDynamicIndexing uint32
	ShaderSampledImageArrayDynamicIndexing  uint32
	ShaderStorageBufferArrayDynamicIndexing uint32
	ShaderStorageImageArrayDynamicIndexing  uint32
	ShaderClipDistance                      uint32
	ShaderCullDistance                      uint32
	ShaderFloat64                           uint32
	ShaderInt64                             uint32
	ShaderInt16                             uint32
	ShaderResourceResidency                 uint32
	ShaderResourceMinLod                    uint32
	SparseBinding                           uint32
	SparseResidencyBuffer                   uint32
	SparseResidencyImage2D                  uint32
	SparseResidencyImage3D                  uint32
	SparseResidency2Samples                 uint32
	SparseResidency4Samples                 uint32
	SparseResidency8Samples                 uint32
	SparseResidency16Samples                uint32
	SparseResidencyAliased                  uint32
	VariableMultisampleRate                 uint32
	InheritedQueries                        uint32
}

type PhysicalDeviceFeatures2 struct {
	SType    uint32
	PNext    unsafe.Pointer
	Features PhysicalDeviceFeatures
}

type PhysicalDeviceVulkan11Features struct {
	SType                              uint32
	PNext                              unsafe.Pointer
	StorageBuffer16BitAccess           uint32
	UniformAndStorageBuffer16BitAccess uint32
	StoragePushConstant16              uint32
	StorageInputOutput16               uint32
	Multiview                          uint32
	MultiviewGeometryShader            uint32
	MultiviewTessellationShader        uint32
	VariablePointersStorageBuffer      uint32
	VariablePointers                   uint32
	ProtectedMemory                    uint32
	SamplerYcbcrConversion             uint32
	ShaderDrawParameters               uint32
}

type PhysicalDeviceVulkan12Features struct {
	SType                                              uint32
	PNext                                              unsafe.Pointer
	SamplerMirrorClampToEdge                           uint32
	DrawIndirectCount                                  uint32
	StorageBuffer8BitAccess                            uint32
	UniformAndStorageBuffer8BitAccess                  uint32
	StoragePushConstant8                               uint32
	ShaderBufferInt64Atomics                           uint32
	ShaderSharedInt64Atomics                           uint32
	ShaderFloat16                                      uint32
	ShaderInt8                                         uint32
	DescriptorIndexing                                 uint32
	ShaderInputAttachmentArrayDynamicIndexing          uint32
	ShaderUniformTexelBufferArrayDynamicIndexing       uint32
	ShaderStorageTexelBufferArrayDynamicIndexing       uint32
	ShaderUniformBufferArrayNonUniformIndexing         uint32
	ShaderSampledImageArrayNonUniformIndexing          uint32
	ShaderStorageBufferArrayNonUniformIndexing         uint32
	ShaderStorageImageArrayNonUniformIndexing          uint32
	ShaderInputAttachmentArrayNonUniformIndexing       uint32
	ShaderUniformTexelBufferArrayNonUniformIndexing    uint32
	ShaderStorageTexelBufferArrayNonUniformIndexing    uint32
	DescriptorBindingUniformBufferUpdateAfterBind      uint32
	DescriptorBindingSampledImageUpdateAfterBind       uint32
	DescriptorBindingStorageImageUpdateAfterBind       uint32
	DescriptorBindingStorageBufferUpdateAfterBind      uint32
	DescriptorBindingUniformTexelBufferUpdateAfterBind uint32
	DescriptorBindingStorageTexelBufferUpdateAfterBind uint32
	DescriptorBindingUpdateUnusedWhilePending          uint32
	DescriptorBindingPartiallyBound                    uint32
	DescriptorBindingVariableDescriptorCount           uint32
	RuntimeDescriptorArray                             uint32
	SamplerFilterMinmax                                uint32
	ScalarBlockLayout                                  uint32
	ImagelessFramebuffer                               uint32
	UniformBufferStandardLayout                        uint32
	ShaderSubgroupExtendedTypes                        uint32
	SeparateDepthStencilLayouts                        uint32
	HostQueryReset                                     uint32
	TimelineSemaphore                                  uint32
	BufferDeviceAddress                                uint32
	BufferDeviceAddressCaptureReplay                   uint32
	BufferDeviceAddressMultiDevice                     uint32
	VulkanMemoryModel                                  uint32
	VulkanMemoryModelDeviceScope                       uint32
	VulkanMemoryModelAvailabilityVisibilityChains      uint32
	ShaderOutputViewportIndex                          uint32
	ShaderOutputLayer                                  uint32
	SubgroupBroadcastDynamicId                         uint32
}

type PhysicalDeviceVulkan13Features struct {
	SType                                              uint32
	PNext                                              unsafe.Pointer
	RobustImageAccess                                  uint32
	InlineUniformBlock                                 uint32
	DescriptorBindingInlineUniformBlockUpdateAfterBind uint32
	PipelineCreationCacheControl                       uint32
	PrivateData                                        uint32
	ShaderDemoteToHelperInvocation                     uint32
	ShaderTerminateInvocation                          uint32
	SubgroupSizeControl                                uint32
	ComputeFullSubgroups                               uint32
	Synchronization2                                   uint32
	TextureCompressionASTC_HDR                         uint32
	ShaderZeroInitializeWorkgroupMemory                uint32
	DynamicRendering                                   uint32
	ShaderIntegerDotProduct                            uint32
	Maintenance4                                       uint32
}

type PhysicalDeviceShaderAtomicFloatFeaturesEXT struct {
	SType                        uint32
	PNext                        unsafe.Pointer
	ShaderBufferFloat32Atomics   uint32
	ShaderBufferFloat32AtomicAdd uint32
	ShaderBufferFloat64Atomics   uint32
	ShaderBufferFloat64AtomicAdd uint32
	ShaderSharedFloat32Atomics   uint32
	ShaderSharedFloat32AtomicAdd uint32
	ShaderSharedFloat64Atomics   uint32
	ShaderSharedFloat64AtomicAdd uint32
	ShaderImageFloat32Atomics    uint32
	ShaderImageFloat32AtomicAdd  uint32
	SparseImageFloat32Atomics    uint32
	SparseImageFloat32AtomicAdd  uint32
}

type PhysicalDeviceLimits struct {
	MaxImageDimension1D                             uint32
	MaxImageDimension2D                             uint32
	MaxImageDimension3D                             uint32
	MaxImageDimensionCube                           uint32
	MaxImageArrayLayers                             uint32
	MaxTexelBufferElements                          uint32
	MaxUniformBufferRange                           uint32
	MaxStorageBufferRange                           uint32
	MaxPushConstantsSize                            uint32
	MaxMemoryAllocationCount                        uint32
	MaxSamplerAllocationCount                       uint32
	BufferImageGranularity                          uint64
	SparseAddressSpaceSize                          uint64
	MaxBoundDescriptorSets                          uint32
	MaxPerStageDescriptorSamplers                   uint32
	MaxPerStageDescriptorUniformBuffers             uint32
	MaxPerStageDescriptorStorageBuffers             uint32
	MaxPerStageDescriptorSampledImages              uint32
	MaxPerStageDescriptorStorageImages              uint32
	MaxPerStageDescriptorInputAttachments           uint32
	MaxPerStageResources                            uint32
	MaxDescriptorSetSamplers                        uint32
	MaxDescriptorSetUniformBuffers                  uint32
	MaxDescriptorSetUniformBuffersDynamic           uint32
	MaxDescriptorSetStorageBuffers                  uint32
	MaxDescriptorSetStorageBuffersDynamic           uint32
	MaxDescriptorSetSampledImages                   uint32
	MaxDescriptorSetStorageImages                   uint32
	MaxDescriptorSetInputAttachments                uint32
	MaxVertexInputAttributes                        uint32
	MaxVertexInputBindings                          uint32
	MaxVertexInputAttributeOffset                   uint32
	MaxVertexInputBindingStride                     uint32
	MaxVertexOutputComponents                       uint32
	MaxTessellationGenerationLevel                  uint32
	MaxTessellationPatchSize                        uint32
	MaxTessellationControlPerVertexInputComponents  uint32
	MaxTessellationControlPerVertexOutputComponents uint32
	MaxTessellationControlPerPatchOutputComponents  uint32
	MaxTessellationControlTotalOutputComponents     uint32
	MaxTessellationEvaluationInputComponents        uint32
	MaxTessellationEvaluationOutputComponents       uint32
	MaxGeometryShaderInvocations                    uint32
	MaxGeometryInputComponents                      uint32
	MaxGeometryOutputComponents                     uint32
	MaxGeometryOutputVertices                       uint32
	MaxGeometryTotalOutputComponents                uint32
	MaxFragmentInputComponents                      uint32
	MaxFragmentOutputAttachments                    uint32
	MaxFragmentDualSrcAttachments                   uint32
	MaxFragmentCombinedOutputResources              uint32
	MaxComputeSharedMemorySize                      uint32
	MaxComputeWorkGroupCount                        [3]uint32
	MaxComputeWorkGroupInvocations                  uint32
	MaxComputeWorkGroupSize                         [3]uint32
	SubPixelPrecisionBits                           uint32
	SubTexelPrecisionBits                           uint32
	MipmapPrecisionBits                             uint32
	MaxDrawIndexedIndexValue                        uint32
	MaxDrawIndirectCount                            uint32
	MaxSamplerLodBias                               float32
	MaxSamplerAnisotropy                            float32
	MaxViewports                                    uint32
	MaxViewportDimensions                           [2]uint32
	ViewportBoundsRange                             [2]float32
	ViewportSubPixelBits                            uint32
	MinMemoryMapAlignment                           uintptr
	MinTexelBufferOffsetAlignment                   uint64
	MinUniformBufferOffsetAlignment                 uint64
	MinStorageBufferOffsetAlignment                 uint64
	MinTexelOffset                                  int32
	MaxTexelOffset                                  uint32
	MinTexelGatherOffset                            int32
	MaxTexelGatherOffset                            uint32
	MinInterpolationOffset                          float32
	MaxInterpolationOffset                          float32
	SubPixelInterpolationOffsetBits                 uint32
	MaxFramebufferWidth                             uint32
	MaxFramebufferHeight                            uint32
	MaxFramebufferLayers                            uint32
	FramebufferColorSampleCounts                    uint32
	FramebufferDepthSampleCounts                    uint32
	FramebufferStencilSampleCounts                  uint32
	FramebufferNoAttachmentsSampleCounts            uint32
	MaxColorAttachments                             uint32
	SampledImageColorSampleCounts                   uint32
	SampledImageIntegerSampleCounts                 uint32
	SampledImageDepthSampleCounts                   uint32
	SampledImageStencilSampleCounts                 uint32
	StorageImageSampleCounts                        uint32
	MaxSampleMaskWords                              uint32
	TimestampComputeAndGraphics                     uint32
	TimestampPeriod                                 float32
	MaxClipDistances                                uint32
	MaxCullDistances                                uint32
	MaxCombinedClipAndCullDistances                 uint32
	DiscreteQueuePriorities                         uint32
	PointSizeRange                                  [2]float32
	LineWidthRange                                  [2]float32
	PointSizeGranularity                            float32
	LineWidthGranularity                            float32
	StrictLines                                     uint32
	StandardSampleLocations                         uint32
	OptimalBufferCopyOffsetAlignment                uint64
	OptimalBufferCopyRowPitchAlignment              uint64
	NonCoherentAtomSize                             uint64
}

type PhysicalDeviceSparseProperties struct {
	ResidencyStandard2DBlockShape            uint32
	ResidencyStandard2DMultisampleBlockShape uint32
	ResidencyStandard3DBlockShape            uint32
	ResidencyAlignedMipSize                  uint32
	ResidencyNonResidentStrict               uint32
}

type PhysicalDeviceProperties struct {
	ApiVersion        uint32
	DriverVersion     uint32
	VendorID          uint32
	DeviceID          uint32
	DeviceType        uint32
	DeviceName        [256]byte
	PipelineCacheUUID [16]uint8
	Limits            PhysicalDeviceLimits
	SparseProperties  PhysicalDeviceSparseProperties
}

type PhysicalDeviceProperties2 struct {
	SType      uint32
	PNext      unsafe.Pointer
	Properties PhysicalDeviceProperties
}

type PhysicalDeviceSubgroupProperties struct {
	SType                     uint32
	PNext                     unsafe.Pointer
	SubgroupSize              uint32
	SupportedStages           uint32
	SupportedOperations       uint32
	QuadOperationsInAllStages uint32
}

type ExtensionProperties struct {
	ExtensionName [256]byte
	SpecVersion   uint32
}

type QueryPoolCreateInfo struct {
	SType              uint32
	PNext              unsafe.Pointer
	Flags              uint32
	QueryType          uint32
	QueryCount         uint32
	PipelineStatistics uint32
}

type MappedMemoryRange struct {
	SType  uint32
	PNext  unsafe.Pointer
	Memory uint64
	Offset uint64
	Size   uint64
}
