package codegencheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/ptx"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/ptxas"
)

// Every kernel the tests run (checkedKernels) is compiled to PTX and
// assembled by ptxas for sm_70, sm_80 and sm_90 (those the installed ptxas
// knows), so PTX that the driver would reject is caught on machines
// without a GPU (docs/semantics.md#testing). ptxas comes from .ci/install-ptxas.sh; without
// it the test skips with a notice, never passes silently.

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
	kernels := checkedKernels(t)
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

var (
	headerLineRE = regexp.MustCompile(`^\.(version|target|address_size)\b`)
	versionRE    = regexp.MustCompile(`(?m)^\.version (\d+\.\d)$`)
)

// newerISA reports whether PTX ISA version a ("8.1") is newer than b.
func newerISA(a, b string) bool {
	var am, an, bm, bn int
	fmt.Sscanf(a, "%d.%d", &am, &an)
	fmt.Sscanf(b, "%d.%d", &bm, &bn)
	return am*10+an > bm*10+bn
}

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
	// The newest .version any kernel needs (vector atomics raise theirs
	// above the target's where the driver allows: ptx.Target.MaxVersion).
	version := tg.Version
	for _, text := range texts {
		if m := versionRE.FindStringSubmatch(text); m != nil && newerISA(m[1], version) {
			version = m[1]
		}
	}
	var all strings.Builder
	fmt.Fprintf(&all, ".version %s\n.target sm_%d\n.address_size 64\n\n", version, sm)
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
