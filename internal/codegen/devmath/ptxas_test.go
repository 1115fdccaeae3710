package devmath

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/ptxas"
)

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
	tool, err := ptxas.Find()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	for _, sm := range tool.Archs {
		if sm < 80 {
			continue // the functions use .version 7.8 features of sm_80 and later
		}
		if err := tool.Assemble(dir, "devmath", sm, allModule(fmt.Sprintf("sm_%d", sm))); err != nil {
			t.Fatal(err)
		}
	}
}
