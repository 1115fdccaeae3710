package vk

import (
	"errors"
	"fmt"
)

// Result is a VkResult. Negative values are errors; Success, NotReady,
// Timeout and Incomplete are the status codes qd's calls return.
type Result int32

// The VkResult values qd tells apart.
const (
	Success                    Result = 0
	NotReady                   Result = 1
	Timeout                    Result = 2
	Incomplete                 Result = 5
	ErrorOutOfHostMemory       Result = -1
	ErrorOutOfDeviceMemory     Result = -2
	ErrorInitializationFailed  Result = -3
	ErrorDeviceLost            Result = -4
	ErrorMemoryMapFailed       Result = -5
	ErrorLayerNotPresent       Result = -6
	ErrorExtensionNotPresent   Result = -7
	ErrorFeatureNotPresent     Result = -8
	ErrorIncompatibleDriver    Result = -9
	ErrorTooManyObjects        Result = -10
	ErrorFormatNotSupported    Result = -11
	ErrorFragmentedPool        Result = -12
	ErrorUnknown               Result = -13
	ErrorOutOfPoolMemory       Result = -1000069000
	ErrorInvalidExternalHandle Result = -1000072003
	ErrorFragmentation         Result = -1000161000
	ErrorInvalidOpaqueAddress  Result = -1000257000
	ErrorValidationFailed      Result = -1000011001
	ErrorInvalidShaderNV       Result = -1000012000
)

var resultNames = map[Result]string{
	Success:                    "VK_SUCCESS",
	NotReady:                   "VK_NOT_READY",
	Timeout:                    "VK_TIMEOUT",
	Incomplete:                 "VK_INCOMPLETE",
	ErrorOutOfHostMemory:       "VK_ERROR_OUT_OF_HOST_MEMORY",
	ErrorOutOfDeviceMemory:     "VK_ERROR_OUT_OF_DEVICE_MEMORY",
	ErrorInitializationFailed:  "VK_ERROR_INITIALIZATION_FAILED",
	ErrorDeviceLost:            "VK_ERROR_DEVICE_LOST",
	ErrorMemoryMapFailed:       "VK_ERROR_MEMORY_MAP_FAILED",
	ErrorLayerNotPresent:       "VK_ERROR_LAYER_NOT_PRESENT",
	ErrorExtensionNotPresent:   "VK_ERROR_EXTENSION_NOT_PRESENT",
	ErrorFeatureNotPresent:     "VK_ERROR_FEATURE_NOT_PRESENT",
	ErrorIncompatibleDriver:    "VK_ERROR_INCOMPATIBLE_DRIVER",
	ErrorTooManyObjects:        "VK_ERROR_TOO_MANY_OBJECTS",
	ErrorFormatNotSupported:    "VK_ERROR_FORMAT_NOT_SUPPORTED",
	ErrorFragmentedPool:        "VK_ERROR_FRAGMENTED_POOL",
	ErrorUnknown:               "VK_ERROR_UNKNOWN",
	ErrorOutOfPoolMemory:       "VK_ERROR_OUT_OF_POOL_MEMORY",
	ErrorInvalidExternalHandle: "VK_ERROR_INVALID_EXTERNAL_HANDLE",
	ErrorFragmentation:         "VK_ERROR_FRAGMENTATION",
	ErrorInvalidOpaqueAddress:  "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS",
	ErrorValidationFailed:      "VK_ERROR_VALIDATION_FAILED_EXT",
	ErrorInvalidShaderNV:       "VK_ERROR_INVALID_SHADER_NV",
}

func (r Result) String() string {
	if s, ok := resultNames[r]; ok {
		return s
	}
	return fmt.Sprintf("VkResult(%d)", int32(r))
}

// ErrNoLoader says that no Vulkan loader could be opened, or that it
// offers no usable instance.
var ErrNoLoader = errors.New("no Vulkan loader")

// Error is a failed Vulkan call: the function and its result.
type Error struct {
	Func   string
	Result Result
}

func (e *Error) Error() string { return e.Func + ": " + e.Result.String() }

// check returns nil for a status code (r ≥ 0) and an *Error otherwise.
func check(fn string, r Result) error {
	if r >= 0 {
		return nil
	}
	return &Error{Func: fn, Result: r}
}
