package nvrtc

import (
	"errors"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/gpu/gputest"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/ptxas"
)

func TestCodegenSwitch(t *testing.T) {
	for v, want := range map[string]string{"": "ptx", "ptx": "ptx", "csrc": "csrc"} {
		t.Setenv(CodegenEnv, v)
		if got, err := Codegen(); got != want || err != nil {
			t.Errorf("%s=%q: %q, %v", CodegenEnv, v, got, err)
		}
	}
	t.Setenv(CodegenEnv, "llvm")
	if _, err := Codegen(); err == nil || !strings.Contains(err.Error(), "want ptx or csrc") {
		t.Errorf("an unknown generator: %v", err)
	}
}

func TestNVRTCArch(t *testing.T) {
	n := &nvrtc{lib: &gpu.Library{Name: "libnvrtc-test"}, supported: []int{75, 80, 86, 89, 90}}
	for sm, want := range map[int]int{90: 90, 86: 86, 87: 86, 100: 90, 75: 75} {
		if got, err := n.arch(sm); got != want || err != nil {
			t.Errorf("arch(%d) = %d, %v; want %d", sm, got, err, want)
		}
	}
	if _, err := n.arch(70); err == nil {
		t.Error("sm_70 accepted by an NVRTC that starts at sm_75")
	}
	if got, _ := (&nvrtc{}).arch(120); got != 120 {
		t.Errorf("without a list of archs: %d", got)
	}
}

// nvrtcKernels use what the C source does beyond plain C: the
// transcendental functions (devmath's C), float and integer atomics,
// Go's division, shifts and conversions, a serial task with temporaries.
func nvrtcKernels() []*ir.Kernel {
	b := ir.NewBuilder("nvrtc_math")
	x := b.Array("x", ir.F64, 1)
	f := b.Array("f", ir.F32, 1)
	n := b.Array("n", ir.I32, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		acc := b.Decl("acc", ir.Ld(x, ir.Ref(i)))
		for _, fn := range ir.Intrinsics() {
			args := []ir.Expr{ir.Ref(acc)}
			if fn.Arity() == 2 {
				args = append(args, ir.F64c(0.5))
			}
			b.Assign(acc, ir.Fn(fn, args...))
		}
		b.Store(x, ir.Ref(acc), ir.Ref(i))
		b.Do(ir.AtomicE(ir.AtomicAdd, f, ir.Conv(ir.F32, ir.Ref(acc)), ir.I64c(0)))
		b.Do(ir.AtomicE(ir.AtomicMax, f, ir.F32c(1), ir.I64c(1)))
		q := ir.Op(ir.Div, ir.Conv(ir.I32, ir.Ref(acc)), ir.Ld(n, ir.Ref(i)))
		b.Store(n, ir.Op(ir.Shl, q, ir.I64c(40)), ir.Ref(i))
	})
	b2 := ir.NewBuilder("nvrtc_serial")
	y := b2.Array("y", ir.I64, 1)
	s := b2.Decl("s", ir.Ld(y, ir.I64c(0)))
	b2.Parallel(ir.LenOf(y, 0), func(i *ir.Var) { b2.Store(y, ir.Op(ir.Add, ir.Ref(s), ir.Ref(i)), ir.Ref(i)) })
	return []*ir.Kernel{b.Kernel(), b2.Kernel(), longChain(300)}
}

// longChain is the if/else chain of a switch of n cases on x[i], longer
// than compilers nest braces (256): the C writer keeps it flat.
func longChain(n int) *ir.Kernel {
	b := ir.NewBuilder("nvrtc_chain")
	x := b.Array("x", ir.I32, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		v := b.Decl("v", ir.Ld(x, ir.Ref(i)))
		var arm func(c int)
		arm = func(c int) {
			if c == n {
				b.Store(x, ir.I32c(-1), ir.Ref(i))
				return
			}
			b.If(ir.Op(ir.Eq, ir.Ref(v), ir.I32c(int32(c))), func() { b.Store(x, ir.I32c(int32(7*c+1)), ir.Ref(i)) }, func() { arm(c + 1) })
		}
		arm(0)
	})
	return b.Kernel()
}

// Where an NVRTC library exists (a CUDA toolkit, or the GPU machine), the
// C source with the CUDA prelude compiles to PTX holding every entry, and
// ptxas, if present, assembles it. The same text is checked offline by
// clang and ptxas in package csrc (TestClangCUDA).
func TestNVRTCCompilesCsrc(t *testing.T) {
	n, err := openNVRTC()
	if err != nil {
		if gen, _ := Codegen(); gen == "csrc" && gputest.Required() {
			t.Fatalf("QD_GPU_RUN=1 and %s=csrc, but NVRTC is unavailable: %v", CodegenEnv, err)
		}
		t.Skipf("no NVRTC library: the CUDA flavour of the C source is NOT compiled by NVRTC here: %v", err)
	}
	tool, ptxasErr := ptxas.Find()
	for _, k := range nvrtcKernels() {
		plan, err := lower.Lower(k)
		if err != nil {
			t.Fatal(err)
		}
		for _, sm := range []int{80, 90} {
			code, layout, err := CompilePTX(plan, sm, false)
			if err != nil {
				t.Fatal(err)
			}
			text := strings.TrimRight(string(code), "\x00")
			for _, task := range layout.Tasks {
				if !strings.Contains(text, ".entry "+task.Entry+"(") {
					t.Errorf("%s sm_%d: no entry %s in NVRTC's PTX", k.Name, sm, task.Entry)
				}
			}
			if ptxasErr == nil && sm >= tool.Archs[0] {
				if err := tool.Assemble(t.TempDir(), k.Name, sm, text); err != nil {
					t.Error(err)
				}
			}
		}
	}
	t.Logf("NVRTC %s (%s), compute capabilities %v", n.versionStr, n.lib.Name, n.supported)
}

// A source NVRTC rejects gives an error with NVRTC's log and the source.
func TestNVRTCErrorCarriesLog(t *testing.T) {
	n, err := openNVRTC()
	if err != nil {
		t.Skipf("no NVRTC library: %v", err)
	}
	_, _, err = n.Run("extern \"C\" __global__ void k() { undeclared_name = 1; }\n", "bad.cu", []string{"--gpu-architecture=compute_80"})
	var de *gpu.DriverError
	if !errors.As(err, &de) || !errors.Is(err, gpu.ErrInvalidCode) || !strings.Contains(de.Log, "undeclared_name") {
		t.Fatalf("error %v: want nvrtcCompileProgram's DriverError with the log", err)
	}
}
