package qd

import (
	"errors"
	"fmt"
	"slices"

	"github.com/quadrants-go/qd/internal/backend"
)

// DeviceInfo describes one device a backend offers, or, when Err is set,
// why the backend offers none.
type DeviceInfo struct {
	Arch    Arch
	Ordinal int    // the device's number within its backend
	Name    string // "NVIDIA H200", or the CPU's model name
	// ComputeCapability is "9.0" on CUDA; empty elsewhere.
	ComputeCapability string
	// Target is what kernels are compiled for: "sm_90", "gfx90a"; empty for
	// the CPU.
	Target string
	// Cores is the number of threads the CPU backend uses (GOMAXPROCS), or
	// the number of multiprocessors of a GPU.
	Cores int
	// MemoryBytes is the device's memory (the host's RAM for the CPU); 0
	// when unknown.
	MemoryBytes uint64
	// Driver names the driver: "CUDA 12.9, kernel module 580.159.04"; for
	// the CPU, GOOS/GOARCH.
	Driver string
	// Peers are the ordinals of the other devices of the backend whose
	// memory this device reaches directly (peer access over NVLink or
	// PCIe): copies between their arrays ([Ndarray.CopyFromOn]) move
	// device to device. Copies with other devices of the backend work too,
	// staged through host memory by the driver.
	Peers []int
	// Err says why the backend is unavailable (no driver, no device, not
	// built in); the other fields except Arch are then empty.
	Err error
}

// Devices lists what each backend offers: the CPU, then every CUDA device,
// then AMD GPUs; a backend without a usable device contributes one entry
// whose Err says why. Listing opens drivers but creates no context, so it
// is cheap and changes nothing.
func Devices() []DeviceInfo {
	var out []DeviceInfo
	for _, a := range []Arch{CPU, CUDA, AMDGPU} {
		out = append(out, archDevices(a)...)
	}
	return out
}

func archDevices(a Arch) []DeviceInfo {
	b, ok := backend.Lookup(a.String())
	if !ok {
		return []DeviceInfo{{Arch: a, Err: &unavailableError{a, errors.New("not built in yet")}}}
	}
	infos, err := b.Devices()
	if err != nil {
		return []DeviceInfo{{Arch: a, Err: &unavailableError{a, err}}}
	}
	out := make([]DeviceInfo, len(infos))
	for i, in := range infos {
		out[i] = infoOf(a, in)
	}
	return out
}

// infoOf is the DeviceInfo of a backend's description of a device of a.
func infoOf(a Arch, in backend.DeviceInfo) DeviceInfo {
	return DeviceInfo{
		Arch: a, Ordinal: in.Ordinal, Name: in.Name, ComputeCapability: in.ComputeCapability, Target: in.Target,
		Cores: in.Cores, MemoryBytes: in.MemoryBytes, Driver: in.Driver, Peers: slices.Clone(in.Peers),
	}
}

// String describes the device on one line, as messages and `qd bench`
// name it: "CUDA device 1: NVIDIA H200, compute capability 9.0, 132 SMs,
// 139.8 GiB, driver CUDA 13.0, kernel module 580.159.04", "AMD GPU 0: AMD
// Instinct MI300X (gfx942), 304 CUs, 192.0 GiB, HIP 6.3.42131", "CPU
// (linux/amd64, 16 threads, AMD EPYC 7B13, 62.8 GiB)"; for an unavailable
// backend, why.
func (d DeviceInfo) String() string {
	gib := float64(d.MemoryBytes) / (1 << 30)
	switch {
	case d.Err != nil:
		return fmt.Sprintf("%s: unavailable: %v", d.Arch, d.Err)
	case d.Arch == CUDA:
		return fmt.Sprintf("CUDA device %d: %s, compute capability %s, %d SMs, %.1f GiB, driver %s",
			d.Ordinal, d.Name, d.ComputeCapability, d.Cores, gib, d.Driver)
	case d.Arch == AMDGPU:
		return fmt.Sprintf("AMD GPU %d: %s (%s), %d CUs, %.1f GiB, %s", d.Ordinal, d.Name, d.Target, d.Cores, gib, d.Driver)
	}
	s := fmt.Sprintf("CPU (%s, %d threads, %s", d.Driver, d.Cores, d.Name)
	if d.MemoryBytes > 0 {
		s += fmt.Sprintf(", %.1f GiB", gib)
	}
	return s + ")"
}

// Arch is a backend architecture.
type Arch int

const (
	// Auto picks CUDA when a device is present, else an AMD GPU, else the
	// CPU.
	Auto Arch = iota
	// CPU runs kernels on the host's cores; always available.
	CPU
	// CUDA runs kernels on an NVIDIA GPU through the CUDA driver.
	CUDA
	// AMDGPU runs kernels on an AMD GPU through HIP (C source compiled by
	// hiprtc). Its code is compiled and checked in CI for gfx90a, gfx942 and
	// gfx1100, but it has never run on an AMD GPU (docs/amd.md). Without an
	// AMD GPU, Init(WithArch(AMDGPU)) returns an error wrapping
	// ErrUnsupported that says none was found.
	AMDGPU
)

func (a Arch) String() string {
	switch a {
	case Auto:
		return "auto"
	case CPU:
		return "cpu"
	case CUDA:
		return "cuda"
	case AMDGPU:
		return "amdgpu"
	}
	return fmt.Sprintf("Arch(%d)", int(a))
}
