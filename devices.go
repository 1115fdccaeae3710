package qd

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/quadrants-go/qd/internal/backend/cuda"
)

// DeviceInfo describes one device a backend offers, or, when Err is set,
// why the backend offers none.
type DeviceInfo struct {
	Arch    Arch
	Ordinal int    // the device's number within its backend
	Name    string // "NVIDIA H200", or the CPU's model name
	// ComputeCapability is "9.0" on CUDA; empty elsewhere.
	ComputeCapability string
	// Cores is the number of threads the CPU backend uses (GOMAXPROCS), or
	// the number of multiprocessors of a GPU.
	Cores int
	// MemoryBytes is the device's memory (the host's RAM for the CPU); 0
	// when unknown.
	MemoryBytes uint64
	// Driver names the driver: "CUDA 12.9, kernel module 580.159.04"; for
	// the CPU, GOOS/GOARCH.
	Driver string
	// Err says why the backend is unavailable (no driver, no device, not
	// built in); the other fields except Arch are then empty.
	Err error
}

// Devices lists what each backend offers: the CPU always, then every CUDA
// device, then AMD GPUs; a backend without a usable device contributes one
// entry whose Err says why. Listing opens drivers but creates no context,
// so it is cheap and changes nothing.
func Devices() []DeviceInfo {
	out := []DeviceInfo{cpuInfo()}
	for _, a := range []Arch{CUDA, AMDGPU} {
		out = append(out, gpuDevices(a)...)
	}
	return out
}

func gpuDevices(a Arch) []DeviceInfo {
	if a == CUDA {
		infos, err := cuda.Devices()
		if err != nil {
			return []DeviceInfo{{Arch: a, Err: fmt.Errorf("qd: cuda backend unavailable: %w", err)}}
		}
		out := make([]DeviceInfo, len(infos))
		for i, in := range infos {
			drv := "CUDA " + in.CUDAVersion
			if in.KernelDriver != "" {
				drv += ", kernel module " + in.KernelDriver
			}
			out[i] = DeviceInfo{
				Arch: a, Ordinal: in.Ordinal, Name: in.Name,
				ComputeCapability: fmt.Sprintf("%d.%d", in.CCMajor, in.CCMinor),
				Cores:             in.SMs, MemoryBytes: in.MemoryBytes, Driver: drv,
			}
		}
		return out
	}
	open := gpuOpeners[a]
	if open == nil {
		return []DeviceInfo{{Arch: a, Err: fmt.Errorf("qd: the %s backend is not built in yet: %w", a, ErrUnsupported)}}
	}
	dev, err := open()
	if err != nil {
		return []DeviceInfo{{Arch: a, Err: fmt.Errorf("qd: %s backend unavailable: %w", a, err)}}
	}
	defer dev.Close()
	return []DeviceInfo{{Arch: a, Name: dev.Describe()}}
}

func cpuInfo() DeviceInfo {
	in := DeviceInfo{
		Arch:   CPU,
		Name:   runtime.GOARCH + " CPU",
		Cores:  runtime.GOMAXPROCS(0),
		Driver: runtime.GOOS + "/" + runtime.GOARCH,
	}
	if runtime.GOOS != "linux" {
		return in
	}
	// Best effort: the model name and the RAM, from /proc.
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if v := procField(string(b), "model name"); v != "" {
			in.Name = v
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		kb, err := strconv.ParseUint(strings.TrimSuffix(procField(string(b), "MemTotal"), " kB"), 10, 64)
		if err == nil {
			in.MemoryBytes = kb << 10
		}
	}
	return in
}

// procField returns the value of the first "key: value" line of a /proc
// file.
func procField(s, key string) string {
	for line := range strings.Lines(s) {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
