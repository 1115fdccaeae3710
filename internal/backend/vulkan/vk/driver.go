package vk

import (
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// StructureTypePhysicalDeviceDriverProperties is the sType of
// PhysicalDeviceDriverProperties (core in Vulkan 1.2).
const StructureTypePhysicalDeviceDriverProperties = 1000196000

type ConformanceVersion struct {
	Major    uint8
	Minor    uint8
	Subminor uint8
	Patch    uint8
}

type PhysicalDeviceDriverProperties struct {
	SType              uint32
	PNext              unsafe.Pointer
	DriverID           uint32
	DriverName         [256]byte
	DriverInfo         [256]byte
	ConformanceVersion ConformanceVersion
}

// Driver names the driver of physical device pd, whose API version is
// apiVersion: its name ("llvmpipe", "NVIDIA") and its own description of
// its version ("Mesa 22.3.6 (LLVM 15.0.6)", "535.104.05"). Both are
// empty before Vulkan 1.2, where the query does not exist: the driver
// version of PhysicalDeviceInfo is packed in a vendor's own way.
func (in *Instance) Driver(pd uintptr, apiVersion uint32) (name, info string) {
	if apiVersion < MakeAPIVersion(1, 2, 0) {
		return "", ""
	}
	dp := &PhysicalDeviceDriverProperties{SType: StructureTypePhysicalDeviceDriverProperties}
	props := &PhysicalDeviceProperties2{SType: StructureTypePhysicalDeviceProperties2, PNext: unsafe.Pointer(dp)}
	call(in.getPhysicalDeviceProperties2, pd, uintptr(unsafe.Pointer(props)))
	return gpu.CBytes(dp.DriverName[:]), gpu.CBytes(dp.DriverInfo[:])
}
