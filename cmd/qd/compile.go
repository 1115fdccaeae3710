package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/quadrants-go/qd/internal/codegen/csrc"
	"github.com/quadrants-go/qd/internal/codegen/ptx"
	"github.com/quadrants-go/qd/internal/frontend"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

const compileUsage = `usage: qd compile [-arch cuda|amdgpu|cpu] [-sm 90] [-gfx gfx90a] [-fast-math] [-o DIR] FILE.go

Write what qd generates for each //qd:kernel function of FILE.go: PTX for
cuda (for compute capability -sm, one that qd knows), the HIP C source
that hiprtc compiles for amdgpu (the processor is -gfx), the lowered IR
for cpu; no GPU is needed. Each kernel's text starts with its tasks: entry
names, parallel or serial (one thread, a launch of its own, its first
statement quoted), block size, how the grid is sized and the parameters
each entry takes. With -o, kernel K goes to DIR/K.ptx (K.hip,
K.ir); without it, everything goes to standard output. Compile errors are
printed as FILE:LINE:COL: message, one per line, and exit 1.

flags:
`

// compileCmd is the compile verb.
func compileCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("compile", stderr)
	arch := fs.String("arch", "cuda", "what to generate: cuda (PTX), amdgpu (HIP C source) or cpu (IR)")
	sm := fs.Int("sm", 90, "CUDA compute capability ×10 to write PTX for (cuda only)")
	gfx := fs.String("gfx", "gfx90a", "AMD processor to write HIP source for: gfx90a, gfx942, gfx1100, ... (amdgpu only)")
	fast := fs.Bool("fast-math", false, "write PTX as qd.WithFastMath() does (cuda only)")
	out := fs.String("o", "", "write one file per kernel into this folder instead of standard output")
	if code, ok := parseFlags(fs, args, compileUsage, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return usageError(fs, compileUsage, stderr, "qd compile: want exactly one Go source file")
	}
	if *arch != "cuda" && *arch != "amdgpu" && *arch != "cpu" {
		return usageError(fs, compileUsage, stderr, fmt.Sprintf("qd compile: -arch %q: want cuda, amdgpu or cpu", *arch))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, c := range []struct{ flag, arch string }{{"fast-math", "cuda"}, {"sm", "cuda"}, {"gfx", "amdgpu"}} {
		if set[c.flag] && *arch != c.arch {
			return usageError(fs, compileUsage, stderr, fmt.Sprintf("qd compile: -%s is for -arch %s only", c.flag, c.arch))
		}
	}
	if *arch == "cuda" && !slices.Contains(ptx.SMs(), *sm) {
		// The table's compute capabilities only: ptx.TargetFor takes
		// others as a device reports them, but a number typed here
		// is a typo more often than a GPU qd has not heard of.
		return usageError(fs, compileUsage, stderr, fmt.Sprintf("qd compile: -sm %d: want the compute capability ×10 of a GPU qd writes PTX for: %s",
			*sm, joinInts(ptx.SMs())))
	}
	var amd csrc.Target
	if *arch == "amdgpu" {
		var err error
		if amd, err = csrc.TargetFor(*gfx); err != nil || amd.Vendor != csrc.AMD {
			return usageError(fs, compileUsage, stderr, fmt.Sprintf("qd compile: -gfx %q: want an AMD processor such as gfx90a, gfx942 or gfx1100", *gfx))
		}
	}
	file := fs.Arg(0)
	src, err := readSource(file)
	if err != nil {
		fmt.Fprintf(stderr, "qd compile: %v\n", err)
		return 1
	}
	kernels, err := frontend.Parse(file, src)
	if err != nil {
		printCompileErrors(stderr, err)
		return 1
	}
	if len(kernels) == 0 {
		fmt.Fprintf(stderr, "qd compile: %s has no //qd:kernel function\n", file)
		return 1
	}
	var target ptx.Target
	if *arch == "cuda" {
		// The newest PTX ISA qd knows: a driver that runs the GPU takes it.
		if target, err = ptx.TargetFor(*sm, 13010); err != nil {
			fmt.Fprintf(stderr, "qd compile: %v\n", err)
			return 1
		}
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			fmt.Fprintf(stderr, "qd compile: %v\n", err)
			return 1
		}
	}
	failed := false
	code := source{file: file, lines: strings.Split(string(src), "\n")}
	for _, k := range kernels {
		text, ext, err := generateKernel(k, *arch, targets{ptx: target, amd: amd}, ptx.Options{FastMath: *fast}, code)
		if err != nil {
			printCompileErrors(stderr, err)
			failed = true
			continue
		}
		if *out == "" {
			fmt.Fprint(stdout, text)
			continue
		}
		path := filepath.Join(*out, k.Name+ext)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			fmt.Fprintf(stderr, "qd compile: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s\n", path)
	}
	if failed {
		return 1
	}
	return 0
}

// joinInts writes 60, 61, 62.
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// maxSource bounds the Go source qd compile reads: hundreds of times a
// large kernel file, and far from what the front end could hold in memory
// (/dev/zero was read until the process ran out).
const maxSource = 16 << 20

// readSource reads the Go file name, refusing one of more than maxSource
// bytes.
func readSource(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxSource+1))
	if err != nil {
		return nil, err
	}
	if len(src) > maxSource {
		return nil, fmt.Errorf("%s: more than %d MiB; a kernel source is far smaller", name, maxSource>>20)
	}
	return src, nil
}

// targets are what the GPU code generators write for.
type targets struct {
	ptx ptx.Target
	amd csrc.Target
}

// generateKernel lowers k and writes its code for arch, headed by a
// description of its tasks, which quotes code from src; ext is the file
// extension for -o.
func generateKernel(k *ir.Kernel, arch string, t targets, opts ptx.Options, src source) (text, ext string, err error) {
	plan, err := lower.Lower(k)
	if err != nil {
		return "", "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "// kernel %s: %d task(s)", k.Name, len(plan.Tasks))
	if plan.Groups > 0 {
		fmt.Fprintf(&b, " in %d stream-parallel group(s)", plan.Groups)
	}
	b.WriteString("\n")
	switch arch {
	case "cpu":
		for _, t := range plan.Tasks {
			describeTask(&b, t, nil, k, src)
		}
		b.WriteString("\n")
		b.WriteString(ir.Print(k))
		return b.String(), ".ir", nil
	case "amdgpu":
		code, layout, err := csrc.Generate(plan, t.amd, csrc.Options{})
		if err != nil {
			return "", "", err
		}
		for i, task := range plan.Tasks {
			describeTask(&b, task, &layout.Tasks[i], k, src)
		}
		fmt.Fprintf(&b, "// HIP C source for %s (wave size %d), as hiprtc compiles it\n\n", t.amd.Processor(), t.amd.WaveSize)
		b.WriteString(code)
		return b.String(), ".hip", nil
	default:
		code, layout, err := ptx.Generate(plan, t.ptx, opts)
		if err != nil {
			return "", "", err
		}
		for i, t := range plan.Tasks {
			describeTask(&b, t, &layout.Tasks[i], k, src)
		}
		b.WriteString("\n")
		b.WriteString(code)
		return b.String(), ".ptx", nil
	}
}

// describeTask writes one comment line (and, on a GPU, its entry's
// parameters) for task t. A serial task says that it runs on one thread
// and quotes its first statement: statements between parallel loops (a
// scalar computed before one) are a launch of their own, which the source
// does not show.
func describeTask(b *strings.Builder, t *lower.Task, e *kabi.Task, k *ir.Kernel, src source) {
	fmt.Fprintf(b, "// task %d: %s", t.Index, t.Kind)
	if t.Kind == lower.Serial {
		b.WriteString(" (one thread)")
	}
	if t.Group > 0 {
		fmt.Fprintf(b, ", group %d", t.Group)
	}
	if t.Pos.IsKnown() {
		fmt.Fprintf(b, ", at %s", t.Pos)
	}
	if t.Kind == lower.Serial {
		if q := src.quote(t.Pos); q != "" {
			b.WriteString(": " + q)
			if src.moreLines(t) {
				b.WriteString(" …")
			}
		}
	}
	for _, r := range t.Reductions {
		fmt.Fprintf(b, ", %s-range reduction (%s on %s)", r.Scope, r.Atomic.Op, r.Atomic.Array.Name)
	}
	b.WriteString("\n")
	if e == nil {
		return
	}
	grid := "1 block of 1 thread"
	switch t.Kind {
	case lower.Block:
		size := fmt.Sprintf("%d threads", e.BlockDim)
		if e.BlockDim == 0 {
			size = "threads from the launch's scalars"
		}
		count := "the launch's count of blocks"
		if e.HostTotal == nil {
			count = "the device's cap (the count known only on it)"
		}
		grid = fmt.Sprintf("one GPU block per qd.Blocks block, of %s; grid of %s, up to the device's cap, the entry striding over the rest", size, count)
		if e.SharedBytes > 0 {
			grid += fmt.Sprintf("; %d bytes of shared memory", e.SharedBytes)
		}
	case lower.Parallel:
		waves := e.Waves
		if waves <= 0 {
			waves = kabi.GridWaves
		}
		grid = fmt.Sprintf("blocks of %d threads; grid from the launch's extents, at most %d waves of the device", e.BlockDim, waves)
		if e.HostTotal == nil {
			grid = fmt.Sprintf("blocks of %d threads; grid of %d waves of the device (extents known only on it)", e.BlockDim, waves)
		}
	}
	fmt.Fprintf(b, "//   entry %s: %s\n", e.Entry, grid)
	for _, s := range e.Slots {
		fmt.Fprintf(b, "//     %s\n", slotText(s, k))
	}
}

// slotText names a parameter slot in the user's terms.
func slotText(s kabi.Slot, k *ir.Kernel) string {
	switch s.Kind {
	case kabi.TempsSlot:
		return "the launch's temporaries (locals shared between tasks)"
	case kabi.DimSlot:
		return fmt.Sprintf("len along dimension %d of %s (int64)", s.Dim, k.Params[s.Param].Name)
	case kabi.ArraySlot:
		return fmt.Sprintf("address of %s", k.Params[s.Param].Name)
	}
	p := k.Params[s.Param]
	return fmt.Sprintf("%s (%s, %d bytes)", p.Name, goTypes[p.Elem], s.Size)
}

// goTypes names the IR's scalar types as the user wrote them.
var goTypes = map[ir.Type]string{
	ir.Bool: "bool", ir.I32: "int32", ir.I64: "int64", ir.U32: "uint32",
	ir.U64: "uint64", ir.F32: "float32", ir.F64: "float64",
}

// printCompileErrors prints err one positioned error per line, as go vet
// does.
func printCompileErrors(w io.Writer, err error) {
	var list frontend.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Fprintln(w, e)
		}
		return
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintln(w, line)
	}
}
