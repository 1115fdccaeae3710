package qd

// The root package's tests come in three kinds, told apart by file name:
//
//   - suite_*_test.go, the behaviour suite: what qd does, on every backend
//     present (forEachArch: the CPU always, a GPU where one is found). Its
//     kernels come from internal/suitekernels through buildKernel, or from
//     Go source through Compile. A new test of behaviour a user can see
//     goes into the suite file of its subject (streams, graph, memory…),
//     or a new suite_SUBJECT_test.go.
//   - NAME_test.go beside NAME.go: unit tests of that file, mostly of an
//     internal mechanism (fastbind, tracker, zerofill, relaunch, busy,
//     alias…), free to reach into unexported state and to run on the CPU
//     alone. A test of one mechanism goes beside its file.
//   - GPU-only tests of the runtime behind the public API: gpu_*_test.go
//     run on the fake driver (internal/backend/gpu/fakedriver), so on
//     every machine, and inject driver faults; multigpu_test.go and
//     wrapstream_test.go need real devices and skip without them
//     (QD_GPU_RUN=1 makes that a failure). A GPU-only test goes into a
//     gpu_ file when the fake driver can play its device, else into one
//     of the device files.
//
// Benchmarks live in *bench*_test.go: launch_bench_test.go (qd's own host
// cost, over a null device), compile_bench_test.go, bench_test.go and
// bench_gpu_test.go. This file holds the helpers every kind shares.

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/suitekernels"
	"github.com/quadrants-go/qd/internal/testarchs"
)

// The behaviour suite runs every test on every backend present: the CPU
// always, CUDA where a device is found (internal/testarchs: probed once,
// kept open for the whole binary; with QD_GPU_RUN=1 a missing CUDA is a
// failure, not a skip).
var suiteProbe = testarchs.New(func(a Arch) (*Program, error) { return Init(WithArch(a)) }, CPU, CUDA, AMDGPU, Vulkan)

func TestMain(m *testing.M) { suiteProbe.Main(m) }

// suiteArchs lists the archs to run the suite on.
func suiteArchs(t *testing.T) []Arch { return suiteProbe.Archs(t) }

// forEachArch runs f as a subtest per arch with a fresh Program, closed
// afterwards.
func forEachArch(t *testing.T, f func(t *testing.T, p *Program)) {
	t.Helper()
	forEachArchWith(t, nil, f)
}

// forEachArchWith is forEachArch with more Init options.
func forEachArchWith(t *testing.T, opts []InitOption, f func(t *testing.T, p *Program)) {
	t.Helper()
	for _, a := range suiteArchs(t) {
		t.Run(a.String(), func(t *testing.T) {
			p, err := Init(append([]InitOption{WithArch(a)}, opts...)...)
			if err != nil && a == Vulkan && errors.Is(err, ErrUnsupported) {
				t.Skipf("vulkan: %v", err) // WithTrace (needTrace)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := p.Close(); err != nil {
					t.Errorf("Program.Close: %v", err)
				}
			})
			f(t, p)
		})
	}
}

// arrayLen is the length of a test's arrays where the length itself does
// not matter: some blocks of threads on a GPU, and quick everywhere.
const arrayLen = 1024

// The helpers below make what a test needs and fail the test when the
// making fails, so that a line names its type once:
// x := newNdarray[float32](t, p, arrayLen). A call with no helper of its own
// goes through must.

// must returns a call's value once its error has been checked:
// r := must(h.Rows(1, 3))(t). The call comes first because Go passes a
// call's two results only as a whole argument list, and from them it
// infers the value's type.
func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// initProgram is Init for a test. The caller closes the Program.
func initProgram(t testing.TB, opts ...InitOption) *Program {
	t.Helper()
	return must(Init(opts...))(t)
}

// build is buildKernel for a test.
func build(t testing.TB, p *Program, k *ir.Kernel) *Kernel {
	t.Helper()
	return must(buildKernel(p, k))(t)
}

// compileModule is Compile for a test.
func compileModule[S ~string | ~[]byte](t testing.TB, p *Program, src S, opts ...CompileOption) *Module {
	t.Helper()
	return must(Compile(p, src, opts...))(t)
}

// kernelOf is m.Kernel(name) for a test.
func kernelOf(t testing.TB, m *Module, name string) *Kernel {
	t.Helper()
	return must(m.Kernel(name))(t)
}

// newNdarray is NewNdarray for a test.
func newNdarray[T Elem](t testing.TB, p *Program, shape ...int) *Ndarray[T] {
	t.Helper()
	return must(NewNdarray[T](p, shape...))(t)
}

// newNdarrayOn is NewNdarrayOn for a test.
func newNdarrayOn[T Elem](t testing.TB, s *Stream, shape ...int) *Ndarray[T] {
	t.Helper()
	return must(NewNdarrayOn[T](s, shape...))(t)
}

// newHostArray is NewHostArray for a test.
func newHostArray[T Elem](t testing.TB, p *Program, shape ...int) *HostArray[T] {
	t.Helper()
	return must(NewHostArray[T](p, shape...))(t)
}

// newStream is p.NewStream for a test.
func newStream(t testing.TB, p *Program, opts ...StreamOption) *Stream {
	t.Helper()
	return must(p.NewStream(opts...))(t)
}

// newEvent is p.NewEvent for a test.
func newEvent(t testing.TB, p *Program, opts ...EventOption) *Event {
	t.Helper()
	return must(p.NewEvent(opts...))(t)
}

// captureGraph is s.Capture for a test.
func captureGraph(t testing.TB, s *Stream, fn func() error) *Graph {
	t.Helper()
	return must(s.Capture(fn))(t)
}

// toSlice is a.ToSlice for a test: a copy of a's elements.
func toSlice[T Elem](t testing.TB, a *Ndarray[T]) []T {
	t.Helper()
	return must(a.ToSlice())(t)
}

// hostData is h.Data for a test: h's memory itself, not a copy.
func hostData[T Elem](t testing.TB, h *HostArray[T]) []T {
	t.Helper()
	return must(h.Data())(t)
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got error %v, want one matching %v", err, target)
	}
}

func allEqual[T comparable](t testing.TB, what string, got []T, want T) {
	t.Helper()
	for i, v := range got {
		if v != want {
			t.Fatalf("%s[%d] = %v, want %v", what, i, v, want)
		}
	}
}

// spinBound is how many steps a rendezvous kernel spins before it gives up.
// It only has to outlast the skew between launches (microseconds) by far;
// a larger bound only makes a failing run (no overlap) take longer. A GPU
// step reads flags with global atomics (about a microsecond for several),
// a CPU step costs tens of nanoseconds: either way a failure shows within
// seconds, not minutes.
func spinBound(p *Program) int64 {
	if p.Arch() == CPU {
		return 200_000_000
	}
	return 2_000_000
}

// slowSteps is the spin of a SlowWrite or SlowAdd launch that wants n
// steps: n, or on a device that stops an invocation's loops after 65,535
// iterations in all (needLongLoops) as many as leave room for the
// kernel's writes of up to 4096 elements after the spin.
func slowSteps(p *Program, n int64) int64 {
	if p.Arch() == Vulkan && p.dev.Info().Software {
		return min(n, 50_000)
	}
	return n
}

// buildKernel compiles a kernel written with the IR builder of package
// internal/ir: the tests' entry point for kernels built by hand (the
// behaviour suite tests the runtime without the front end). Users write
// kernels in Go and call Compile. It refuses a kernel that is not one of
// suitekernels.All(), so that no kernel the suite runs escapes the checks
// of the code generators.
func buildKernel(p *Program, k *ir.Kernel) (*Kernel, error) {
	if p == nil || k == nil {
		return nil, fmt.Errorf("%w: buildKernel: nil Program or kernel", ErrInvalidArgument)
	}
	plan, err := lower.Lower(k)
	if err != nil {
		return nil, err
	}
	if !suiteKernelHashes()[plan.Hash] {
		return nil, fmt.Errorf("buildKernel: kernel %s is not one of suitekernels.All(), the kernels that the code generator checks (internal/codegencheck) compile: build it there", k.Name)
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	c, err := p.newKernel(plan)
	if err != nil {
		return nil, err
	}
	// The handle owns its kernel: its Close, or its cleanup, releases it.
	h := &Kernel{c: c}
	runtime.AddCleanup(h, func(c *kernelCore) { go c.p.closeLeaked(c) }, c)
	return h, nil
}

// suiteKernelHashes are the structural hashes of suitekernels.All().
var suiteKernelHashes = sync.OnceValue(func() map[ir.Hash]bool {
	hashes := map[ir.Hash]bool{}
	for _, k := range suitekernels.All() {
		hashes[ir.HashKernel(k)] = true
	}
	return hashes
})

// rejectedKernelNames are the names of the kernels that tests build with
// ir.NewBuilder to see them rejected: no code exists for them.
var rejectedKernelNames = map[string]bool{"bad": true}

// TestSuiteKernelsCovered: the tests of this package build no kernel with
// ir.NewBuilder (but the rejected ones): they take their kernels from
// internal/suitekernels, whose All lists every one for the code generator
// checks (internal/codegencheck); and buildKernel refuses any other kernel.
func TestSuiteKernelsCovered(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "NewBuilder" {
				return true
			}
			if len(call.Args) == 1 {
				if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if name, _ := strconv.Unquote(lit.Value); rejectedKernelNames[name] {
						return true
					}
				}
			}
			t.Errorf("%s: a kernel built in a test; build it in internal/suitekernels and list it in All, so that internal/codegencheck compiles it",
				fset.Position(call.Pos()))
			return true
		})
	}
	p := initProgram(t, WithArch(CPU))
	defer p.Close()
	if _, err := buildKernel(p, suitekernels.Fill(ir.F64)); err == nil || !strings.Contains(err.Error(), "suitekernels.All") {
		t.Errorf("buildKernel of a kernel not in suitekernels.All: %v, want an error naming suitekernels.All", err)
	}
}

// A need is something a test needs of its backend beyond what every
// backend does; needs skips the test, with a notice saying why, on a
// backend without it. Only Vulkan lacks any yet (docs/vulkan.md); each
// need names what is missing, so that a skip is never silent.
type need int

const (
	// needPeers: waits and copies between Programs, which the Vulkan
	// backend does not offer yet (a timeline semaphore belongs to one
	// VkDevice; sharing one needs external semaphores).
	needPeers need = iota + 1
	// needTrace: the runtime trace, not built for Vulkan yet.
	needTrace
	// needConcurrentStreams: two streams' kernels running at once (a
	// rendezvous, or a kernel that waits for another stream's copy). A
	// device with one compute queue (lavapipe) runs the streams' work in
	// turn, correctly ordered but never at once.
	needConcurrentStreams
	// needLongLoops: an invocation that loops more than 65,535 times in
	// all; lavapipe stops such an invocation silently
	// (vulkan.TestLongSerialLoop).
	needLongLoops
)

func needs(t testing.TB, p *Program, ns ...need) {
	t.Helper()
	if p.Arch() != Vulkan {
		return
	}
	desc := p.dev.Describe()
	for _, n := range ns {
		switch n {
		case needPeers:
		case needTrace:
		case needConcurrentStreams:
			needsQueues(t, p, 2)
		case needLongLoops:
			if p.dev.Info().Software {
				t.Skipf("vulkan: the test loops more than 65,535 times in one invocation, which %s stops silently", desc)
			}
		}
	}
}

// TestSuiteRunsOnVulkan: where CI installed lavapipe (QD_REQUIRE_VULKAN=1),
// the suite must run on Vulkan, not pass by leaving it out.
func TestSuiteRunsOnVulkan(t *testing.T) {
	if os.Getenv("QD_REQUIRE_VULKAN") != "1" {
		t.Skip("QD_REQUIRE_VULKAN is not set: the suite runs on Vulkan where a device opens")
	}
	if !slices.Contains(suiteArchs(t), Vulkan) {
		p, err := Init(WithArch(Vulkan))
		if err == nil {
			p.Close()
		}
		t.Fatalf("QD_REQUIRE_VULKAN=1 but the suite does not run on Vulkan: %v", err)
	}
}

// needsQueues skips t, with a notice, on a Vulkan device with fewer than n
// compute queues: n streams' kernels that must run at once (a rendezvous
// of n) need n queues there, where streams share queues in turn.
func needsQueues(t testing.TB, p *Program, n int) {
	t.Helper()
	if p.Arch() != Vulkan {
		return
	}
	desc := p.dev.Describe()
	m := regexp.MustCompile(`(\d+) compute queues?[,)]`).FindStringSubmatch(desc)
	if m == nil {
		t.Fatalf("vulkan: no queue count in %q", desc)
	}
	if have, _ := strconv.Atoi(m[1]); have < n {
		t.Skipf("vulkan: the test needs %d streams' kernels running at once, and %s has %d compute queue(s), which streams share in turn", n, desc, have)
	}
}
