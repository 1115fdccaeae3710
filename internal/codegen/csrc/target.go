package csrc

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Vendor is the compiler family a source is written for: the prelude
// differs, the kernels do not.
type Vendor uint8

const (
	// AMD: HIP source for clang's AMDGPU target (hiprtc, or clang -x hip
	// -nogpuinc -nogpulib offline).
	AMD Vendor = iota + 1
	// CUDA: CUDA source for NVRTC (or clang -x cuda -nocudainc -nocudalib).
	CUDA
)

func (v Vendor) String() string {
	switch v {
	case AMD:
		return "amd"
	case CUDA:
		return "cuda"
	}
	return "vendor?"
}

// Target is what a source is written for.
type Target struct {
	Vendor Vendor
	// Arch is the processor: "gfx90a", "gfx942", "gfx1100", or "sm_90". For
	// AMD it may carry target features ("gfx90a:sramecc+:xnack-"); the
	// source depends only on the processor.
	Arch string
	// WaveSize is the number of threads that run in lockstep: 64 on the
	// CDNA parts (gfx9), 32 on RDNA (gfx10 and later, in HIP's default
	// wave32 mode) and on NVIDIA. The AMD prelude checks it against the
	// compiler's own __AMDGCN_WAVEFRONT_SIZE at compile time.
	WaveSize int
}

// TargetFor returns the target of an AMD processor name ("gfx90a",
// "gfx942", "gfx1100", with or without ":feature±" suffixes, as HIP's
// gcnArchName gives it) or of an NVIDIA one ("sm_90").
func TargetFor(arch string) (Target, error) {
	proc, features, hasFeatures := strings.Cut(arch, ":")
	switch {
	case strings.HasPrefix(proc, "sm_"):
		digits := strings.TrimSuffix(strings.TrimPrefix(proc, "sm_"), "a")
		if n, err := strconv.Atoi(digits); err != nil || n < 60 || n > 999 || strconv.Itoa(n) != digits || hasFeatures {
			return Target{}, fmt.Errorf("csrc: unknown NVIDIA target %q (want sm_60 or later)", arch)
		}
		return Target{Vendor: CUDA, Arch: proc, WaveSize: 32}, nil
	case strings.HasPrefix(proc, "gfx"):
		major, ok := amdMajor(proc)
		if !ok || (hasFeatures && !validFeatures(features)) {
			return Target{}, fmt.Errorf("csrc: %q is not an AMD processor name (gfx90a, gfx1100, with :feature+ or :feature- suffixes)", arch)
		}
		if major < 9 {
			return Target{}, fmt.Errorf("csrc: unsupported AMD target %q (want gfx9 or later: CDNA or RDNA)", arch)
		}
		wave := 32
		if major == 9 {
			wave = 64
		}
		return Target{Vendor: AMD, Arch: arch, WaveSize: wave}, nil
	}
	return Target{}, fmt.Errorf("csrc: unknown target %q (want gfxNNN or sm_NN)", arch)
}

// amdMajor reads an AMD processor name, "gfx" then the major version (one
// or two decimal digits), the minor and the stepping (a hexadecimal digit
// each): gfx90a is 9, gfx1100 11.
func amdMajor(proc string) (int, bool) {
	rest := strings.TrimPrefix(proc, "gfx")
	if len(rest) < 3 || len(rest) > 4 || strings.Trim(rest[len(rest)-2:], "0123456789abcdef") != "" {
		return 0, false
	}
	major, err := strconv.Atoi(rest[:len(rest)-2])
	return major, err == nil && major > 0 && rest[0] != '0'
}

// validFeatures reports whether features is a colon-separated list of
// target features, each a name then + or - ("sramecc+:xnack-").
func validFeatures(features string) bool {
	for f := range strings.SplitSeq(features, ":") {
		name, on := f[:max(len(f)-1, 0)], f[max(len(f)-1, 0):]
		if name == "" || (on != "+" && on != "-") || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			return false
		}
	}
	return true
}

// Processor is Arch without target features: "gfx90a".
func (t Target) Processor() string {
	p, _, _ := strings.Cut(t.Arch, ":")
	return p
}

func (t Target) check() error {
	if t.Vendor != AMD && t.Vendor != CUDA {
		return fmt.Errorf("csrc: target %q has no vendor", t.Arch)
	}
	if t.WaveSize != 32 && t.WaveSize != 64 {
		return fmt.Errorf("csrc: target %q has wave size %d (want 32 or 64)", t.Arch, t.WaveSize)
	}
	return nil
}

// clangOptions are the options the source's meaning depends on, for clang
// (hiprtc is clang underneath): C++17 (hexadecimal float literals), no
// contraction of a*b+c into an fma (the PTX path's .rn; results match the
// CPU bit for bit), and no type-based alias analysis (the float atomics
// work on the bits through an integer pointer). Division and sqrt are
// IEEE by default for HIP and CUDA alike.
var clangOptions = []string{"-std=c++17", "-O3", "-ffp-contract=off", "-fno-strict-aliasing"}

// nvrtcOptions are the same for NVRTC, which contracts by default (fmad).
// The other three are NVRTC's defaults, stated because results depend on
// them.
var nvrtcOptions = []string{"--std=c++17", "--fmad=false", "--prec-div=true", "--prec-sqrt=true", "--ftz=false"}

// CompilerOptions are the options to give the runtime compiler of vendor v
// (hiprtc for AMD, NVRTC for CUDA) besides the target, for the source to
// mean what the IR means.
func CompilerOptions(v Vendor) []string {
	if v == CUDA {
		return slices.Clone(nvrtcOptions)
	}
	return slices.Clone(clangOptions)
}

// ClangOptions are those options for clang compiling the source offline
// (clang -x hip or clang -x cuda; package amdtools adds the rest).
func ClangOptions() []string { return slices.Clone(clangOptions) }
