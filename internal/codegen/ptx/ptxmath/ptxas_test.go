package ptxmath

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// findPtxas looks for ptxas in $QD_PTXAS, on PATH, and where
// .ci/install-ptxas.sh puts it.
func findPtxas() string {
	if p := os.Getenv("QD_PTXAS"); p != "" {
		return p
	}
	if p, err := exec.LookPath("ptxas"); err == nil {
		return p
	}
	if h, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(h, ".cache", "qd-ptxas", "usr", "bin", "ptxas")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// allModule is one PTX module holding every function, each called from its
// own .entry that loads the arguments from global memory and stores the
// result.
func allModule(target string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, ".version 7.8\n.target %s\n.address_size 64\n\n", target)
	var entries strings.Builder
	for _, fn := range ir.Intrinsics() {
		for _, ty := range []ir.Type{ir.F32, ir.F64} {
			name, def, err := Func(fn, ty)
			if err != nil {
				continue
			}
			sb.WriteString(def)
			sb.WriteString("\n")
			t, sz := "f64", 8
			if ty == ir.F32 {
				t, sz = "f32", 4
			}
			args := []string{"%x0"}
			if fn.Arity() == 2 {
				args = append(args, "%x1")
			}
			fmt.Fprintf(&entries, ".visible .entry k_%s(.param .u64 p)\n{\n\t.reg .%s %%x<3>;\n\t.reg .b64 %%q<2>;\n", name, t)
			fmt.Fprintf(&entries, "\tld.param.u64 %%q0, [p];\n\tcvta.to.global.u64 %%q1, %%q0;\n\tld.global.%s %%x0, [%%q1];\n\tld.global.%s %%x1, [%%q1+%d];\n", t, t, sz)
			fmt.Fprintf(&entries, "\tcall (%%x2), %s, (%s);\n\tst.global.%s [%%q1], %%x2;\n\tret;\n}\n\n", name, strings.Join(args, ", "), t)
		}
	}
	return sb.String() + entries.String()
}

func TestPtxas(t *testing.T) {
	ptxas := findPtxas()
	if ptxas == "" {
		t.Skip("ptxas not found (set QD_PTXAS, put it on PATH, or run .ci/install-ptxas.sh): PTX text not assembled")
	}
	dir := t.TempDir()
	for _, target := range []string{"sm_80", "sm_90"} {
		src := filepath.Join(dir, target+".ptx")
		if err := os.WriteFile(src, []byte(allModule(target)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(ptxas, "-arch="+target, "-o", filepath.Join(dir, target+".cubin"), src).CombinedOutput()
		if err != nil {
			t.Fatalf("ptxas %s: %v\n%s", target, err, out)
		}
	}
}

// TestRenderPlain checks the text itself: no .approx, no calls, and
// deterministic output.
func TestRenderPlain(t *testing.T) {
	for _, fn := range ir.Intrinsics() {
		for _, ty := range []ir.Type{ir.F32, ir.F64} {
			name, def, err := Func(fn, ty)
			if err != nil {
				continue
			}
			if strings.Contains(def, ".approx") || strings.Contains(def, "call") {
				t.Errorf("%s uses .approx or call", name)
			}
			_, def2, _ := Func(fn, ty)
			if def != def2 {
				t.Errorf("%s: text is not deterministic", name)
			}
			if !strings.HasPrefix(def, ".func (.reg ."+ty.String()+" %ret) "+name+"(") {
				t.Errorf("%s: unexpected header %q", name, def[:60])
			}
		}
	}
}
