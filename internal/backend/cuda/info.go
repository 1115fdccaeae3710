package cuda

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// Devices lists the CUDA devices, read without creating a context (device
// queries need only cuInit), so listing is cheap and leaves no state
// behind; or it returns why CUDA is unavailable (an error wrapping
// gpu.ErrNoDriver, gpu.ErrNoDevice or gpu.ErrDriverTooOld).
func Devices() ([]backend.DeviceInfo, error) {
	d, err := load()
	if err != nil {
		return nil, err
	}
	drv := "CUDA " + versionString(d.version)
	if k := kernelDriverVersion(); k != "" {
		drv += ", kernel module " + k
	}
	out := make([]backend.DeviceInfo, 0, d.devices)
	for ord := range d.devices {
		var dev int32
		if r := gpu.Call(&d.own.deviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(ord)); r != success {
			return nil, d.error(&d.own.deviceGet, r)
		}
		var major, minor int
		in := backend.DeviceInfo{Ordinal: ord, Driver: drv}
		for _, q := range []struct {
			attr int
			dst  *int
		}{{attrComputeCapMajor, &major}, {attrComputeCapMinor, &minor}, {attrMultiprocessorCount, &in.Cores}} {
			var v int32
			if r := gpu.Call(&d.own.deviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(q.attr), uintptr(dev)); r != success {
				return nil, d.error(&d.own.deviceGetAttribute, r)
			}
			*q.dst = int(v)
		}
		in.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
		in.Target = fmt.Sprintf("sm_%d%d", major, minor)
		name := make([]byte, 256)
		if r := gpu.Call(&d.own.deviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)-1), uintptr(dev)); r != success {
			return nil, d.error(&d.own.deviceGetName, r)
		}
		in.Name = gpu.GoString(&name[0])
		if r := gpu.Call(&d.own.deviceTotalMem, uintptr(unsafe.Pointer(&in.MemoryBytes)), uintptr(dev)); r != success {
			return nil, d.error(&d.own.deviceTotalMem, r)
		}
		out = append(out, in)
	}
	return out, nil
}

var kernelVersionRE = regexp.MustCompile(`\b\d+\.\d+(\.\d+)?\b`)

// kernelDriverVersion reads the NVIDIA kernel module's version from
// /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX x86_64 Kernel
// Module  580.159.04  ..."); empty when it is not there.
func kernelDriverVersion() string {
	b, err := os.ReadFile("/proc/driver/nvidia/version")
	if err != nil {
		return ""
	}
	return parseKernelVersion(string(b))
}

// parseKernelVersion finds the version on the NVRM line.
func parseKernelVersion(s string) string {
	for line := range strings.Lines(s) {
		if strings.HasPrefix(line, "NVRM") {
			// "x86_64" has no dot: the first dotted number is the version.
			return kernelVersionRE.FindString(line)
		}
	}
	return ""
}
