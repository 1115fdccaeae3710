package amdtools

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/ptxas"
)

// RequireEnv is the variable that makes the AMD checks mandatory: with
// QD_REQUIRE_AMD_TOOLS=1 (set by .ci/run) a missing tool fails the tests
// that need it instead of skipping them.
const RequireEnv = "QD_REQUIRE_AMD_TOOLS"

// Required reports whether the AMD checks must run.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Unavailable skips t because the tool named what is missing (why), or
// fails it under QD_REQUIRE_AMD_TOOLS=1.
func Unavailable(t testing.TB, what string, why error) {
	t.Helper()
	if Required() {
		t.Fatalf("%s=1 but %s is unavailable: %v", RequireEnv, what, why)
	}
	t.Skipf("%s unavailable, NOT checked: %v", what, why)
}

// Targets are the AMD processors CI compiles every kernel for: CDNA2
// (MI200), CDNA3 (MI300) and RDNA3, covering both wave sizes.
var Targets = []string{"gfx90a", "gfx942", "gfx1100"}

// machs are the EF_AMDGPU_MACH values (the low byte of e_flags) of the
// processors qd checks, from LLVM's ELF.h.
var machs = map[string]uint32{
	"gfx906": 0x2f, "gfx908": 0x30, "gfx90a": 0x3f, "gfx940": 0x40, "gfx942": 0x4c,
	"gfx1030": 0x36, "gfx1100": 0x41, "gfx1101": 0x46,
}

// minClang is the oldest clang that knows every target in Targets (gfx942
// arrived in clang 17).
const minClang = 17

// Clang is a clang that compiles for AMDGPU (and CUDA) found on this
// machine.
type Clang struct {
	Path    string
	Version int // major version
}

// FindClang returns the clang named by $QD_AMD_CLANG, else clang-19 or
// clang on PATH (if at least clang 17), else the one
// .ci/install-amd-tools.sh unpacked under $QD_AMD_TOOLS or
// ~/.cache/qd-amd-tools. The error says why there is none and how to
// install it.
var FindClang = sync.OnceValues(func() (Clang, error) {
	var tried []string
	try := func(p string) (Clang, bool) {
		if p == "" {
			return Clang{}, false
		}
		out, err := exec.Command(p, "--version").CombinedOutput()
		m := regexp.MustCompile(`clang version (\d+)\.`).FindSubmatch(out)
		if err != nil || m == nil {
			tried = append(tried, fmt.Sprintf("%s: %v", p, err))
			return Clang{}, false
		}
		v, _ := strconv.Atoi(string(m[1]))
		if v < minClang {
			tried = append(tried, fmt.Sprintf("%s is clang %d, older than %d", p, v, minClang))
			return Clang{}, false
		}
		return Clang{Path: p, Version: v}, true
	}
	candidates := []string{os.Getenv("QD_AMD_CLANG")}
	for _, name := range []string{"clang-19", "clang"} {
		if p, err := exec.LookPath(name); err == nil {
			candidates = append(candidates, p)
		}
	}
	for _, dir := range toolDirs() {
		candidates = append(candidates, filepath.Join(dir, "usr", "lib", "llvm-19", "bin", "clang"))
	}
	for _, p := range candidates {
		if _, err := os.Stat(p); p == "" || err != nil {
			continue
		}
		if c, ok := try(p); ok {
			return c, nil
		}
	}
	return Clang{}, fmt.Errorf("no clang %d or newer found ($QD_AMD_CLANG, PATH, $QD_AMD_TOOLS, ~/.cache/qd-amd-tools; tried: %s): "+
		"run `eval \"$(bash .ci/install-amd-tools.sh | tail -n 1)\"`", minClang, strings.Join(tried, "; "))
})

// toolDirs are the folders install-amd-tools.sh may have unpacked into.
func toolDirs() []string {
	var dirs []string
	if d := os.Getenv("QD_AMD_TOOLS"); d != "" {
		dirs = append(dirs, d)
	}
	if h, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(h, ".cache", "qd-amd-tools"))
	}
	return dirs
}

// run runs clang with args, its output and the numbered source in the
// error of a failure. Warnings are not errors: the source is generated.
func (c Clang) run(src string, args ...string) error {
	out, err := exec.Command(c.Path, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v\n%s\n--- source ---\n%s", filepath.Base(c.Path), strings.Join(args, " "), err, clip(out), ptxas.Numbered(src))
	}
	return nil
}

// CompileAMD compiles the HIP source src for target (gfx90a, ...) with the
// flags given (csrc.ClangOptions), in dir, and returns the code object.
func (c Clang) CompileAMD(dir, name, target, src string, flags []string) ([]byte, error) {
	in := filepath.Join(dir, name+"_"+target+".hip")
	out := filepath.Join(dir, name+"_"+target+".co")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		return nil, err
	}
	args := append([]string{"-x", "hip", "--offload-arch=" + target, "--cuda-device-only", "--no-gpu-bundle-output",
		"-nogpuinc", "-nogpulib"}, flags...)
	if err := c.run(src, append(args, "-o", out, in)...); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}

// CompileCUDA compiles the CUDA source src to PTX for sm (90 for sm_90)
// with the flags given, in dir, and returns the PTX text.
func (c Clang) CompileCUDA(dir, name string, sm int, src string, flags []string) (string, error) {
	in := filepath.Join(dir, fmt.Sprintf("%s_sm%d.cu", name, sm))
	out := filepath.Join(dir, fmt.Sprintf("%s_sm%d.ptx", name, sm))
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		return "", err
	}
	args := append([]string{"-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib",
		fmt.Sprintf("--cuda-gpu-arch=sm_%d", sm), "-S"}, flags...)
	if err := c.run(src, append(args, "-o", out, in)...); err != nil {
		return "", err
	}
	b, err := os.ReadFile(out)
	return string(b), err
}

// CheckCodeObject checks that co is an AMDGPU code object for target
// holding every kernel of entries: an ELF of machine EM_AMDGPU (224) and
// OS ABI AMDGPU_HSA (64), the target's processor in the low byte of
// e_flags, and per entry a function symbol and its kernel descriptor
// (entry.kd, an object).
func CheckCodeObject(co []byte, target string, entries []string) error {
	f, err := elf.NewFile(bytes.NewReader(co))
	if err != nil {
		return fmt.Errorf("code object for %s is not an ELF file: %v", target, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AMDGPU {
		return fmt.Errorf("code object for %s: machine %v, want EM_AMDGPU", target, f.Machine)
	}
	if f.OSABI != 64 {
		return fmt.Errorf("code object for %s: OS ABI %d, want 64 (AMDGPU_HSA)", target, f.OSABI)
	}
	proc, _, _ := strings.Cut(target, ":")
	want, ok := machs[proc]
	if !ok {
		return fmt.Errorf("no e_flags value known for %s", proc)
	}
	flags, err := eflags(co)
	if err != nil {
		return err
	}
	if got := flags & 0xff; got != want {
		return fmt.Errorf("code object for %s: e_flags machine %#x, want %#x", target, got, want)
	}
	syms, err := f.Symbols()
	if err != nil {
		return fmt.Errorf("code object for %s: symbols: %v", target, err)
	}
	kinds := map[string]elf.SymType{}
	for _, s := range syms {
		kinds[s.Name] = elf.ST_TYPE(s.Info)
	}
	var missing []string
	for _, e := range entries {
		if kinds[e] != elf.STT_FUNC {
			missing = append(missing, e)
		}
		if kinds[e+".kd"] != elf.STT_OBJECT {
			missing = append(missing, e+".kd")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("code object for %s lacks %d symbols: %s", target, len(missing), strings.Join(missing, ", "))
	}
	return nil
}

// eflags reads e_flags from a 64-bit little-endian ELF header (debug/elf
// does not expose it).
func eflags(b []byte) (uint32, error) {
	if len(b) < 0x34 || b[elf.EI_CLASS] != byte(elf.ELFCLASS64) || b[elf.EI_DATA] != byte(elf.ELFDATA2LSB) {
		return 0, fmt.Errorf("not a 64-bit little-endian ELF file")
	}
	return uint32(b[0x30]) | uint32(b[0x31])<<8 | uint32(b[0x32])<<16 | uint32(b[0x33])<<24, nil
}

// clip keeps the start of a long compiler output.
func clip(b []byte) string {
	const max = 16 << 10
	if len(b) > max {
		return string(b[:max]) + "\n[... output clipped]"
	}
	return string(b)
}
