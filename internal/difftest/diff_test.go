package difftest

// Differential tests: every kernel of kernels.go and kernels_gen.go runs
// three ways on the same random inputs, and the results must agree:
//
//  1. natively: the kernel is an ordinary Go function, called with slices
//     (serially, on the test goroutine): the reference;
//  2. compiled by qd.Compile from the very same files (Source), on
//     every backend of the behaviour suite (the CPU, and CUDA when present),
//     with the array arguments passed as Go slices;
//  3. the same, with the arrays passed as Ndarrays on a stream.
//
// internal/diffcheck runs the three and compares; the examples of
// docs/kernels.md (internal/kerneldocs) are checked by the same code.
//
// Comparison (see tolerance):
//   - integers and bools: exactly, everywhere;
//   - floats on the CPU backend: bit for bit (it runs Go's own operations
//     and Go's math; NaNs compare by NaN-ness only, because the sign and
//     payload of a generated NaN differ between x86 and the GPU);
//   - floats on a GPU: bit for bit for IEEE operations (+ − × ÷, sqrt,
//     conversions, floor/ceil/trunc/round, abs, mod, min/max: the PTX code
//     generator uses correctly rounded instructions and never contracts into
//     an fma), and within a per-function ulp bound for the transcendental
//     functions (mathBounds);
//   - float atomic sums whose rounding depends on the order of the adds:
//     within the worst-case error of recursive summation, on every backend.

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/diffcheck"
	"github.com/quadrants-go/qd/internal/diffgen"
)

func TestMain(m *testing.M) { diffcheck.Archs.Main(m) }

// diffSizes are the lengths each kernel runs at: empty, one element, around
// the CPU backend's batch of 512 lanes and GPU block sizes, and lengths that
// are no multiple of either.
func diffSizes() []int {
	if testing.Short() {
		return []int{0, 1, 513, 1000}
	}
	return []int{0, 1, 2, 255, 511, 513, 1000, 2100}
}

// tolerance says how far a float element may be from the native result.
type tolerance = diffcheck.Tolerance

type diffCase struct {
	kernel string // the //qd:kernel function, compiled by name
	fn     any    // the same function, called natively
	// gen makes the arguments for length n, in parameter order.
	gen func(r *rand.Rand, n int) []any
	// tol gives the comparison of element idx of argument arg; nil: exact.
	tol func(n, arg int, idx []int) tolerance
}

// vulkanDivergent are the cases whose results differ on Vulkan as measured
// on lavapipe (Mesa 22.3.6), with what differs; on NVIDIA's driver they
// agree (QD_VULKAN_DIFF_ALL=1 runs them). nvidiaVulkanDivergent are those
// that differ on NVIDIA's Vulkan driver (580.159.04), which lavapipe gets
// right. docs/vulkan.md lists them.
var vulkanDivergent = map[string]string{
	"mathGo64": "float64 math a few ulps off: lavapipe's fma is not fused",
	"qdMath64": "float64 math a few ulps off: lavapipe's fma is not fused",
	"decomps":  "signed zeros lost",
	"structs":  "a NaN comes out as an infinity",
	"records":  "x*0 gives +0 for negative x (signed zeros lost)",
}

var nvidiaVulkanDivergent = map[string]string{
	"arithfloat64": "a float64 quotient of ±5e-324 comes out as ±0 (a subnormal result flushed)",
}

func TestDiff(t *testing.T) {
	cases := diffCases()
	src, err := Source()
	if err != nil {
		t.Fatal(err)
	}
	diffcheck.OnEachArch(t, func(t *testing.T, p *qd.Program, s *qd.Stream) {
		mod, err := qd.Compile(p, src, qd.WithFilename(FileName))
		if err != nil {
			t.Fatal(err)
		}
		defer mod.Close()
		// Every kernel of the file has a case: a kernel added without one
		// would go untested.
		have := map[string]bool{}
		for _, c := range cases {
			have[c.kernel] = true
		}
		for _, name := range mod.Kernels() {
			if !have[name] {
				t.Errorf("kernel %s has no differential case", name)
			}
		}
		for _, c := range cases {
			t.Run(c.kernel, func(t *testing.T) {
				if p.Arch() == qd.Vulkan && os.Getenv("QD_VULKAN_DIFF_ALL") != "1" {
					known := vulkanDivergent
					if strings.Contains(p.Device().Name, "NVIDIA") {
						known = nvidiaVulkanDivergent
					}
					if why, ok := known[c.kernel]; ok {
						t.Skipf("known to differ on Vulkan on %s (docs/vulkan.md; QD_VULKAN_DIFF_ALL=1 runs it): %s", p.Device().Name, why)
					}
				}
				k, err := mod.Kernel(c.kernel)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range diffSizes() {
					runDiff(t, p, s, k, c, n)
				}
			})
		}
	})
}

// runDiff runs one case at length n natively and compiled, both ways of
// passing arrays, and compares.
func runDiff(t *testing.T, p *qd.Program, s *qd.Stream, k *qd.Kernel, c diffCase, n int) {
	t.Helper()
	h := fnv.New64a()
	h.Write([]byte(c.kernel))
	args := c.gen(rand.New(rand.NewPCG(h.Sum64(), uint64(n))), n)
	var tol func(arg int, idx []int) diffcheck.Tolerance
	if c.tol != nil {
		tol = func(arg int, idx []int) diffcheck.Tolerance { return c.tol(n, arg, idx) }
	}
	native := func(args []any) error { return diffcheck.CallNative(c.fn, args) }
	diffcheck.Check(t, fmt.Sprintf("n=%d", n), p, s, k, args, native, tol)
}

// TestGeneratedPositions: an error in a generated kernel names its place
// in kernels_gen.go, not in the joined source that qd.Compile sees.
func TestGeneratedPositions(t *testing.T) {
	const good, bad = "out[i][0] = x + y", "out[i][0] = x + 1.5"
	at := bytes.Index(genSrc, []byte(good))
	if at < 0 {
		t.Fatalf("%s has no %q", diffgen.FileName, good)
	}
	line := bytes.Count(genSrc[:at], []byte("\n")) + 1
	col := at - bytes.LastIndexByte(genSrc[:at], '\n') + len("out[i][0] = x + ")
	src, err := diffgen.Join(handSrc, bytes.Replace(genSrc, []byte(good), []byte(bad), 1))
	if err != nil {
		t.Fatal(err)
	}
	p, err := qd.Init(qd.WithArch(qd.CPU))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = qd.Compile(p, src, qd.WithFilename(FileName))
	if want := fmt.Sprintf("%s:%d:%d: ", diffgen.FileName, line, col); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("compiling a generated kernel with an error: %v; want the error at %s", err, want)
	}
}
