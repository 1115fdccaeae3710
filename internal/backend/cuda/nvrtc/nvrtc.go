package nvrtc

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/rtc"
	"github.com/quadrants-go/qd/internal/codegen/csrc"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// CodegenEnv selects the CUDA backend's code generator: "ptx" (the default:
// package codegen/ptx, JIT-compiled by the driver) or "csrc": the C source
// of package codegen/csrc with its CUDA prelude, compiled to PTX by NVRTC
// and then loaded like the generator's own PTX. csrc is how the C source
// that the AMD backend compiles with hiprtc is run, semantics and all, on
// NVIDIA GPUs; it exists for tests and benchmarks.
const CodegenEnv = "QD_CUDA_CODEGEN"

// nvrtcEnv names the NVRTC library to use instead of searching for one.
const nvrtcEnv = "QD_NVRTC"

// Codegen reads CodegenEnv: "ptx" or "csrc".
func Codegen() (string, error) {
	switch v := os.Getenv(CodegenEnv); v {
	case "", "ptx":
		return "ptx", nil
	case "csrc":
		return "csrc", nil
	default:
		return "", fmt.Errorf("cuda: %s=%q: want ptx or csrc", CodegenEnv, v)
	}
}

// nvrtcNames are the NVRTC libraries tried, newest first: the unversioned
// development symlink, then the sonames of CUDA 13, 12 and 11.2+ (NVRTC's
// soname carries the major version only since 11.2), by name and in
// /usr/local/cuda/lib64; the DLLs on Windows. QD_NVRTC overrides them.
func nvrtcNames() []string {
	if p := os.Getenv(nvrtcEnv); p != "" {
		return []string{p}
	}
	if runtime.GOOS == "windows" {
		return []string{"nvrtc64_130_0.dll", "nvrtc64_120_0.dll", "nvrtc64_112_0.dll"}
	}
	names := []string{"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"}
	// A toolkit in its default place is often not on the loader's path.
	for _, n := range names[:3] {
		names = append(names, "/usr/local/cuda/lib64/"+n)
	}
	return names
}

// nvrtc is the loaded NVRTC.
type nvrtc struct {
	rtc.Compiler
	lib        *gpu.Library
	numArchs   gpu.Fn // nvrtcGetNumSupportedArchs(int*), optional (11.2)
	archs      gpu.Fn // nvrtcGetSupportedArchs(int*), optional
	supported  []int  // compute capabilities ×10 it compiles for; nil: unknown
	versionStr string
}

var openNVRTC = sync.OnceValues(func() (*nvrtc, error) {
	lib, err := gpu.OpenLibrary(nvrtcNames()...)
	if err != nil {
		return nil, fmt.Errorf("cuda: NVRTC (for %s=csrc; %s names a library): %w", CodegenEnv, nvrtcEnv, err)
	}
	n := &nvrtc{lib: lib, Compiler: rtc.Compiler{Arch: "cuda"}}
	bs := append(n.Calls.Bindings("nvrtc", "GetPTXSize", "GetPTX"),
		gpu.Binding{Fn: &n.numArchs, Names: []string{"nvrtcGetNumSupportedArchs"}, Optional: true},
		gpu.Binding{Fn: &n.archs, Names: []string{"nvrtcGetSupportedArchs"}, Optional: true})
	if err := gpu.Bind(lib, bs); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	n.versionStr = n.Version()
	if n.numArchs.Bound() && n.archs.Bound() {
		var count int32
		if r, _, _ := purego.SyscallN(n.numArchs.Addr, uintptr(unsafe.Pointer(&count))); int32(r) == 0 && count > 0 {
			list := make([]int32, count)
			if r, _, _ := purego.SyscallN(n.archs.Addr, uintptr(unsafe.Pointer(&list[0]))); int32(r) == 0 {
				for _, a := range list {
					n.supported = append(n.supported, int(a))
				}
			}
		}
	}
	return n, nil
})

// arch is the compute_XY NVRTC compiles for on a device of compute
// capability sm: the device's, or the newest older one NVRTC knows (the
// driver JIT-compiles older PTX for newer GPUs).
func (n *nvrtc) arch(sm int) (int, error) {
	if len(n.supported) == 0 || slices.Contains(n.supported, sm) {
		return sm, nil
	}
	best := 0
	for _, a := range n.supported {
		if a <= sm && a > best {
			best = a
		}
	}
	if best == 0 {
		return 0, fmt.Errorf("cuda: NVRTC %s (%s) compiles for compute capabilities %v, none at or below %d.%d",
			n.versionStr, n.lib.Name, n.supported, sm/10, sm%10)
	}
	return best, nil
}

// CompilePTX writes the C source of plan with the CUDA prelude and compiles it
// with NVRTC for compute capability sm (×10). The result is NUL-terminated
// PTX, as Load takes it. A failure carries NVRTC's log and the numbered
// source, so that a run on a GPU machine explains itself.
func CompilePTX(plan *lower.Plan, sm int, debug bool) ([]byte, *kabi.Module, error) {
	n, err := openNVRTC()
	if err != nil {
		return nil, nil, err
	}
	arch, err := n.arch(sm)
	if err != nil {
		return nil, nil, err
	}
	t, err := csrc.TargetFor(fmt.Sprintf("sm_%d", arch))
	if err != nil {
		return nil, nil, err
	}
	src, layout, err := csrc.Generate(plan, t, csrc.Options{Debug: debug})
	if err != nil {
		return nil, nil, err
	}
	opts := append([]string{fmt.Sprintf("--gpu-architecture=compute_%d", arch)}, csrc.CompilerOptions(csrc.CUDA)...)
	ptx, _, err := n.Run(src, layout.Name+".cu", opts)
	if err != nil {
		return nil, nil, fmt.Errorf("cuda: NVRTC %s (%s) on the C source of kernel %s, options %s: %w\n--- source ---\n%s",
			n.versionStr, n.lib.Name, plan.Kernel.Name, strings.Join(opts, " "), err, csrc.Numbered(src))
	}
	if i := len(ptx) - 1; i < 0 || ptx[i] != 0 {
		ptx = append(ptx, 0)
	}
	return ptx, layout, nil
}

// Build is the CUDA backend's Build for CodegenEnv=csrc, for a device of
// compute capability sm (×10) under a driver of version driverVersion
// (cuDriverGetVersion). NVRTC writes PTX of its own release's ISA, which a
// driver of an older release refuses: that is said here, before the JIT's
// less telling CUDA_ERROR_UNSUPPORTED_PTX_VERSION.
func Build(plan *lower.Plan, sm, driverVersion int, opts backend.CompileOptions) (*gpu.Image, error) {
	n, err := openNVRTC()
	if err != nil {
		return nil, err
	}
	var major, minor int
	if _, err := fmt.Sscanf(n.versionStr, "%d.%d", &major, &minor); err == nil && 1000*major+10*minor > driverVersion {
		return nil, fmt.Errorf("cuda: NVRTC %s (%s) is newer than the driver (CUDA %d.%d), which would refuse its PTX; set %s to an NVRTC no newer than the driver",
			n.versionStr, n.lib.Name, driverVersion/1000, driverVersion%1000/10, nvrtcEnv)
	}
	ptx, layout, err := CompilePTX(plan, sm, opts.Debug)
	if err != nil {
		return nil, err
	}
	return &gpu.Image{Layout: layout, Code: ptx}, nil
}
