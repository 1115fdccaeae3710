package qd

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/ptx"
	"github.com/quadrants-go/qd/internal/diffgen"
	"github.com/quadrants-go/qd/internal/frontend"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/ptxas"
)

// Every kernel the behaviour suite builds is compiled to PTX and assembled
// by ptxas for sm_70, sm_80 and sm_90 (those the installed ptxas knows),
// so PTX that the driver would reject is caught on machines without a GPU
// (SPEC §8). ptxas comes from .ci/install-ptxas.sh; without it the test
// skips with a notice, never passes silently.
//
// The suite builds some kernels inline in its tests; suiteKernels repeats
// those here, and TestSuiteKernelsCovered checks, by parsing this package's
// test files, that every kernel name given to ir.NewBuilder there is in
// suiteKernels, so a new kernel cannot escape the check unnoticed.

// suiteKernels are the kernels of the behaviour suite (IR-built and Go-source), the benchmarks and
// the accuracy test.
func suiteKernels() []*ir.Kernel {
	ks := []*ir.Kernel{
		fillKernel("fill", ir.F32), fillKernel("fill", ir.I32), copyKernel(), addKernel(),
		slowWriteKernel(), rendezvousKernel(), rendezvousAllKernel(), twoGroupKernel(),
		rendezvousGroupsKernel(2), rendezvousGroupsKernel(4), rendezvousGroupsKernel(8),
		saxpyKernel(), polyKernel(), badGroupKernel(), aliasKernel(), waitFlagKernel(), scaleKernel(),
		diff3Kernel(), slowAddKernel(), relayKernel(), axpbKernel(),
	}
	for _, kind := range runawayKinds {
		ks = append(ks, runawayKernel(kind))
	}
	ks = append(ks, inlineSuiteKernels()...)
	ks = append(ks, sourceKernels()...)
	return append(ks, accuracyKernels()...)
}

// The differential test's kernel files (package qd_test), read here as
// source so their kernels are assembled too; diffgen.Join makes them one.
var (
	//go:embed diffkernels_test.go
	diffKernelsSrc []byte
	//go:embed diffkernels_gen_test.go
	diffKernelsGenSrc []byte
)

// sourceKernels are the kernels the tests compile from Go source: the
// Go-source suite, the reductions and the differential test's thirty
// kernels.
func sourceKernels() []*ir.Kernel {
	var out []*ir.Kernel
	diffSrc, err := diffgen.Join(diffKernelsSrc, diffKernelsGenSrc)
	if err != nil {
		panic(fmt.Sprintf("joining the differential kernels: %v", err)) // TestDiff fails too
	}
	for _, src := range []struct {
		name string
		text []byte
	}{
		{"suite_source.go", []byte(suiteSrc)}, {"reduce.go", []byte(reduceSrc())}, {"diffkernels_test.go", diffSrc},
		{"ndrange.go", []byte(ndrangeSrc)}, {"checked.go", []byte(checkedSrc)}, {"addone.go", []byte(addOneSrc)},
		{"copy.go", []byte(copySrc)},
	} {
		ks, err := frontend.Parse(src.name, src.text)
		if err != nil {
			panic(fmt.Sprintf("parsing %s: %v", src.name, err)) // the tests compiling it fail too
		}
		out = append(out, ks...)
	}
	return out
}

// inlineSuiteKernels repeat the kernels that tests build inline (same names
// and bodies as in the test named beside each).
func inlineSuiteKernels() []*ir.Kernel {
	var ks []*ir.Kernel
	{ // TestStreamParallelSeveralLoopsPerGroup
		b := ir.NewBuilder("groups")
		xa := b.Array("a", ir.F32, 1)
		xb := b.Array("b", ir.F32, 1)
		b.Group(func() {
			b.Parallel(ir.LenOf(xa, 0), func(i *ir.Var) { b.Store(xa, ir.F32c(1), ir.Ref(i)) })
			b.Parallel(ir.LenOf(xa, 0), func(i *ir.Var) {
				b.Store(xa, ir.Op(ir.Add, ir.Ld(xa, ir.Ref(i)), ir.F32c(1)), ir.Ref(i))
			})
		})
		b.Group(func() {
			b.Parallel(ir.LenOf(xb, 0), func(i *ir.Var) { b.Store(xb, ir.F32c(10), ir.Ref(i)) })
		})
		ks = append(ks, b.Kernel())
	}
	{ // TestStreamParallelAfterEarlierWork
		b := ir.NewBuilder("copy_groups")
		src := b.Array("src", ir.F32, 1)
		d1 := b.Array("d1", ir.F32, 1)
		d2 := b.Array("d2", ir.F32, 1)
		for _, d := range []*ir.Param{d1, d2} {
			b.Group(func() {
				b.Parallel(ir.LenOf(d, 0), func(i *ir.Var) { b.Store(d, ir.Ld(src, ir.Ref(i)), ir.Ref(i)) })
			})
		}
		ks = append(ks, b.Kernel())
	}
	{ // TestLaunchFailureReturnsPooledStreams
		b := ir.NewBuilder("three_groups")
		x := b.Array("x", ir.F32, 1)
		for g := range 3 {
			b.Group(func() {
				b.Parallel(ir.I64c(1), func(_ *ir.Var) { b.Store(x, ir.F32c(float32(g+1)), ir.I64c(int64(g))) })
			})
		}
		ks = append(ks, b.Kernel())
	}
	{ // TestArgumentErrors
		b := ir.NewBuilder("saxpy")
		a := b.Scalar("a", ir.F32)
		x := b.Array("x", ir.F32, 1)
		y := b.Array("y", ir.F32, 1)
		b.Parallel(ir.LenOf(y, 0), func(i *ir.Var) {
			b.Store(y, ir.Op(ir.Add, ir.Op(ir.Mul, ir.P(a), ir.Ld(x, ir.Ref(i))), ir.Ld(y, ir.Ref(i))), ir.Ref(i))
		})
		ks = append(ks, b.Kernel())
	}
	{ // TestHostSlices: 2-D and 3-D
		b2 := ir.NewBuilder("scale2")
		m := b2.Array("m", ir.I64, 2)
		b2.Parallel2(ir.LenOf(m, 0), ir.LenOf(m, 1), func(i, j *ir.Var) {
			b2.Store(m, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(i), ir.I64c(10)), ir.Ref(j)), ir.Ref(i), ir.Ref(j))
		})
		b3 := ir.NewBuilder("fill3")
		v := b3.Array("v", ir.F64, 3)
		b3.ParallelN([]ir.Expr{ir.LenOf(v, 0), ir.LenOf(v, 1), ir.LenOf(v, 2)}, func(ix []*ir.Var) {
			b3.Store(v, ir.Conv(ir.F64, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(ix[0]), ir.I64c(100)), ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(ix[1]), ir.I64c(10)), ir.Ref(ix[2])))), ir.Ref(ix[0]), ir.Ref(ix[1]), ir.Ref(ix[2]))
		})
		ks = append(ks, b2.Kernel(), b3.Kernel())
	}
	{ // TestKernelErrorsReported (CPU only there; the PTX must still assemble)
		b := ir.NewBuilder("oob")
		x := b.Array("x", ir.F32, 1)
		b.Parallel(ir.I64c(10), func(i *ir.Var) { b.Store(x, ir.F32c(1), ir.Ref(i)) })
		ks = append(ks, b.Kernel())
	}
	{ // BenchmarkStreamParallelLaunchCPU
		b := ir.NewBuilder("groups4")
		x := b.Array("x", ir.F32, 1)
		for g := range 4 {
			b.Group(func() {
				b.Parallel(ir.I64c(1), func(_ *ir.Var) { b.Store(x, ir.F32c(1), ir.I64c(int64(g))) })
			})
		}
		ks = append(ks, b.Kernel())
	}
	return ks
}

// invalidKernelNames are NewBuilder names of kernels built to be rejected
// by buildKernel (no PTX exists for them).
var invalidKernelNames = map[string]bool{"bad": true}

// TestSuiteKernelsCovered parses this package's test files and checks that
// every literal kernel name passed to ir.NewBuilder is among suiteKernels.
func TestSuiteKernelsCovered(t *testing.T) {
	have := map[string]bool{}
	for _, k := range suiteKernels() {
		have[k.Name] = true
	}
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var missing []string
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "NewBuilder" {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true // a computed name: its constructor is listed by hand
			}
			name, _ := strconv.Unquote(lit.Value)
			if !have[name] && !invalidKernelNames[name] {
				missing = append(missing, fmt.Sprintf("%s (%s)", name, fset.Position(lit.Pos())))
			}
			return true
		})
	}
	if len(missing) > 0 {
		t.Errorf("kernels built by the tests but not assembled by TestPtxasSuiteKernels; add them to suiteKernels in ptxas_test.go:\n\t%s",
			strings.Join(missing, "\n\t"))
	}
}

func TestPtxasSuiteKernels(t *testing.T) {
	tool, err := ptxas.Find()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	// The check must be able to fail.
	bad := ".version 6.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tfrob.f32;\n\tret;\n}\n"
	if err := tool.Assemble(dir, "bad", tool.Archs[0], bad); err == nil || !strings.Contains(err.Error(), "frob") {
		t.Fatalf("ptxas accepted an unknown instruction: %v", err)
	}

	// All kernels go into one module per architecture: ptxas's start-up,
	// not its work, dominates per-kernel runs (about 80 ms each, 200+ runs).
	// Kernels are renamed apart (two tests may use one name) and each math
	// subroutine is defined once. A failing module is retried kernel by
	// kernel so that the error names its kernel.
	kernels := distinctSuiteKernels(t)
	type job struct {
		sm   int
		opts ptx.Options
	}
	var jobs []job
	for _, sm := range tool.Archs {
		jobs = append(jobs, job{sm: sm})
	}
	// The other code the options select, for the newest architecture.
	newest := tool.Archs[len(tool.Archs)-1]
	jobs = append(jobs, job{newest, ptx.Options{Debug: true}}, job{newest, ptx.Options{FastMath: true}})
	var wg sync.WaitGroup
	errs := make([][]string, len(jobs))
	for ji, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			jd := filepath.Join(dir, fmt.Sprint(ji)) // the jobs' files apart
			if err := os.Mkdir(jd, 0o755); err != nil {
				errs[ji] = []string{err.Error()}
				return
			}
			errs[ji] = ptxasArch(tool, j.sm, j.opts, jd, kernels)
		}()
	}
	wg.Wait()
	failed := 0
	for ji, list := range errs {
		failed += len(list)
		for _, e := range list {
			t.Errorf("%+v: %s", jobs[ji].opts, e)
		}
	}
	t.Logf("ptxas %s (CUDA %d.%d): %d kernels assembled for sm_%v, and with Debug and with FastMath for sm_%d, %d failures",
		tool.Path, tool.CUDA/1000, tool.CUDA%1000/10, len(kernels), tool.Archs, newest, failed)
}

// distinctSuiteKernels are suiteKernels without repeats (two tests may
// build the same kernel), renamed apart (two kernels may share a name):
// what the checks of every emitted kernel compile.
func distinctSuiteKernels(t *testing.T) []*ir.Kernel {
	var kernels []*ir.Kernel
	seen := map[ir.Hash]bool{}
	for i, k := range suiteKernels() {
		plan, err := lower.Lower(k)
		if err != nil {
			t.Errorf("lower %s: %v", k.Name, err)
			continue
		}
		if seen[plan.Hash] {
			continue // the same kernel built twice (e.g. by two tests)
		}
		seen[plan.Hash] = true
		k.Name = fmt.Sprintf("k%03d_%s", i, k.Name)
		kernels = append(kernels, k)
	}
	return kernels
}

var headerLineRE = regexp.MustCompile(`^\.(version|target|address_size)\b`)

// ptxasArch assembles the kernels for sm_<sm> as one module; on failure,
// each on its own. It returns the errors.
func ptxasArch(tool ptxas.Tool, sm int, opts ptx.Options, dir string, kernels []*ir.Kernel) []string {
	// The target the CUDA backend would pick on a device of this compute
	// capability with a driver of ptxas's CUDA release.
	tg, err := ptx.TargetFor(sm, tool.CUDA)
	if err != nil {
		return []string{fmt.Sprintf("TargetFor(%d, %d): %v", sm, tool.CUDA, err)}
	}
	var errs []string
	texts := map[string]string{}
	funcs := map[string]string{} // math subroutine name → its text
	var body strings.Builder
	for _, k := range kernels {
		plan, err := lower.Lower(k)
		if err == nil {
			var text string
			if text, _, err = ptx.Generate(plan, tg, opts); err == nil {
				texts[k.Name] = text
				if !opts.FastMath && strings.Contains(text, ".approx") {
					errs = append(errs, fmt.Sprintf("%s: the PTX uses an .approx instruction", k.Name))
				}
				if e := splitModule(text, funcs, &body); e != nil {
					errs = append(errs, fmt.Sprintf("%s: %v", k.Name, e))
				}
				continue
			}
		}
		errs = append(errs, fmt.Sprintf("compile %s for sm_%d: %v", k.Name, sm, err))
	}
	var all strings.Builder
	fmt.Fprintf(&all, ".version %s\n.target sm_%d\n.address_size 64\n\n", tg.Version, sm)
	names := make([]string, 0, len(funcs))
	for n := range funcs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		all.WriteString(funcs[n])
	}
	all.WriteString(body.String())
	entries := 0
	for _, text := range texts {
		entries += strings.Count(text, ".entry ")
	}
	if got := strings.Count(all.String(), ".entry "); got != entries {
		errs = append(errs, fmt.Sprintf("sm_%d: the combined module has %d entries, the kernels %d", sm, got, entries))
	}
	if err := tool.Assemble(dir, "all", sm, all.String()); err == nil {
		return errs
	}
	for _, k := range kernels {
		if text, ok := texts[k.Name]; ok {
			if err := tool.Assemble(dir, k.Name, sm, text); err != nil {
				errs = append(errs, err.Error()+"\n--- PTX ---\n"+text)
			}
		}
	}
	if len(errs) == 0 {
		errs = append(errs, fmt.Sprintf("sm_%d: the combined module fails but every kernel assembles alone (a clash between kernels?)", sm))
	}
	return errs
}

// splitModule adds a module's .func definitions to funcs (once each; the
// same name must have the same text) and the rest, without the header, to
// body.
func splitModule(text string, funcs map[string]string, body *strings.Builder) error {
	lines := strings.SplitAfter(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if headerLineRE.MatchString(l) {
			continue
		}
		if !strings.HasPrefix(l, ".func ") {
			body.WriteString(l)
			continue
		}
		open := strings.Index(l, ")")
		rest := l[open+1:]
		name := strings.TrimSpace(rest[:strings.Index(rest, "(")])
		var def strings.Builder
		for ; i < len(lines); i++ {
			def.WriteString(lines[i])
			if lines[i] == "}\n" || lines[i] == "}" {
				break
			}
		}
		def.WriteString("\n")
		if old, ok := funcs[name]; ok && old != def.String() {
			return fmt.Errorf("two different definitions of %s", name)
		}
		funcs[name] = def.String()
	}
	return nil
}
