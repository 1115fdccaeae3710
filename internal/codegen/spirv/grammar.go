// Code generated from the SPIR-V grammar (SPIRV-Headers 1.3.239, spirv.core.grammar.json
// and extinst.glsl.std.450.grammar.json) by a one-off script; DO NOT EDIT.
// It holds only what package spirv emits.

package spirv

// SPIR-V opcodes.
const (
	OpNop                       = 0
	OpUndef                     = 1
	OpName                      = 5
	OpMemberName                = 6
	OpExtension                 = 10
	OpExtInstImport             = 11
	OpExtInst                   = 12
	OpMemoryModel               = 14
	OpEntryPoint                = 15
	OpExecutionMode             = 16
	OpCapability                = 17
	OpTypeVoid                  = 19
	OpTypeBool                  = 20
	OpTypeInt                   = 21
	OpTypeFloat                 = 22
	OpTypeVector                = 23
	OpTypeArray                 = 28
	OpTypeRuntimeArray          = 29
	OpTypeStruct                = 30
	OpTypePointer               = 32
	OpTypeFunction              = 33
	OpConstantTrue              = 41
	OpConstantFalse             = 42
	OpConstant                  = 43
	OpConstantComposite         = 44
	OpConstantNull              = 46
	OpSpecConstant              = 50
	OpFunction                  = 54
	OpFunctionParameter         = 55
	OpFunctionEnd               = 56
	OpFunctionCall              = 57
	OpVariable                  = 59
	OpLoad                      = 61
	OpStore                     = 62
	OpAccessChain               = 65
	OpPtrAccessChain            = 67
	OpDecorate                  = 71
	OpMemberDecorate            = 72
	OpCompositeConstruct        = 80
	OpCompositeExtract          = 81
	OpConvertFToU               = 109
	OpConvertFToS               = 110
	OpConvertSToF               = 111
	OpConvertUToF               = 112
	OpUConvert                  = 113
	OpSConvert                  = 114
	OpFConvert                  = 115
	OpConvertPtrToU             = 117
	OpConvertUToPtr             = 120
	OpBitcast                   = 124
	OpSNegate                   = 126
	OpFNegate                   = 127
	OpIAdd                      = 128
	OpFAdd                      = 129
	OpISub                      = 130
	OpFSub                      = 131
	OpIMul                      = 132
	OpFMul                      = 133
	OpUDiv                      = 134
	OpSDiv                      = 135
	OpFDiv                      = 136
	OpUMod                      = 137
	OpSRem                      = 138
	OpSMod                      = 139
	OpFRem                      = 140
	OpFMod                      = 141
	OpIAddCarry                 = 149
	OpISubBorrow                = 150
	OpUMulExtended              = 151
	OpSMulExtended              = 152
	OpIsNan                     = 156
	OpIsInf                     = 157
	OpLogicalEqual              = 164
	OpLogicalNotEqual           = 165
	OpLogicalOr                 = 166
	OpLogicalAnd                = 167
	OpLogicalNot                = 168
	OpSelect                    = 169
	OpIEqual                    = 170
	OpINotEqual                 = 171
	OpUGreaterThan              = 172
	OpSGreaterThan              = 173
	OpUGreaterThanEqual         = 174
	OpSGreaterThanEqual         = 175
	OpULessThan                 = 176
	OpSLessThan                 = 177
	OpULessThanEqual            = 178
	OpSLessThanEqual            = 179
	OpFOrdEqual                 = 180
	OpFUnordEqual               = 181
	OpFOrdNotEqual              = 182
	OpFUnordNotEqual            = 183
	OpFOrdLessThan              = 184
	OpFUnordLessThan            = 185
	OpFOrdGreaterThan           = 186
	OpFUnordGreaterThan         = 187
	OpFOrdLessThanEqual         = 188
	OpFUnordLessThanEqual       = 189
	OpFOrdGreaterThanEqual      = 190
	OpFUnordGreaterThanEqual    = 191
	OpShiftRightLogical         = 194
	OpShiftRightArithmetic      = 195
	OpShiftLeftLogical          = 196
	OpBitwiseOr                 = 197
	OpBitwiseXor                = 198
	OpBitwiseAnd                = 199
	OpNot                       = 200
	OpBitCount                  = 205
	OpControlBarrier            = 224
	OpMemoryBarrier             = 225
	OpAtomicLoad                = 227
	OpAtomicStore               = 228
	OpAtomicExchange            = 229
	OpAtomicCompareExchange     = 230
	OpAtomicIIncrement          = 232
	OpAtomicIAdd                = 234
	OpAtomicISub                = 235
	OpAtomicSMin                = 236
	OpAtomicUMin                = 237
	OpAtomicSMax                = 238
	OpAtomicUMax                = 239
	OpAtomicAnd                 = 240
	OpAtomicOr                  = 241
	OpAtomicXor                 = 242
	OpPhi                       = 245
	OpLoopMerge                 = 246
	OpSelectionMerge            = 247
	OpLabel                     = 248
	OpBranch                    = 249
	OpBranchConditional         = 250
	OpSwitch                    = 251
	OpReturn                    = 253
	OpReturnValue               = 254
	OpUnreachable               = 255
	OpGroupNonUniformElect      = 333
	OpGroupNonUniformBallot     = 339
	OpGroupNonUniformShuffle    = 345
	OpGroupNonUniformShuffleXor = 346
	OpGroupNonUniformIAdd       = 349
	OpGroupNonUniformFAdd       = 350
	OpGroupNonUniformSMin       = 353
	OpGroupNonUniformUMin       = 354
	OpGroupNonUniformFMin       = 355
	OpGroupNonUniformSMax       = 356
	OpGroupNonUniformUMax       = 357
	OpGroupNonUniformFMax       = 358
	OpAtomicFMinEXT             = 5614
	OpAtomicFMaxEXT             = 5615
	OpAtomicFAddEXT             = 6035
)

// Capability operands.
const (
	CapabilityShader                         = 1
	CapabilityInt64                          = 11
	CapabilityInt16                          = 22
	CapabilityInt8                           = 39
	CapabilityFloat64                        = 10
	CapabilityFloat16                        = 9
	CapabilityAddresses                      = 4
	CapabilityPhysicalStorageBufferAddresses = 5347
	CapabilityStorageBuffer8BitAccess        = 4448
	CapabilityStorageBuffer16BitAccess       = 4433
	CapabilityInt64Atomics                   = 12
	CapabilityAtomicFloat32AddEXT            = 6033
	CapabilityAtomicFloat64AddEXT            = 6034
	CapabilityAtomicFloat32MinMaxEXT         = 5612
	CapabilityAtomicFloat64MinMaxEXT         = 5613
	CapabilityGroupNonUniform                = 61
	CapabilityGroupNonUniformArithmetic      = 63
	CapabilityGroupNonUniformShuffle         = 65
	CapabilityGroupNonUniformBallot          = 64
	CapabilityVulkanMemoryModel              = 5345
	CapabilityVulkanMemoryModelDeviceScope   = 5346
)

// StorageClass operands.
const (
	StorageClassUniformConstant       = 0
	StorageClassInput                 = 1
	StorageClassUniform               = 2
	StorageClassWorkgroup             = 4
	StorageClassPrivate               = 6
	StorageClassFunction              = 7
	StorageClassPushConstant          = 9
	StorageClassStorageBuffer         = 12
	StorageClassPhysicalStorageBuffer = 5349
)

// Decoration operands.
const (
	DecorationBlock         = 2
	DecorationArrayStride   = 6
	DecorationOffset        = 35
	DecorationBuiltIn       = 11
	DecorationNoContraction = 42
	DecorationRestrict      = 19
	DecorationAliased       = 20
	DecorationCoherent      = 23
	DecorationVolatile      = 21
	DecorationNonWritable   = 24
)

// BuiltIn operands.
const (
	BuiltInNumWorkgroups             = 24
	BuiltInWorkgroupSize             = 25
	BuiltInWorkgroupId               = 26
	BuiltInLocalInvocationId         = 27
	BuiltInGlobalInvocationId        = 28
	BuiltInLocalInvocationIndex      = 29
	BuiltInSubgroupSize              = 36
	BuiltInSubgroupLocalInvocationId = 41
	BuiltInNumSubgroups              = 38
	BuiltInSubgroupId                = 40
)

// ExecutionModel operands.
const (
	ExecutionModelGLCompute = 5
)

// ExecutionMode operands.
const (
	ExecutionModeLocalSize = 17
)

// AddressingModel operands.
const (
	AddressingModelLogical                 = 0
	AddressingModelPhysicalStorageBuffer64 = 5348
)

// MemoryModel operands.
const (
	MemoryModelGLSL450 = 1
	MemoryModelVulkan  = 3
)

// Scope operands.
const (
	ScopeCrossDevice = 0
	ScopeDevice      = 1
	ScopeWorkgroup   = 2
	ScopeSubgroup    = 3
	ScopeInvocation  = 4
	ScopeQueueFamily = 5
)

// MemorySemantics operands.
const (
	MemorySemanticsRelaxed                = 0x0
	MemorySemanticsAcquire                = 0x2
	MemorySemanticsRelease                = 0x4
	MemorySemanticsAcquireRelease         = 0x8
	MemorySemanticsSequentiallyConsistent = 0x10
	MemorySemanticsUniformMemory          = 0x40
	MemorySemanticsWorkgroupMemory        = 0x100
	MemorySemanticsMakeAvailable          = 0x2000
	MemorySemanticsMakeVisible            = 0x4000
)

// MemoryAccess operands.
const (
	MemoryAccessVolatile    = 0x1
	MemoryAccessAligned     = 0x2
	MemoryAccessNontemporal = 0x4
)

// SelectionControl operands.
const (
	SelectionControlNone        = 0x0
	SelectionControlFlatten     = 0x1
	SelectionControlDontFlatten = 0x2
)

// LoopControl operands.
const (
	LoopControlNone       = 0x0
	LoopControlUnroll     = 0x1
	LoopControlDontUnroll = 0x2
)

// FunctionControl operands.
const (
	FunctionControlNone       = 0x0
	FunctionControlInline     = 0x1
	FunctionControlDontInline = 0x2
	FunctionControlPure       = 0x4
	FunctionControlConst      = 0x8
)

// GroupOperation operands.
const (
	GroupOperationReduce        = 0
	GroupOperationInclusiveScan = 1
	GroupOperationExclusiveScan = 2
)

// GLSL.std.450 extended instructions.
const (
	GLSLRound       = 1
	GLSLRoundEven   = 2
	GLSLTrunc       = 3
	GLSLFAbs        = 4
	GLSLSAbs        = 5
	GLSLFSign       = 6
	GLSLFloor       = 8
	GLSLCeil        = 9
	GLSLFract       = 10
	GLSLSqrt        = 31
	GLSLInverseSqrt = 32
	GLSLExp         = 27
	GLSLLog         = 28
	GLSLExp2        = 29
	GLSLLog2        = 30
	GLSLPow         = 26
	GLSLSin         = 13
	GLSLCos         = 14
	GLSLTan         = 15
	GLSLFMin        = 37
	GLSLUMin        = 38
	GLSLSMin        = 39
	GLSLFMax        = 40
	GLSLUMax        = 41
	GLSLSMax        = 42
	GLSLFma         = 50
	GLSLFindILsb    = 73
	GLSLFindSMsb    = 74
	GLSLFindUMsb    = 75
	GLSLNMin        = 79
	GLSLNMax        = 80
	GLSLLdexp       = 53
	GLSLFrexp       = 51
)
