package frontend

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

const header = "package k\n\nimport (\n\t\"math\"\n\n\t\"github.com/quadrants-go/qd\"\n)\n\nvar _ = math.Pi\nvar _ = qd.Sqrt[float32]\n\n"

// TestConstructs checks the IR of single constructs: the printed kernel must
// contain every wanted line (spaces trimmed) and none of the unwanted ones.
func TestConstructs(t *testing.T) {
	tests := []struct {
		name, src string
		want, not []string
	}{
		{"top-level range is parallel", "//qd:kernel\nfunc k(x []float32) {\n\tfor i := range len(x) {\n\t\tx[i] = 0\n\t}\n}\n",
			[]string{"parallel for i := range len(x, 0) {"}, nil},
		{"3-clause at top level is serial", "//qd:kernel\nfunc k(x []float32) {\n\tfor i := 0; i < len(x); i++ {\n\t\tx[i] = 0\n\t}\n}\n",
			[]string{"for var i i64 = 0; i < len(x, 0); i = i + 1 {"}, []string{"parallel"}},
		{"nested range is serial", "//qd:kernel\nfunc k(x [][]float32) {\n\tfor i := range len(x) {\n\t\tfor j := range len(x[0]) {\n\t\t\tx[i][j] = 1\n\t\t}\n\t}\n}\n",
			[]string{"parallel for i := range len(x, 0) {", "for var j i64 = 0; j < len(x, 1); j = j + 1 {"}, nil},
		{"int32 range var", "//qd:kernel\nfunc k(x []float32, n int32) {\n\tfor i := range n {\n\t\tx[i] = 0\n\t}\n}\n",
			[]string{"parallel for i := range n {"}, nil},
		{"blank loop vars", "//qd:kernel\nfunc k(x []int32) {\n\tfor range qd.NDRange(2, 3) {\n\t\tqd.AtomicAdd(&x[0], 1)\n\t}\n}\n",
			[]string{"parallel for _#1, _#2 := range ndrange(2, 3) {", "atomic_add(&x[0], 1)"}, nil},
		{"block dim", "//qd:kernel\nfunc k(x []float32) {\n\tqd.LoopConfig(qd.BlockDim(64))\n\tfor i := range len(x) {\n\t\tx[i] = 0\n\t}\n}\n",
			[]string{"parallel(block_dim=64) for i := range len(x, 0) {"}, nil},
		{"switch break leaves the switch", "//qd:kernel\nfunc k(x []int) {\n\tfor i := range len(x) {\n\t\tswitch x[i] {\n\t\tcase 1:\n\t\t\tbreak\n\t\tcase 2:\n\t\t\tx[i] = 3\n\t\t}\n\t}\n}\n",
			[]string{"L1:", "for {", "var tmp i64 = x[i]", "if tmp == 1 {", "break L1", "} else if tmp == 2 {"}, nil},
		{"fallthrough", "//qd:kernel\nfunc k(x []int) {\n\tfor i := range len(x) {\n\t\tswitch {\n\t\tcase i > 1:\n\t\t\tx[i] = 1\n\t\t\tfallthrough\n\t\tdefault:\n\t\t\tx[i] += 2\n\t\t}\n\t}\n}\n",
			[]string{"if i > 1 {", "x[i] = 1", "x[i] = x[i] + 2"}, []string{"for {"}},
		{"swap", "//qd:kernel\nfunc k(x []int) {\n\tfor i := range len(x) {\n\t\ta, b := i, 2*i\n\t\ta, b = b, a\n\t\tx[i] = a - b\n\t}\n}\n",
			[]string{"var tmp#4 i64 = b", "var tmp#5 i64 = a", "a = tmp#4", "b = tmp#5"}, nil},
		{"parallel continue", "//qd:kernel\nfunc k(x []int) {\n\tfor i := range len(x) {\n\t\tif i == 0 {\n\t\t\tcontinue\n\t\t}\n\t\tx[i] = 1\n\t}\n}\n",
			[]string{"L1:", "for {", "break L1"}, []string{"continue"}},
		{"user StreamParallel is a helper", "func StreamParallel(f func()) { f() }\n\nfunc twice(x int) int { return 2 * x }\n\n//qd:kernel\nfunc k(x []int) {\n\tfor i := range len(x) {\n\t\tx[i] = twice(i)\n\t}\n}\n",
			[]string{"x[i] = 2 * i"}, nil},
		{"stream parallel groups", "//qd:kernel\nfunc k(x, y []int) {\n\tqd.StreamParallel(func() {\n\t\tfor i := range len(x) {\n\t\t\tx[i] = 1\n\t\t}\n\t})\n\tqd.StreamParallel(func() {\n\t\tfor i := range len(y) {\n\t\t\ty[i] = 2\n\t\t}\n\t})\n}\n",
			[]string{"group {", "parallel for i#1 := range len(x, 0) {", "parallel for i#2 := range len(y, 0) {"}, nil},
		{"lazy &&", "func get(x []int, i int) int { return x[i] }\n\n//qd:kernel\nfunc k(x []int, n int) {\n\tfor i := range n {\n\t\tif i < len(x) && get(x, i) > 0 {\n\t\t\tx[0] = 1\n\t\t}\n\t}\n}\n",
			[]string{"var cond bool = i < len(x, 0)", "if cond {", "cond = get > 0"}, nil},
		{"constants", "const c = 3\nconst f32 float32 = 1.5\n\n//qd:kernel\nfunc k(x []float32, y []uint32) {\n\tfor i := range c {\n\t\tx[i] = f32 * 2\n\t\ty[i] = 1 << 31\n\t}\n}\n",
			[]string{"parallel for i := range 3 {", "x[i] = 3.0", "y[i] = 2147483648"}, nil},
		{"len of rows", "//qd:kernel\nfunc k(x [][][]float32, n []int) {\n\tn[0] = len(x) + len(x[0]) + len(x[0][0])\n}\n",
			[]string{"n[0] = len(x, 0) + len(x, 1) + len(x, 2)"}, nil},
		{"atomic statement", "//qd:kernel\nfunc k(x []float32) {\n\tfor i := range len(x) {\n\t\tqd.AtomicAdd(&x[0], x[i])\n\t}\n}\n",
			[]string{"atomic_add(&x[0], x[i])"}, nil},
		{"early return helper in qd.Serial: loop under if is serial", "func f(x []int) {\n\tif len(x) == 0 {\n\t\treturn\n\t}\n\tfor i := range len(x) {\n\t\tx[i] = 1\n\t}\n}\n\n//qd:kernel\nfunc k(x []int) {\n\tqd.Serial(func() { f(x) })\n}\n",
			[]string{"if len(x, 0) == 0 {", "} else {", "for var i i64 = 0; i < len(x, 0); i = i + 1 {"}, []string{"parallel"}},
		{"range value copy", "//qd:kernel\nfunc k(x []int) {\n\tfor i := range len(x) {\n\t\ti *= 2\n\t\tx[0] = i\n\t}\n}\n",
			[]string{"var i#2 i64 = i#1", "i#2 = i#2 * 2"}, nil},
		{"math int constants", "//qd:kernel\nfunc k(x []int32) {\n\tx[0] = math.MaxInt32\n\tx[1] = math.MinInt32\n}\n",
			[]string{"x[0] = 2147483647", "x[1] = -2147483648"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ks, err := Parse("k.go", []byte(header+tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if len(ks) != 1 {
				t.Fatalf("got %d kernels", len(ks))
			}
			checkKernel(t, ks[0])
			checkLines(t, ir.Print(ks[0]), tc.want, tc.not)
		})
	}
}

// checkLines fails t unless the printed IR out holds every line of want
// (spaces trimmed) and none of the text of not.
func checkLines(t *testing.T, out string, want, not []string) {
	t.Helper()
	lines := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	for _, w := range want {
		if !lines[w] {
			t.Errorf("missing line %q in\n%s", w, out)
		}
	}
	for _, n := range not {
		if strings.Contains(out, n) {
			t.Errorf("unexpected %q in\n%s", n, out)
		}
	}
}

// TestHostCodeIgnored checks that host code in a kernel file may use other
// packages and the rest of its package: only kernels are checked.
func TestHostCodeIgnored(t *testing.T) {
	src := `package main

import (
	"fmt"
	"os"

	"github.com/quadrants-go/qd"
)

//qd:kernel
func k(x []float32) {
	for i := range len(x) {
		x[i] = qd.Abs(x[i])
	}
}

func main() {
	p, _ := qd.Init()
	fmt.Println(p, os.Args, undefinedElsewhere)
}
`
	ks, err := Parse("main.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 1 || ks[0].Name != "k" {
		t.Fatalf("kernels: %v", ks)
	}
}

// TestForeignPackageInKernel checks the message for another package used in
// a kernel.
func TestForeignPackageInKernel(t *testing.T) {
	src := "package k\n\nimport \"strconv\"\n\n//qd:kernel\nfunc k(x []int) {\n\tx[0], _ = strconv.Atoi(\"1\")\n}\n"
	_, err := Parse("k.go", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "k.go:7:12: strconv.Atoi: package strconv cannot be used in kernels") {
		t.Fatalf("got %v", err)
	}
}

// TestExamplesParse parses the root package's examples: kernels written as
// documentation must compile too.
func TestExamplesParse(t *testing.T) {
	src, err := os.ReadFile("../../kernelapi_example_test.go")
	if err != nil {
		t.Skip(err)
	}
	ks, err := Parse("kernelapi_example_test.go", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 4 {
		t.Fatalf("got %d kernels, want 4", len(ks))
	}
	for _, k := range ks {
		checkKernel(t, k)
	}
}

// TestParseConcurrent runs Parse from several goroutines (the embedded
// packages are shared); run with -race.
func TestParseConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if _, err := Parse("step.go", kernel20); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestNoKernels: a file without kernels is not an error.
func TestNoKernels(t *testing.T) {
	ks, err := Parse("k.go", []byte("package k\n\nfunc f() {}\n"))
	if err != nil || len(ks) != 0 {
		t.Fatalf("got %v, %v", ks, err)
	}
}
