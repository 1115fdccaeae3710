package cuda

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Info describes one CUDA device, read without creating a context (device
// queries need only cuInit), so listing devices is cheap and leaves no
// state behind.
type Info struct {
	Ordinal     int
	Name        string
	CCMajor     int
	CCMinor     int
	SMs         int    // multiprocessors
	MemoryBytes uint64 // total device memory
	// CUDAVersion is the CUDA version the driver supports ("12.9");
	// KernelDriver the NVIDIA kernel module's version ("580.159.04"), empty
	// where /proc/driver/nvidia/version cannot be read.
	CUDAVersion  string
	KernelDriver string
}

// Devices lists the CUDA devices, or returns why CUDA is unavailable (an
// error wrapping ErrNoDriver, ErrNoDevice or ErrDriverTooOld).
func Devices() ([]Info, error) {
	drv, err := loadDriver()
	if err != nil {
		return nil, err
	}
	kernel := kernelDriverVersion()
	out := make([]Info, 0, drv.devices)
	for ord := range drv.devices {
		var dev int32
		if r := callRes(purego.SyscallN(drv.sym.deviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(ord))); r != cudaSuccess {
			return nil, drv.err("cuDeviceGet", r)
		}
		attr := func(a int) (int, error) {
			var v int32
			r := callRes(purego.SyscallN(drv.sym.deviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a), uintptr(dev)))
			if r != cudaSuccess {
				return 0, drv.err("cuDeviceGetAttribute", r)
			}
			return int(v), nil
		}
		in := Info{Ordinal: ord, CUDAVersion: versionString(drv.version), KernelDriver: kernel}
		for _, q := range []struct {
			attr int
			dst  *int
		}{{attrComputeCapMajor, &in.CCMajor}, {attrComputeCapMinor, &in.CCMinor}, {attrMultiprocessorCount, &in.SMs}} {
			if *q.dst, err = attr(q.attr); err != nil {
				return nil, err
			}
		}
		name := make([]byte, 256)
		if r := callRes(purego.SyscallN(drv.sym.deviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)-1), uintptr(dev))); r != cudaSuccess {
			return nil, drv.err("cuDeviceGetName", r)
		}
		in.Name = goString(&name[0])
		if r := callRes(purego.SyscallN(drv.sym.deviceTotalMem, uintptr(unsafe.Pointer(&in.MemoryBytes)), uintptr(dev))); r != cudaSuccess {
			return nil, drv.err("cuDeviceTotalMem_v2", r)
		}
		out = append(out, in)
	}
	return out, nil
}

// String is a one-line description, like Device.Describe.
func (in Info) String() string {
	return fmt.Sprintf("CUDA device %d: %s, compute capability %d.%d, %d SMs, %.1f GiB", in.Ordinal, in.Name, in.CCMajor, in.CCMinor, in.SMs, float64(in.MemoryBytes)/(1<<30))
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
