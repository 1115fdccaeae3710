package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/amdtools"
	"github.com/quadrants-go/qd/internal/codegen/csrc"
	"github.com/quadrants-go/qd/internal/ir"
)

const compileTestSrc = `package k

import "github.com/quadrants-go/qd"

//qd:kernel
func sum(x []float32, s []float32) {
	for i := range len(x) {
		qd.AtomicAdd(&s[0], x[i])
	}
}

//qd:kernel
func scale(x []float64, a float64) {
	for i := range len(x) {
		x[i] *= a
	}
}
`

func TestCompile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "k.go")
	if err := os.WriteFile(src, []byte(compileTestSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errs strings.Builder
	if code := run([]string{"compile", src}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, want := range []string{"// kernel sum: 1 task(s)", "whole-range reduction (add on s)", "entry sum_t0: blocks of 256 threads",
		".visible .entry sum_t0(", "shfl.sync.down.b32", "// kernel scale", "a (float64, 8 bytes)", ".target sm_90"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}

	outDir := filepath.Join(dir, "out")
	out.Reset()
	if code := run([]string{"compile", "-arch", "cpu", "-o", outDir, src}, &out, &errs); code != 0 {
		t.Fatalf("-arch cpu -o: exit %d: %s", code, errs.String())
	}
	ir, err := os.ReadFile(filepath.Join(outDir, "scale.ir"))
	if err != nil || !strings.Contains(string(ir), "kernel scale") {
		t.Errorf("scale.ir: %v\n%s", err, ir)
	}

	out.Reset()
	if code := run([]string{"compile", "-fast-math", "-sm", "80", src}, &out, &errs); code != 0 || !strings.Contains(out.String(), ".target sm_80") {
		t.Errorf("-fast-math -sm 80: exit %d", code)
	}
}

// TestCompileAMD: -arch amdgpu writes the HIP source hiprtc would compile,
// for the wave size of the -gfx processor; where clang is installed (CI),
// each written file compiles into a code object holding its entries.
func TestCompileAMD(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "k.go")
	if err := os.WriteFile(src, []byte(compileTestSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ gfx, wave string }{{"gfx90a", "64"}, {"gfx1100", "32"}} {
		var out, errs strings.Builder
		if code := run([]string{"compile", "-arch", "amdgpu", "-gfx", c.gfx, src}, &out, &errs); code != 0 {
			t.Fatalf("-gfx %s: exit %d: %s", c.gfx, code, errs.String())
		}
		for _, want := range []string{"// kernel sum: 1 task(s)", "entry sum_t0: blocks of", "a (float64, 8 bytes)",
			"// HIP C source for " + c.gfx + " (wave size " + c.wave + ")", "QD_KERNEL void QD_BOUNDS(256) sum_t0("} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("-gfx %s: output lacks %q", c.gfx, want)
			}
		}
	}

	outDir := filepath.Join(dir, "hip")
	var out, errs strings.Builder
	if code := run([]string{"compile", "-arch", "amdgpu", "-o", outDir, src}, &out, &errs); code != 0 {
		t.Fatalf("-o: exit %d: %s", code, errs.String())
	}
	clang, err := amdtools.FindClang()
	if err != nil {
		amdtools.Unavailable(t, "clang", err)
	}
	for _, k := range []string{"sum", "scale"} {
		text, err := os.ReadFile(filepath.Join(outDir, k+".hip"))
		if err != nil {
			t.Fatal(err)
		}
		co, err := clang.CompileAMD(t.TempDir(), k, "gfx90a", string(text), csrc.ClangOptions())
		if err == nil {
			err = amdtools.CheckCodeObject(co, "gfx90a", []string{k + "_t0"})
		}
		if err != nil {
			t.Errorf("%s.hip: %v", k, err)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.go")
	os.WriteFile(bad, []byte("package k\n\n//qd:kernel\nfunc k(x []int32) {\n\tgo func() {}()\n}\n"), 0o644)
	none := filepath.Join(dir, "none.go")
	os.WriteFile(none, []byte("package k\n\nfunc f() {}\n"), 0o644)
	huge := filepath.Join(dir, "huge.go")
	os.WriteFile(huge, make([]byte, 16<<20+1), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"compile", bad}, 1, "bad.go:5:2: "},
		{[]string{"compile", none}, 1, "has no //qd:kernel function"},
		{[]string{"compile", filepath.Join(dir, "missing.go")}, 1, "no such file"},
		{[]string{"compile"}, 2, "want exactly one Go source file"},
		{[]string{"compile", "-arch", "metal", bad}, 2, `-arch "metal"`},
		{[]string{"compile", "-sm", "50", none}, 2, "-sm 50: want the compute capability ×10 of a GPU qd writes PTX for: 60, 61, 62, 70,"},
		{[]string{"compile", "-sm", "-5", bad}, 2, "-sm -5: want"},
		{[]string{"compile", "-sm", "9999999999", bad}, 2, "-sm 9999999999: want"},
		{[]string{"compile", "-sm", "85", bad}, 2, "-sm 85: want"},
		{[]string{"compile", "-sm", "1e3", bad}, 2, `invalid value "1e3" for flag -sm`},
		{[]string{"compile", "-arch", "cpu", "-sm", "80", bad}, 2, "-sm is for -arch cuda only"},
		{[]string{"compile", "-gfx", "gfx942", bad}, 2, "-gfx is for -arch amdgpu only"},
		{[]string{"compile", "-arch", "amdgpu", "-gfx", "gfx9999999", bad}, 2, `-gfx "gfx9999999": want an AMD processor`},
		{[]string{"compile", huge}, 1, "huge.go: more than 16 MiB; a kernel source is far smaller"},
		{[]string{"compile", "-arch", "amdgpu", "-gfx", "gfx803", bad}, 2, `-gfx "gfx803": want an AMD processor`},
		{[]string{"compile", "-arch", "amdgpu", "-gfx", "sm_90", bad}, 2, `-gfx "sm_90"`},
		{[]string{"compile", "-arch", "amdgpu", "-fast-math", bad}, 2, "-fast-math is for -arch cuda only"},
		{[]string{"compile", "-arch", "amdgpu", bad}, 1, "bad.go:5:2: "},
	} {
		var out, errs strings.Builder
		code := run(c.args, &out, &errs)
		if code != c.code || !strings.Contains(errs.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errs.String(), c.code, c.want)
		}
	}
}

// A kernel whose switch has 2,000 cases compiles to output of size linear
// in the cases for every -arch: the HIP C source and the IR are no larger
// than the PTX. Nested once more each case, they were quadratic: 10,000
// cases gave 250 MB of C and 400 MB of IR against 2.3 MB of PTX.
func TestCompileLongSwitch(t *testing.T) {
	const n = 2000
	var src strings.Builder
	src.WriteString("package k\n\n//qd:kernel\nfunc sw(x []int32) {\n\tfor i := range len(x) {\n\t\tswitch x[i] {\n")
	for c := range n {
		fmt.Fprintf(&src, "\t\tcase %d:\n\t\t\tx[i] = %d\n", c, 7*c+1)
	}
	src.WriteString("\t\tdefault:\n\t\t\tx[i] = -1\n\t\t}\n\t}\n}\n")
	file := filepath.Join(t.TempDir(), "sw.go")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	size := map[string]int{}
	for _, arch := range []string{"cuda", "amdgpu", "cpu"} {
		var out, errs strings.Builder
		if code := run([]string{"compile", "-arch", arch, file}, &out, &errs); code != 0 {
			t.Fatalf("-arch %s: exit %d: %s", arch, code, errs.String())
		}
		size[arch] = out.Len()
	}
	// About 210 bytes of PTX a case (a compare, a branch, a store).
	if perCase := size["cuda"] / n; perCase > 400 {
		t.Errorf("%d bytes of PTX a case, want at most 400", perCase)
	}
	for _, arch := range []string{"amdgpu", "cpu"} {
		if size[arch] > size["cuda"] {
			t.Errorf("-arch %s wrote %d bytes, more than the %d of PTX", arch, size[arch], size["cuda"])
		}
	}
}

// TestCompileSerialTasks: a serial task is described as one thread and
// quotes its first statement, without its comment and shortened, with …
// when it runs more lines: a scalar computed before a parallel loop is a
// launch of its own that the source does not show. A task whose position
// a //line directive moved to another file quotes nothing.
func TestCompileSerialTasks(t *testing.T) {
	const src = `package k

import "github.com/quadrants-go/qd"

//qd:kernel
func scale(x []float32, a float32, on bool) {
	s := a * 2 // "//" in a comment
	if on {
		s = -s
	}
	for i := range len(x) {
		x[i] *= s
	}
	qd.Serial(func() {
		for i := range len(x) - 1 {
			x[i+1] += x[i] + x[i]*x[i] + x[i]*x[i]*x[i] + x[i]*x[i]*x[i]*x[i] + 1
		}
	})
}

//line other.go:1:1
//qd:kernel
func elsewhere(x []float32) {
	x[0] = 1
}
`
	file := filepath.Join(t.TempDir(), "k.go")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"cpu", "cuda", "amdgpu"} {
		var out, errs strings.Builder
		if code := run([]string{"compile", "-arch", arch, file}, &out, &errs); code != 0 {
			t.Fatalf("-arch %s: exit %d: %s", arch, code, errs.String())
		}
		for _, want := range []string{
			"// task 0: serial (one thread), at " + file + ":7:2: s := a * 2 …\n",
			"// task 1: parallel, at " + file + ":11:2\n",
			"// task 2: serial (one thread), at " + file + ":15:3: for i := range len(x) - 1 {\n",
			"// task 0: serial (one thread), at " + filepath.Join(filepath.Dir(file), "other.go") + ":3:2\n",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("-arch %s: output lacks %q", arch, want)
			}
		}
	}
	long := source{file: "k.go", lines: []string{"\tx[i+1] += x[i] + x[i]*x[i] + x[i]*x[i]*x[i] + x[i]*x[i]*x[i]*x[i] + 1 // more"}}
	if got, want := long.quote(ir.Pos{File: "k.go", Line: 1, Col: 2}), "x[i+1] += x[i] + x[i]*x[i] + x[i]*x[i]*x[i] + x[i]*x[i]*x[i…"; got != want {
		t.Errorf("quote of a long line: %q, want %q", got, want)
	}
	if got := long.quote(ir.Pos{File: "k.go", Line: 2, Col: 1}); got != "" {
		t.Errorf("quote past the end: %q, want none", got)
	}
}

// A block task's entry line says how its grid and blocks are sized: one
// GPU block per qd.Blocks block, of the loop's size, from a constant or
// from the launch's scalars.
func TestCompileBlockTasks(t *testing.T) {
	const src = `package k

import "github.com/quadrants-go/qd"

//qd:kernel
func rev(x []float32, size int) {
	for b := range qd.Blocks(len(x)/64, 64) {
		buf := qd.Shared[[64]float32]()
		for t := range b.Threads() {
			buf[t] = x[b.Index()*64+t]
		}
		for t := range b.Threads() {
			x[b.Index()*64+t] = buf[63-t]
		}
	}
	for b := range qd.Blocks(len(x)/size, size) {
		for t := range b.Threads() {
			x[b.Index()*size+t] += 1
		}
	}
}
`
	file := filepath.Join(t.TempDir(), "k.go")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errs strings.Builder
	if code := run([]string{"compile", "-arch", "cuda", file}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, want := range []string{
		"//   entry rev_t0: one GPU block per qd.Blocks block, of 64 threads; grid of the launch's count of blocks, up to the device's cap, the entry striding over the rest; 256 bytes of shared memory\n",
		"//   entry rev_t1: one GPU block per qd.Blocks block, of threads from the launch's scalars;",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
