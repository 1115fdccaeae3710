package csrc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/gosem"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// The generated C runs the whole table of Go-semantics rules (package
// codegen/gosem) on the host: the entries of every case's kernels (scalar
// parameters, and constants the compiler may fold), with the prelude's
// Go-semantics helpers and host stand-ins for the vendor part, compiled
// by the host's C++ compiler at -O2 and called by a main that prints each
// result. The entries are the same text for AMD and for NVRTC; only the
// vendor prelude differs, which the AMD and CUDA compiles check.

// hostEntries stands in for the vendor prelude's entry qualifiers and
// thread indices: one thread of one block.
const hostEntries = `#define QD_KERNEL extern "C"
#define QD_BOUNDS(block)
static qd_u32 qd_tid(void) { return 0; }
static qd_u32 qd_bid(void) { return 0; }
static qd_u32 qd_bdim(void) { return 1; }
static qd_u32 qd_gdim(void) { return 1; }
`

func TestGoSemanticsOnHost(t *testing.T) {
	cxx, err := exec.LookPath("c++")
	if err != nil {
		t.Skipf("no host C++ compiler (c++): the generated C is NOT run against the Go-semantics table: %v", err)
	}
	forms := []gosem.Form{gosem.Params, gosem.Consts}
	u, err := NewUnit(mustTarget(t, "gfx90a"))
	if err != nil {
		t.Fatal(err)
	}
	var calls strings.Builder
	for i, c := range gosem.Cases {
		for _, f := range forms {
			k := c.Kernel(fmt.Sprintf("case%d_%v", i, f), f)
			plan, err := lower.Lower(k)
			if err != nil {
				t.Fatal(err)
			}
			layout, err := kabi.Layout(plan)
			if err == nil {
				err = u.Add(plan, layout)
			}
			if err != nil {
				t.Fatalf("%v, %v: %v", c, f, err)
			}
			writeCall(&calls, c, k, layout)
		}
	}
	var src strings.Builder
	src.WriteString("#include <stdio.h>\n" + hostVendor + hostEntries + commonHelpers())
	src.WriteString(strings.Join(u.entries, "\n"))
	src.WriteString("\nint main(void) {\n" + calls.String() + "\treturn 0;\n}\n")
	dir := t.TempDir()
	file, exe := filepath.Join(dir, "gosem.cc"), filepath.Join(dir, "gosem")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cxx, "-std=c++17", "-O2", "-ffp-contract=off", "-fno-strict-aliasing", "-o", exe, file).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, Numbered(src.String()))
	}
	var stdout bytes.Buffer
	cmd := exec.Command(exe)
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(stdout.String())
	if len(lines) != len(gosem.Cases)*len(forms) {
		t.Fatalf("the program printed %d results for %d calls", len(lines), len(gosem.Cases)*len(forms))
	}
	for fi, f := range forms {
		n := 0
		for _, err := range gosem.Verify(gosem.C, func(c gosem.Case) gosem.Result {
			bits, err := strconv.ParseUint(lines[n*len(forms)+fi], 16, 64)
			n++
			return gosem.Result{Bits: bits, Err: err}
		}) {
			t.Errorf("%v: %v", f, err)
		}
	}
}

// writeCall writes the call of k's one entry with c's operands, and the
// printing of its result's bits, as ir.Const holds them.
func writeCall(sb *strings.Builder, c gosem.Case, k *ir.Kernel, layout *kabi.Module) {
	rt := c.Result()
	var args []string
	for _, s := range layout.Tasks[0].Slots {
		switch p := k.Params[s.Param]; {
		case s.Kind == kabi.ScalarSlot && p.Name == "a":
			args = append(args, literal(p.Elem, c.A))
		case s.Kind == kabi.ScalarSlot && p.Name == "b":
			args = append(args, literal(p.Elem, c.B))
		case s.Kind == kabi.ArraySlot && p.Name == "out":
			args = append(args, "&o")
		default:
			panic(fmt.Sprintf("slot %+v of %s", s, k.Name))
		}
	}
	bits := map[ir.Type]string{ir.I32: "(qd_u64)(qd_i64)o", ir.I64: "(qd_u64)o", ir.U32: "(qd_u64)o", ir.U64: "o",
		ir.F32: "(qd_u64)qd_bits_f32(o)", ir.F64: "qd_bits_f64(o)",
		ir.I8: "(qd_u64)(qd_i64)o", ir.I16: "(qd_u64)(qd_i64)o", ir.U8: "(qd_u64)o", ir.U16: "(qd_u64)o"}[rt]
	fmt.Fprintf(sb, "\t{ %s o = 0; %s(%s); printf(\"%%llx\\n\", %s); }\n", memType(rt), layout.Tasks[0].Entry, strings.Join(args, ", "), bits)
}
