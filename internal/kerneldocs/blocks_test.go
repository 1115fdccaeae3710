package kerneldocs

import (
	"strings"
	"testing"
)

// TestBlocks reads the three kinds of blocks and refuses a misspelt one.
func TestBlocks(t *testing.T) {
	md := "# T\n\n```go\n//qd:kernel\nfunc k(x []int) {}\n```\n\n```text\nout\n```\n\n```go refused\nx\n```\n\n```go\na := 1\n```\n"
	blocks, err := Blocks([]byte(md))
	if err != nil {
		t.Fatal(err)
	}
	want := []Block{
		{Example, 4, "//qd:kernel\nfunc k(x []int) {}\n"},
		{Refused, 13, "x\n"},
		{Snippet, 17, "a := 1\n"},
	}
	if len(blocks) != len(want) {
		t.Fatalf("got %d blocks, want %d: %+v", len(blocks), len(want), blocks)
	}
	for i := range want {
		if blocks[i] != want[i] {
			t.Errorf("block %d: got %+v, want %+v", i, blocks[i], want[i])
		}
	}
	for _, bad := range []string{"```go refuse\nx\n```\n", "```go\nx\n"} {
		if _, err := Blocks([]byte(bad)); err == nil {
			t.Errorf("Blocks(%q) succeeds, want an error", bad)
		}
	}
}

// TestRewrite: top-level names get the prefix, a local that shadows one
// keeps its name, qd's additive atomics are recorded, imports go.
func TestRewrite(t *testing.T) {
	text := `import "github.com/quadrants-go/qd"

const n = 2

func twice(v float32) float32 { return n * v }

//qd:kernel
func k(x []float32) {
	for i := range len(x) {
		n := twice(x[i])
		qd.AtomicAdd(&x[0], n)
	}
}
`
	got, kernels, _, err := rewrite(Block{Kind: Example, Line: 1, Text: text}, "p_")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"const p_n = 2", "func p_twice(v float32) float32 { return p_n * v }",
		"func p_k(x []float32)", "n := p_twice(x[i])", "recordAdd(&x[0], n)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the rewritten example lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "import") {
		t.Errorf("the rewritten example keeps its import:\n%s", got)
	}
	if len(kernels) != 1 || kernels[0] != "k" {
		t.Errorf("kernels %v, want [k]", kernels)
	}
}
