package frontend

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// longSwitch is a kernel whose switch has n cases, each ending in
// fallthrough when falls is set.
func longSwitch(n int, falls bool) string {
	var b strings.Builder
	b.WriteString("package k\n\n//qd:kernel\nfunc sw(x []int32) {\n\tfor i := range len(x) {\n\t\tswitch x[i] {\n")
	for c := range n {
		fmt.Fprintf(&b, "\t\tcase %d:\n\t\t\tx[i] += %d\n", c, 7*c+1)
		if falls {
			b.WriteString("\t\t\tfallthrough\n")
		}
	}
	b.WriteString("\t\tdefault:\n\t\t\tx[i] = -1\n\t\t}\n\t}\n}\n")
	return b.String()
}

// A switch becomes IR of size linear in its cases, with or without
// fallthrough: each clause is translated once. Copying the clauses a case
// falls into made 2,000 falling cases exceed the statement limit (after
// 70 s spent finding the next clause again at every step).
func TestLongSwitchIsLinear(t *testing.T) {
	const n = 2000
	for _, falls := range []bool{false, true} {
		t.Run(fmt.Sprintf("fallthrough=%v", falls), func(t *testing.T) {
			ks, err := Parse("k.go", []byte(longSwitch(n, falls)))
			if err != nil {
				t.Fatal(err)
			}
			checkKernel(t, ks[0])
			nodes := 0
			ir.Inspect(ks[0].Body, func(ir.Node) bool { nodes++; return true })
			// A case is 10 nodes (an if, its test, the store with its
			// load and add); with fallthrough 20 (the chosen clause's
			// assignment and test too).
			if perCase := nodes / n; perCase > 24 {
				t.Errorf("%d IR nodes a case, want at most 24", perCase)
			}
		})
	}
}
