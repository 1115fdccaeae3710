package frontend

import (
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// TestValueConstructs checks the IR of the value constructs: the printed
// kernels must contain every wanted line (spaces trimmed) and none of the
// unwanted text.
func TestValueConstructs(t *testing.T) {
	const types = "type inner struct{ A [2]float32; B int32 }\n\ntype outer struct{ In inner; V qd.Vec2[float32] }\n\n" +
		"func (o *outer) Bump(d float32) { o.In.A[1] += d }\n\nfunc (i *inner) Inc() { i.B++ }\n\n" +
		"type Meters float32\n\nfunc (m *Meters) Double() { *m *= 2 }\n\n" +
		"func get(a [3]float32, i int) float32 { return a[i] }\n\n"
	tests := []struct {
		name, src string
		want, not []string
	}{
		{"leaves in Go's order", "//qd:kernel\nfunc k(x []float32) {\n\tvar o outer\n\tx[0] = o.V[1]\n}\n",
			[]string{"var o.In.A[0] f32", "var o.In.A[1] f32", "var o.In.B i32", "var o.V[0] f32", "var o.V[1] f32", "x[0] = o.V[1]"}, nil},
		{"field and element assignment", "//qd:kernel\nfunc k(x []float32) {\n\tvar o outer\n\to.In.A[1] = x[0]\n\to.V = qd.Vec2[float32]{1, 2}\n\to.V[0] *= 3\n\tx[0] = o.V[0] + o.In.A[1]\n}\n",
			[]string{"o.In.A[1] = x[0]", "o.V[0] = 1.0", "o.V[1] = 2.0", "o.V[0] = o.V[0] * 3.0"}, nil},
		{"pointer receiver on a field", "//qd:kernel\nfunc k(x []float32) {\n\tvar o outer\n\to.In.Inc()\n\to.Bump(x[0])\n\tx[0] = float32(o.In.B)\n}\n",
			[]string{"o.In.B = o.In.B + 1", "o.In.A[1] = o.In.A[1] + d"}, nil},
		{"pointer receiver on a dynamic element: copied in and out", "//qd:kernel\nfunc k(x []float32, j []int32) {\n\tvar a [2]inner\n\ta[j[0]].Inc()\n\tx[0] = float32(a[1].B)\n}\n",
			[]string{"var is#8 bool = tmp == 0", "var recv.B i32 = select(is#8, a[0].B, select(is#9, a[1].B, 0))", "recv.B = recv.B + 1", "if tmp == 0 {", "a[0].B = recv.B"}, nil},
		{"pointer receiver on an array parameter's element", "//qd:kernel\nfunc k(x []Meters) {\n\tfor i := range len(x) {\n\t\tx[i].Double()\n\t}\n}\n",
			[]string{"var x f32 = x[i]", "x = x * 2.0", "x[i] = x"}, nil},
		{"dynamic read", "//qd:kernel\nfunc k(x []float32, j []int) {\n\ta := [3]float32{1, 2, 3}\n\tx[0] = a[j[0]]\n}\n",
			[]string{"x[0] = select(tmp == 0, a[0], select(tmp == 1, a[1], select(tmp == 2, a[2], 0.0)))"}, nil},
		{"dynamic write", "//qd:kernel\nfunc k(x []float32, j []int) {\n\tvar a [2]float32\n\ta[j[0]] = x[0]\n\tx[1] = a[0]\n}\n",
			[]string{"var tmp#3 i64 = j[0]", "if tmp#3 == 0 {", "a[0] = tmp#4", "if tmp#3 == 1 {", "a[1] = tmp#4"}, []string{"select"}},
		{"constant index out of range once inlined: zero", "//qd:kernel\nfunc k(x []float32) {\n\ta := [3]float32{1, 2, 3}\n\tx[0] = get(a, 5)\n}\n",
			[]string{"x[0] = 0.0"}, nil},
		{"unrolled loops", "//qd:kernel\nfunc k(x []float32) {\n\tfor n := range len(x) {\n\t\tvar m qd.Mat2[float32]\n\t\tfor i := range 2 {\n\t\t\tfor j := 0; j < 2; j++ {\n\t\t\t\tm[i][j] = float32(i + 2*j)\n\t\t\t}\n\t\t}\n\t\tx[n] = m[1][1]\n\t}\n}\n",
			[]string{"m[0][0] = 0.0", "m[0][1] = 2.0", "m[1][0] = 1.0", "m[1][1] = 3.0"}, []string{"for var", "select", "if "}},
		{"a top-level loop over a constant stays parallel", "//qd:kernel\nfunc k(x []float32) {\n\tfor i := range 2 {\n\t\tvar m [2]float32\n\t\tm[i] = 1\n\t\tx[i] = m[0]\n\t}\n}\n",
			[]string{"parallel for i := range 2 {", "if i == 0 {"}, nil},
		{"a loop that indexes no local array stays a loop", "//qd:kernel\nfunc k(x []float32) {\n\tfor n := range len(x) {\n\t\ts := float32(0)\n\t\tfor i := range 3 {\n\t\t\ts += x[i]\n\t\t}\n\t\tx[n] = s\n\t}\n}\n",
			[]string{"for var i i64 = 0; i < 3; i = i + 1 {"}, nil},
		{"unrolled break and continue", "//qd:kernel\nfunc k(x []float32) {\n\tfor n := range len(x) {\n\t\tvar a [4]float32\n\t\tfor i := range 4 {\n\t\t\tif x[n] > float32(i) {\n\t\t\t\tcontinue\n\t\t\t}\n\t\t\tif x[n] < 0 {\n\t\t\t\tbreak\n\t\t\t}\n\t\t\ta[i] = 1\n\t\t}\n\t\tx[n] = a[3]\n\t}\n}\n",
			[]string{"a[0] = 1.0", "a[3] = 1.0"}, []string{"select", "i < 4"}},
		{"a loop too large to unroll", "//qd:kernel\nfunc k(x []float32, j []int) {\n\tfor n := range len(x) {\n\t\tvar a [8]float32\n\t\tfor i := range 200 {\n\t\t\ta[i%8] += x[i]\n\t\t\ta[(i+1)%8] -= x[i]\n\t\t\ta[(i+2)%8] *= 2\n\t\t\ta[(i+3)%8] += 1\n\t\t\ta[(i+4)%8] -= 1\n\t\t\ta[(i+5)%8] += 3\n\t\t}\n\t\tx[n] = a[j[0]]\n\t}\n}\n",
			[]string{"for var i i64 = 0; i < 200; i = i + 1 {"}, nil},
		{"comparison of values", "//qd:kernel\nfunc k(x []float32, b []bool) {\n\tu := qd.Vec2[float32]{x[0], 1}\n\tb[0] = u == qd.Vec2[float32]{1, 1}\n\tb[1] = u != u\n}\n",
			[]string{"b[0] = u[0] == 1.0 && u[1] == 1.0", "b[1] = u[0] != u[0] || u[1] != u[1]"}, nil},
		{"precision branch folded", "func eps[T qd.Float]() T {\n\te := T(0x1p-106)\n\tif T(1+1e-10) == 1 {\n\t\te = 0x1p-48\n\t}\n\treturn e\n}\n\n//qd:kernel\nfunc k(x []float32, y []float64) {\n\tx[0] = eps[float32]()\n\ty[0] = eps[float64]()\n}\n",
			[]string{"var e#1 f32 = 1.2325952e-32", "e#1 = 3.5527137e-15", "var e#2 f64 = 1.232595164407831e-32", "y[0] = e#2"}, []string{"if "}},
		{"constants converted to a type parameter, exactly", "func third[T qd.Float]() T { return T(1.0 / 3) }\n\n//qd:kernel\nfunc k(x []float32) {\n\tx[0] = third[float32]()\n}\n",
			[]string{"x[0] = 0.33333334"}, nil},
		{"the result of a call adopted, not copied", "//qd:kernel\nfunc k(x []float32) {\n\tm := qd.Ident3[float32]().Scale(x[0])\n\tx[1] = m[2][2]\n}\n",
			[]string{"var m[2][2] f32", "m[2][2] = 1.0 * s", "x[1] = m[2][2]"}, []string{"Scale[", "= r["}},
		{"swap of values", "//qd:kernel\nfunc k(x []float32) {\n\ta, b := qd.Vec2[float32]{x[0], 1}, qd.Vec2[float32]{2, 3}\n\ta, b = b, a.Neg()\n\tx[0] = a[0] + b[1]\n}\n",
			[]string{"var tmp#5 f32 = b[0]", "var tmp#7 f32 = -a[0]", "a[0] = tmp#5", "b[0] = tmp#7"}, nil},
		{"tail return hands a local over", "func mk(v float32) (p outer) {\n\tp.V[0] = v\n\treturn\n}\n\nfunc mk2(v float32) outer {\n\tvar p outer\n\tp.V[1] = v\n\treturn p\n}\n\n//qd:kernel\nfunc k(x []float32) {\n\ta := mk(x[0])\n\tb := mk2(x[1])\n\tx[0] = a.V[0] + b.V[1]\n}\n",
			[]string{"a.V[0] = v#1", "b.V[1] = v#7", "x[0] = a.V[0] + b.V[1]"}, []string{"= p."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ks, err := Parse("k.go", []byte(header+types+tc.src))
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			for _, k := range ks {
				checkKernel(t, k)
				out.WriteString(ir.Print(k))
			}
			checkLines(t, out.String(), tc.want, tc.not)
		})
	}
}

// TestParseLibraryConcurrent parses kernels that inline the library from
// several goroutines: the library's types.Info and its generic types are
// shared by every Parse; run with -race.
func TestParseLibraryConcurrent(t *testing.T) {
	src := []byte(header + "//qd:kernel\nfunc k(x []float64, y []float32) {\n\tfor i := range len(x) {\n" +
		"\t\tm := qd.Mat3[float64]{{x[i], 1, 0}, {0, 2, 1}, {1, 0, 3}}\n\t\tr, s := qd.PolarDecompose3(m)\n" +
		"\t\tf := qd.Mat3[float32]{{y[i], 1, 0}, {0, 2, 1}, {1, 0, 3}}\n\t\tv, _ := qd.SymEig3(f)\n" +
		"\t\tx[i] = r.Mul(s).Det()\n\t\ty[i] = v.Sum()\n\t}\n}\n")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if _, err := Parse("k.go", src); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
