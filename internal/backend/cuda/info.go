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
	drv := d.driverName()
	out := make([]backend.DeviceInfo, 0, d.devices)
	for ord := range d.devices {
		in, err := d.info(ord, drv)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// driverName is the driver's version and, where /proc tells it, the kernel
// module's: "CUDA 13.0, kernel module 580.159.04".
func (d *driver) driverName() string {
	drv := "CUDA " + versionString(d.version)
	if k := kernelDriverVersion(); k != "" {
		drv += ", kernel module " + k
	}
	return drv
}

// cuDevice returns the CUdevice of ordinal ord.
func (d *driver) cuDevice(ord int) (int32, error) {
	var dev int32
	if r := gpu.Call(&d.own.deviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(ord)); r != success {
		return 0, d.error(&d.own.deviceGet, r)
	}
	return dev, nil
}

// info describes device ord, with the driver named drv, from queries that
// need no context.
func (d *driver) info(ord int, drv string) (backend.DeviceInfo, error) {
	in := backend.DeviceInfo{Ordinal: ord, Driver: drv}
	dev, err := d.cuDevice(ord)
	if err != nil {
		return in, err
	}
	var major, minor int
	for _, q := range []struct {
		attr int
		dst  *int
	}{{attrComputeCapMajor, &major}, {attrComputeCapMinor, &minor}, {attrMultiprocessorCount, &in.Cores}} {
		var v int32
		if r := gpu.Call(&d.own.deviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(q.attr), uintptr(dev)); r != success {
			return in, d.error(&d.own.deviceGetAttribute, r)
		}
		*q.dst = int(v)
	}
	in.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
	in.Target = fmt.Sprintf("sm_%d%d", major, minor)
	name := make([]byte, 256)
	if r := gpu.Call(&d.own.deviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)-1), uintptr(dev)); r != success {
		return in, d.error(&d.own.deviceGetName, r)
	}
	in.Name = gpu.GoString(&name[0])
	if r := gpu.Call(&d.own.deviceTotalMem, uintptr(unsafe.Pointer(&in.MemoryBytes)), uintptr(dev)); r != success {
		return in, d.error(&d.own.deviceTotalMem, r)
	}
	for other := range d.devices {
		if other == ord {
			continue
		}
		peer, err := d.cuDevice(other)
		if err != nil {
			return in, err
		}
		var can int32
		if r := gpu.Call(&d.calls.CanAccessPeer, uintptr(unsafe.Pointer(&can)), uintptr(dev), uintptr(peer)); r != success {
			return in, d.error(&d.calls.CanAccessPeer, r)
		}
		if can != 0 {
			in.Peers = append(in.Peers, other)
		}
	}
	return in, nil
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
