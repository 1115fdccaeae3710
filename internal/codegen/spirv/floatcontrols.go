package spirv

// Float controls (SPV_KHR_float_controls, core in SPIR-V 1.4 and Vulkan
// 1.2), not in grammar.go's selection: without SignedZeroInfNanPreserve a
// driver may treat floats as if they had no signed zeros, infinities or
// NaNs — lavapipe then gives 0 for Go's -0 and an infinity for a NaN.
//
// DenormPreserve keeps subnormal numbers, which Go has: NVIDIA's driver
// flushes float32 subnormals to zero without it.
const (
	ExecutionModeDenormPreserve           = 4459
	ExecutionModeSignedZeroInfNanPreserve = 4461
	CapabilityDenormPreserve              = 4464
	CapabilitySignedZeroInfNanPreserve    = 4466
)
