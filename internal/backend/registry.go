package backend

import (
	"cmp"
	"slices"
	"sync"
)

// Backend is a backend package as the root package sees it: registered by
// the package's init, looked up by arch.
type Backend struct {
	// Arch names it: "cpu", "cuda", "amdgpu".
	Arch string
	// Preference orders the backends Auto tries: lower first. The CPU,
	// which always works, comes last.
	Preference int
	// Open opens device ordinal. An error wrapping ErrNoDevice-like causes
	// says why the backend is unavailable.
	Open func(ordinal int) (Device, error)
	// OpenAuto, when set, is what qd.Auto opens instead of Open: a backend
	// may refuse there a device it offers only when asked for by name
	// (Vulkan's devices that run on the CPU, which the CPU backend beats).
	OpenAuto func(ordinal int) (Device, error)
	// Devices lists the backend's devices without opening them, or says
	// why it offers none.
	Devices func() ([]DeviceInfo, error)
}

// DeviceInfo describes one device of a backend.
type DeviceInfo struct {
	Ordinal int
	Name    string // "NVIDIA H200", the CPU's model name
	// Target is what code is generated for: "sm_90", "gfx90a"; empty for
	// the CPU.
	Target string
	// ComputeCapability is "9.0" on CUDA; empty elsewhere.
	ComputeCapability string
	// Cores is the number of multiprocessors (compute units) of a GPU, the
	// threads the CPU backend uses.
	Cores       int
	MemoryBytes uint64 // 0 when unknown
	Driver      string // "CUDA 13.0, kernel module 580.159.04"; GOOS/GOARCH
	// Details are further lines about the device (Vulkan: queue families,
	// features, limits), for `qd devices`.
	Details []string
	// Software: the device runs on the host's CPU (lavapipe); qd.Auto
	// skips it.
	Software bool
	// Peers are the ordinals of the backend's other devices whose memory
	// this one can access directly (peer access), in increasing order.
	Peers []int
}

var (
	regMu    sync.Mutex
	registry []Backend
)

// Register adds a backend. It is called from the backend package's init;
// registering one arch twice replaces the first.
func Register(b Backend) {
	regMu.Lock()
	defer regMu.Unlock()
	registry = slices.DeleteFunc(registry, func(o Backend) bool { return o.Arch == b.Arch })
	registry = append(registry, b)
	slices.SortStableFunc(registry, func(x, y Backend) int { return cmp.Compare(x.Preference, y.Preference) })
}

// Registered returns the registered backends, most preferred first.
func Registered() []Backend {
	regMu.Lock()
	defer regMu.Unlock()
	return slices.Clone(registry)
}

// Lookup returns the backend registered for arch.
func Lookup(arch string) (Backend, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	for _, b := range registry {
		if b.Arch == arch {
			return b, true
		}
	}
	return Backend{}, false
}
