package frontend

import (
	"errors"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// serialHead is the start of every source of the tests here: a kernel's
// line numbers start at 7.
const serialHead = "package k\n\nimport \"github.com/quadrants-go/qd\"\n\nvar _ = qd.Serial\n\n"

// serialIfMsg is the whole error of a range loop under an if, as the user
// reads it; the other cases check fragments.
const serialIfMsg = "kernel k: range loop inside an if statement runs serially, on one thread; qd rejects it: " +
	"move the loop to the top level of the kernel (or of a qd.StreamParallel block) and put the condition inside the loop body; " +
	"for one thread on purpose, wrap the code in qd.Serial(func() { ... })"

// TestSerialRangeErrors: a range loop that would run its whole range on
// the one thread of a serial task (under an if, in a serial loop or a
// switch at the top level, or in a helper called there) is refused at the
// loop, once, with what made it serial and how to make it parallel or keep
// it serial on purpose; so is misuse of qd.Serial. want is every error, in
// order, as "line:col: fragment" of "k.go:line:col: message".
func TestSerialRangeErrors(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"under if", "//qd:kernel\nfunc k(x []float32, on bool) {\n\tif on {\n\t\tfor i := range len(x) {\n\t\t\tx[i] = 0\n\t\t}\n\t}\n}\n",
			[]string{"10:3: " + serialIfMsg}},
		{"under else if", "//qd:kernel\nfunc k(x []float32, n int) {\n\tif n == 0 {\n\t\tx[0] = 1\n\t} else if n > 1 {\n\t\tfor i := range n {\n\t\t\tx[i] = 0\n\t\t}\n\t}\n}\n",
			[]string{"12:3: kernel k: range loop inside an if statement runs serially"}},
		{"in a serial for", "//qd:kernel\nfunc k(x []float32) {\n\tfor j := 0; j < 4; j++ {\n\t\tfor i := range len(x) {\n\t\t\tx[i] += 1\n\t\t}\n\t}\n}\n",
			[]string{"10:3: kernel k: range loop inside a serial loop runs serially, on one thread; qd rejects it: move the loop to the top level of the kernel (or of a qd.StreamParallel block), making the outer loop one more dimension of a qd.NDRange loop, or launch the kernel once per outer iteration; for one thread on purpose"}},
		{"in a condition-only for", "//qd:kernel\nfunc k(x []float32, n int) {\n\tm := n\n\tfor m > 0 {\n\t\tfor i := range m {\n\t\t\tx[i] = 0\n\t\t}\n\t\tm--\n\t}\n}\n",
			[]string{"11:3: kernel k: range loop inside a serial loop"}},
		{"inner loops are not reported again", "//qd:kernel\nfunc k(m [][]float32) {\n\tfor r := 0; r < 2; r++ {\n\t\tfor i := range len(m) {\n\t\t\tfor j := range len(m[0]) {\n\t\t\t\tm[i][j] = 0\n\t\t\t}\n\t\t}\n\t}\n}\n",
			[]string{"10:3: kernel k: range loop inside a serial loop"}},
		{"in a switch", "//qd:kernel\nfunc k(x []float32, n int) {\n\tswitch n {\n\tcase 1:\n\t\tfor i := range len(x) {\n\t\t\tx[i] = 1\n\t\t}\n\t}\n}\n",
			[]string{"11:3: kernel k: range loop inside a switch statement runs serially, on one thread; qd rejects it: move the loop to the top level of the kernel (or of a qd.StreamParallel block) and put the switch inside the loop body"}},
		{"constant count", "//qd:kernel\nfunc k(x []float32, on bool) {\n\tif on {\n\t\tfor k := range 4 {\n\t\t\tx[k] = 0\n\t\t}\n\t}\n}\n",
			[]string{"10:3: " + serialIfMsg}},
		{"ndrange", "//qd:kernel\nfunc k(m [][]float32, on bool) {\n\tif on {\n\t\tfor i, j := range qd.NDRange(len(m), len(m[0])) {\n\t\t\tm[i][j] = 0\n\t\t}\n\t}\n}\n",
			[]string{"10:3: " + serialIfMsg}},
		{"array parameter, labelled", "//qd:kernel\nfunc k(x []float32, on bool) {\n\tif on {\n\tl:\n\t\tfor i, v := range x {\n\t\t\tif v < 0 {\n\t\t\t\tcontinue l\n\t\t\t}\n\t\t\tx[i] = 0\n\t\t}\n\t}\n}\n",
			[]string{"11:3: " + serialIfMsg}},
		{"in a local array's loop", "//qd:kernel\nfunc k(x []float32) {\n\tfor _, s := range [2]float32{1, 2} {\n\t\tfor i := range len(x) {\n\t\t\tx[i] *= s\n\t\t}\n\t}\n}\n",
			[]string{"10:3: kernel k: range loop inside a serial loop"}},
		{"in a stream-parallel block", "//qd:kernel\nfunc k(x []float32, on bool) {\n\tqd.StreamParallel(func() {\n\t\tif on {\n\t\t\tfor i := range len(x) {\n\t\t\t\tx[i] = 0\n\t\t\t}\n\t\t}\n\t})\n}\n",
			[]string{"11:4: " + serialIfMsg}},
		{"helper under if", "func clear(x []float32) {\n\tfor i := range len(x) {\n\t\tx[i] = 0\n\t}\n}\n\n//qd:kernel\nfunc k(x []float32, on bool) {\n\tif on {\n\t\tclear(x)\n\t}\n}\n",
			[]string{"8:2: kernel k: range loop inside an if statement in helper clear (called at k.go:16:3) runs serially, on one thread; qd rejects it"}},
		{"helper's own if", "func clear(x []float32, on bool) {\n\tif on {\n\t\tfor i := range len(x) {\n\t\t\tx[i] = 0\n\t\t}\n\t}\n}\n\n//qd:kernel\nfunc k(x []float32, on bool) {\n\tclear(x, on)\n}\n",
			[]string{"9:3: kernel k: range loop inside an if statement in helper clear (called at k.go:17:2) runs serially"}},
		{"method", "type buf struct{ n int }\n\nfunc (b buf) clear(x []float32) {\n\tif b.n > 0 {\n\t\tfor i := range b.n {\n\t\t\tx[i] = 0\n\t\t}\n\t}\n}\n\n//qd:kernel\nfunc k(x []float32) {\n\tbuf{len(x)}.clear(x)\n}\n",
			[]string{"11:3: kernel k: range loop inside an if statement in method buf.clear (called at k.go:19:2) runs serially"}},
		{"helper after an early return", "func clear(x []float32) {\n\tif len(x) == 0 {\n\t\treturn\n\t}\n\tfor i := range len(x) {\n\t\tx[i] = 0\n\t}\n}\n\n//qd:kernel\nfunc k(x []float32) {\n\tclear(x)\n}\n",
			[]string{"11:2: kernel k: range loop after an early return in helper clear (called at k.go:18:2) runs serially, on one thread (it runs only when the return does not); qd rejects it: move the loop to the top level of the kernel (or of a qd.StreamParallel block) and put the return's condition inside the loop body"}},
		{"helper returning from a loop", "func clear(x []float32) {\n\tfor j := 0; j < 2; j++ {\n\t\tif x[j] > 0 {\n\t\t\treturn\n\t\t}\n\t}\n\tfor i := range len(x) {\n\t\tx[i] = 0\n\t}\n}\n\n//qd:kernel\nfunc k(x []float32) {\n\tclear(x)\n}\n",
			[]string{"13:2: kernel k: range loop after an early return in helper clear (called at k.go:20:2)"}},
		{"right operand of &&", "func has(x []float32) bool {\n\tfound := false\n\tfor i := range len(x) {\n\t\tif x[i] > 0 {\n\t\t\tfound = true\n\t\t}\n\t}\n\treturn found\n}\n\n//qd:kernel\nfunc k(x []float32, on bool) {\n\tok := on && has(x)\n\tif ok {\n\t\tx[0] = 1\n\t}\n}\n",
			[]string{"9:2: kernel k: range loop in the right operand of && or || in helper has (called at k.go:19:14) runs serially, on one thread (it runs only when the left operand lets it); qd rejects it: call the helper in a statement of its own at the top level of the kernel, before the && or ||"}},
		{"serial argument not a literal", "func body() {}\n\n//qd:kernel\nfunc k(x []float32) {\n\tqd.Serial(body)\n}\n",
			[]string{"11:12: kernel k: the argument of qd.Serial must be a function literal: qd.Serial(func() { ... })"}},
		{"serial literal with a parameter", "//qd:kernel\nfunc k(x []float32) {\n\tqd.Serial(func(i int) { x[i] = 0 })\n}\n",
			[]string{"9:12: cannot use (func(i int) literal) (value of type func(i int)) as func() value in argument to qd.Serial"}},
		{"serial literal with a result", "//qd:kernel\nfunc k(x []float32) {\n\tqd.Serial(func() int { return 0 })\n}\n",
			[]string{"9:12: cannot use (func() int literal) (value of type func() int) as func() value in argument to qd.Serial"}},
		{"serial as a value", "//qd:kernel\nfunc k(x []float32) {\n\tf := qd.Serial\n\tf(func() {})\n}\n",
			[]string{"9:2: kernel k: variable f has function type func(body func()); function values are not supported in kernels",
				"9:7: kernel k: function values are not supported in kernels; call qd.Serial directly"}},
		{"return in a serial loop", "//qd:kernel\nfunc k(x []float32) {\n\tqd.Serial(func() {\n\t\tfor i := 0; i < len(x); i++ {\n\t\t\tif x[i] < 0 {\n\t\t\t\treturn\n\t\t\t}\n\t\t\tx[i] = 0\n\t\t}\n\t})\n}\n",
			[]string{"12:5: kernel k: return inside qd.Serial is only supported where it ends the function literal"}},
		{"stream-parallel inside serial", "//qd:kernel\nfunc k(x []float32) {\n\tqd.Serial(func() {\n\t\tqd.StreamParallel(func() {\n\t\t\tx[0] = 1\n\t\t})\n\t})\n}\n",
			[]string{"10:3: kernel k: qd.StreamParallel cannot be used inside qd.Serial"}},
		{"loop config inside serial", "//qd:kernel\nfunc k(x []float32) {\n\tqd.Serial(func() {\n\t\tqd.LoopConfig(qd.BlockDim(64))\n\t\tfor i := range len(x) {\n\t\t\tx[i] = 0\n\t\t}\n\t})\n}\n",
			[]string{"10:3: kernel k: qd.LoopConfig must be a statement at the top level of the kernel"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("k.go", []byte(serialHead+c.src))
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Parse: %v, want %d errors", err, len(c.want))
			}
			if len(list) != len(c.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(list), len(c.want), err)
			}
			for i, w := range c.want {
				if got := list[i].Error(); !strings.HasPrefix(got, "k.go:"+w) {
					t.Errorf("error %d:\n%s\nwant it to start\nk.go:%s", i, got, w)
				}
			}
		})
	}
}

// TestSerialRangeAllowed: range loops that are serial as meant compile:
// inside a parallel loop, over a local array, in the value library, and
// inside qd.Serial wherever it stands; qd.Serial's statements are emitted
// in place, a return may end its literal, and inside a parallel loop it
// changes nothing.
func TestSerialRangeAllowed(t *testing.T) {
	cases := []struct {
		name, src string
		want, not []string
	}{
		{"in a parallel loop, under if", "//qd:kernel\nfunc k(m [][]float32, on bool) {\n\tfor i := range len(m) {\n\t\tif on {\n\t\t\tfor j := range len(m[0]) {\n\t\t\t\tm[i][j] = 0\n\t\t\t}\n\t\t}\n\t}\n}\n",
			[]string{"parallel for i := range len(m, 0) {", "for var j i64 = 0; j < len(m, 1); j = j + 1 {"}, nil},
		{"local array under if", "//qd:kernel\nfunc k(x []float32, on bool) {\n\tif on {\n\t\tfor k, v := range [3]float32{1, 2, 3} {\n\t\t\tx[k] = v\n\t\t}\n\t}\n}\n",
			[]string{"if on {", "var range[2] f32 = 3.0"}, []string{"parallel", "for "}},
		{"library under if", "//qd:kernel\nfunc k(x []float32, on bool) {\n\tif on {\n\t\ta := qd.Mat3[float32]{{x[0], 0, 0}, {0, 1, 0}, {0, 0, 1}}\n\t\tb := a.Add(a)\n\t\tx[0] = b[0][0]\n\t}\n}\n",
			[]string{"if on {"}, []string{"parallel"}},
		{"serial under if", "//qd:kernel\nfunc k(x []float32, on bool) {\n\tif on {\n\t\tqd.Serial(func() {\n\t\t\tfor i := range len(x) {\n\t\t\t\tx[i] = 0\n\t\t\t}\n\t\t})\n\t}\n}\n",
			[]string{"if on {", "for var i i64 = 0; i < len(x, 0); i = i + 1 {"}, []string{"parallel"}},
		{"serial at the top level", "//qd:kernel\nfunc k(x []float32, on bool) {\n\tqd.Serial(func() {\n\t\tif on {\n\t\t\tfor i := range len(x) {\n\t\t\t\tx[i] = 0\n\t\t\t}\n\t\t}\n\t})\n\tfor i := range len(x) {\n\t\tx[i] += 1\n\t}\n}\n",
			[]string{"for var i#1 i64 = 0; i#1 < len(x, 0); i#1 = i#1 + 1 {", "parallel for i#2 := range len(x, 0) {"}, nil},
		{"serial around a serial for", "//qd:kernel\nfunc k(x []float32) {\n\tqd.Serial(func() {\n\t\tfor j := 0; j < 3; j++ {\n\t\t\tfor i := range len(x) {\n\t\t\t\tx[i] += float32(j)\n\t\t\t}\n\t\t}\n\t})\n}\n",
			[]string{"for var i i64 = 0; i < len(x, 0); i = i + 1 {"}, []string{"parallel"}},
		{"serial with a constant count", "//qd:kernel\nfunc k(x []float32, on bool) {\n\tif on {\n\t\tqd.Serial(func() {\n\t\t\tfor k := range 2 {\n\t\t\t\tx[k] = 1\n\t\t\t}\n\t\t})\n\t}\n}\n",
			nil, []string{"parallel"}},
		{"serial in a helper", "func clear(x []float32, on bool) {\n\tqd.Serial(func() {\n\t\tif on {\n\t\t\tfor i := range len(x) {\n\t\t\t\tx[i] = 0\n\t\t\t}\n\t\t}\n\t})\n}\n\n//qd:kernel\nfunc k(x []float32, on bool) {\n\tclear(x, on)\n}\n",
			[]string{"for var i i64 = 0; i < len(x, 0); i = i + 1 {"}, []string{"parallel"}},
		{"serial around a helper", "func clear(x []float32) {\n\tfor i := range len(x) {\n\t\tx[i] = 0\n\t}\n}\n\n//qd:kernel\nfunc k(x []float32) {\n\tqd.Serial(func() { clear(x) })\n}\n",
			[]string{"for var i i64 = 0; i < len(x, 0); i = i + 1 {"}, []string{"parallel"}},
		{"nested serial", "//qd:kernel\nfunc k(x []float32) {\n\tqd.Serial(func() {\n\t\tqd.Serial(func() {\n\t\t\tfor i := range len(x) {\n\t\t\t\tx[i] = 0\n\t\t\t}\n\t\t})\n\t})\n}\n",
			[]string{"for var i i64 = 0; i < len(x, 0); i = i + 1 {"}, []string{"parallel"}},
		{"serial in a parallel loop", "//qd:kernel\nfunc k(x []float32) {\n\tfor i := range len(x) {\n\t\tqd.Serial(func() {\n\t\t\tx[i] = 2 * x[i]\n\t\t})\n\t}\n}\n",
			[]string{"parallel for i := range len(x, 0) {", "x[i] = 2.0 * x[i]"}, nil},
		{"return ends the literal", "//qd:kernel\nfunc k(x []float32, on bool) {\n\tqd.Serial(func() {\n\t\tif on {\n\t\t\treturn\n\t\t}\n\t\tfor i := range len(x) {\n\t\t\tx[i] = 0\n\t\t}\n\t})\n\tfor i := range len(x) {\n\t\tx[i] += 1\n\t}\n}\n",
			[]string{"if on {", "} else {", "for var i#1 i64 = 0; i#1 < len(x, 0); i#1 = i#1 + 1 {", "parallel for i#2 := range len(x, 0) {"}, nil},
		{"return in a helper's literal", "func clear(x []float32, on bool) {\n\tqd.Serial(func() {\n\t\tif !on {\n\t\t\treturn\n\t\t}\n\t\tfor i := range len(x) {\n\t\t\tx[i] = 0\n\t\t}\n\t})\n\tx[0] = 1\n}\n\n//qd:kernel\nfunc k(x []float32, on bool) {\n\tclear(x, on)\n}\n",
			[]string{"if !on {", "} else {", "x[0] = 1.0"}, []string{"parallel"}},
		{"serial in a stream-parallel block", "//qd:kernel\nfunc k(x, y []float32) {\n\tqd.StreamParallel(func() {\n\t\tqd.Serial(func() {\n\t\t\tfor i := range len(x) {\n\t\t\t\tx[i] = 0\n\t\t\t}\n\t\t})\n\t})\n\tqd.StreamParallel(func() {\n\t\tfor i := range len(y) {\n\t\t\ty[i] = 1\n\t\t}\n\t})\n}\n",
			[]string{"group {", "for var i#1 i64 = 0; i#1 < len(x, 0); i#1 = i#1 + 1 {", "parallel for i#2 := range len(y, 0) {"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ks, err := Parse("k.go", []byte(serialHead+c.src))
			if err != nil {
				t.Fatal(err)
			}
			if len(ks) != 1 {
				t.Fatalf("got %d kernels", len(ks))
			}
			checkKernel(t, ks[0])
			checkLines(t, ir.Print(ks[0]), c.want, c.not)
		})
	}
}
