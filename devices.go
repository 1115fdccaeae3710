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
	// Details are further lines about the device, where its backend has
	// them (Vulkan: queue families, features, limits); `qd devices` prints
	// them.
	Details []string
	// Software: the device runs on the host's CPU (Vulkan's lavapipe).
	// Auto never picks one; the CPU backend is faster there.
	Software bool
	// Err says why the backend is unavailable (no driver, no device, not
	// built in); the other fields except Arch are then empty.
	Err error
}

// Devices lists what each backend offers: the CPU, then every CUDA device,
// then AMD GPUs, then Vulkan devices; a backend without a usable device contributes one entry
// whose Err says why. Listing opens drivers but creates no context, so it
// is cheap and changes nothing.
func Devices() []DeviceInfo {
	var out []DeviceInfo
	for _, a := range []Arch{CPU, CUDA, AMDGPU, Vulkan} {
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
		Details: slices.Clone(in.Details), Software: in.Software,
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
	case d.Arch == Vulkan:
		return fmt.Sprintf("Vulkan device %d: %s (%s), %.1f GiB, %s", d.Ordinal, d.Name, d.Target, gib, d.Driver)
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
	// Auto picks CUDA when a device is present, else an AMD GPU, else a
	// Vulkan GPU, else the CPU.
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
	// Vulkan runs kernels on any GPU with a Vulkan 1.2 driver (SPIR-V
	// generated in Go, pipelines through the Vulkan loader): verified on
	// NVIDIA's driver and on Mesa's lavapipe, a Vulkan device on the CPU
	// (docs/vulkan.md). Auto takes a Vulkan GPU after CUDA and AMDGPU but
	// never a Vulkan device that runs on the CPU, such as lavapipe, which
	// WithArch(Vulkan) selects explicitly.
	Vulkan
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
	case Vulkan:
		return "vulkan"
	}
	return fmt.Sprintf("Arch(%d)", int(a))
}
