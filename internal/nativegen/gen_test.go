package nativegen

import (
	"regexp"
	"strings"
	"testing"
)

// generate is the generated code of one kernel k(x []int32, n int) whose
// parallel loop over x has body.
func generate(t *testing.T, body string) string {
	t.Helper()
	src := "package k\n\ntype ctr int\n\n//qd:kernel\nfunc k(x []int32, n int) {\n\tfor i := range len(x) {\n" + body + "\n\t}\n}\n"
	res, err := Generate("k.go", []byte(src))
	if err != nil {
		t.Fatalf("%s\n%v", src, err)
	}
	if len(res.Skipped) > 0 {
		t.Fatalf("%s\nskipped: %v", src, res.Skipped)
	}
	return string(res.Source)
}

var counterCheck = regexp.MustCompile(`if (\w+)&1023 == 0 \{`)

// TestStopCheckCounters: a loop whose counter goes up by one each
// iteration checks the stop flag on every 1024th value of it, an innermost
// loop over a slice's elements not at all, and any other loop on every
// iteration.
func TestStopCheckCounters(t *testing.T) {
	cases := []struct {
		name, body string
		counters   []string // the counters checked, outer loop first
		plain      int      // loops that check every iteration
	}{
		{"post increment", "for k := 0; k < n; k++ { x[i] += int32(k) }", []string{"k"}, 0},
		{"counter assigned in the body", "for k := 0; k < n; k++ { x[i]++; k++ }", nil, 1},
		{"post decrement", "for k := n; k > 0; k-- { x[i]++ }", nil, 1},
		{"while loop counting", "k := 0\nfor k < n { x[i]++; k++ }", []string{"k"}, 0},
		{"while loop with a continue", "k := 0\nfor k < n { if x[i] > 3 { continue }; x[i]++; k++ }", nil, 1},
		{"continue of an inner loop", "k := 0\nfor k < n { for j := range 4 { if j == 1 { continue }; x[i]++ }; k++ }", []string{"k", "j"}, 0},
		{"counter incremented under an if", "k := 0\nfor k < n { if x[i] > 0 { k++ }; x[i]-- }", nil, 1},
		{"narrow counter", "var k int8\nfor k < 100 { x[i]++; k++ }", nil, 1},
		{"while loop, no counter", "for x[i] > 1 { x[i] /= 2 }", nil, 1},
		{"range with an index", "for k := range n { x[i] += int32(k) }", []string{"k"}, 0},
		{"range without one", "for range n { x[i]++ }", []string{"qdgK"}, 0},
		{"range over a slice, blank index", "for _, v := range x { for range 2 { x[i] += v } }", []string{"qdgK", "qdgK"}, 0},
		// An innermost loop over a slice's elements ends within one pass.
		{"innermost range over a slice", "for _, v := range x { x[i] += v }", nil, 0},
		{"innermost range over a length", "for k := range len(x) { x[i] += x[k] }", nil, 0},
		{"innermost counter below a length", "for k := 0; k < len(x); k++ { x[i] += x[k] }", nil, 0},
		{"innermost counter below a length, from a variable", "for k := n; k < len(x); k++ { x[i] += x[k] }", []string{"k"}, 0},
		{"innermost counter below a length, assigned first", "k := 0\nfor ; k < len(x); k++ { x[i] += x[k] }", []string{"k"}, 0},
		{"while loop counting a variable of its body", "k := 1\nfor x[i] > 0 && k > 0 { var k int; k++; x[i] -= int32(k) }", nil, 1},
		{"counter of a named type", "for c := ctr(0); x[i] > 0; c++ { x[i]-- }", nil, 1},
		{"counter below a length, not innermost", "for k := 0; k < len(x); k++ { for range 3 { x[i] += x[k] } }", []string{"k", "qdgK"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := generate(t, c.body)
			var got []string
			for _, m := range counterCheck.FindAllStringSubmatch(out, -1) {
				got = append(got, m[1])
			}
			plain := strings.Count(out, "qdgL.Check()") - len(got)
			if strings.Join(got, ",") != strings.Join(c.counters, ",") || plain != c.plain {
				t.Errorf("counters %v and %d plain checks; want %v and %d\n%s", got, plain, c.counters, c.plain, out)
			}
		})
	}
}

// TestBodyPositions: the statements of a loop body keep their positions
// in the kernel file after the stop check qd gen puts before them, in a
// body of many lines and in one that goes on in its brace's line.
func TestBodyPositions(t *testing.T) {
	for _, c := range []struct{ body, stmt string }{
		{"for k := 0; k < n; k++ { x[i] += int32(k) }", `/*line k.go:8:25*/ x[i] += int32(k)`},
		{"for range n { x[i]++ }", `/*line k.go:8:14*/ x[i]++`},
		{"for x[i] > 1 { x[i] /= 2 }", `/*line k.go:8:15*/ x[i] /= 2`},
		{"for k := 0; k < n; k++ {\nx[i] += int32(k) }", "/*line k.go:8:25*/\n"},
	} {
		if out := generate(t, c.body); !strings.Contains(out, c.stmt) {
			t.Errorf("%q: the generated code lacks %q:\n%s", c.body, c.stmt, out)
		}
	}
}

// TestScatterTargets: a scatter's slice gets private copies only where the
// loop touches it no other way.
func TestScatterTargets(t *testing.T) {
	for _, c := range []struct {
		name, loop string
		private    bool
	}{
		{"scatter alone", "for i := range len(x) { qd.AtomicAdd(&h[x[i]&15], 1) }", true},
		{"two scatters into it", "for i := range len(x) { qd.AtomicAdd(&h[x[i]&15], 1); qd.AtomicAdd(&h[x[i]>>4&15], 2) }", true},
		{"read in the body", "for i := range len(x) { qd.AtomicAdd(&h[x[i]&15], h[0]) }", false},
		{"also reduced at a fixed element", "for i := range len(x) { qd.AtomicAdd(&h[x[i]&15], 1); qd.AtomicAdd(&h[0], 1) }", false},
		{"the loop ranges over it", "for i, v := range h { qd.AtomicAdd(&h[(int(v)+i+1)%16], 1) }", false},
		{"passed to a helper", "for i := range len(x) { qd.AtomicAdd(&h[x[i]&15], 1); touch(h, i) }", false},
		{"into rows", "for i := range len(x) { qd.AtomicAdd(&g[x[i]&3][x[i]>>2&3], 1) }", true},
		{"into rows, one row fixed", "for i := range len(x) { qd.AtomicAdd(&g[0][x[i]&3], 1) }", true},
		{"into rows, read in the body", "for i := range len(x) { qd.AtomicAdd(&g[x[i]&3][0], g[1][1]) }", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "package k\n\nimport \"github.com/quadrants-go/qd\"\n\nfunc touch(h []int32, i int) { h[i%16] = 0 }\n\n//qd:kernel\nfunc k(x, h []int32, g [][]int32) {\n\t" + c.loop + "\n}\n"
			res, err := Generate("k.go", []byte(src))
			if err != nil {
				t.Fatalf("%s\n%v", src, err)
			}
			if len(res.Skipped) > 0 {
				t.Fatalf("skipped: %v", res.Skipped)
			}
			got := strings.Contains(string(res.Source), "native.NewPrivate(h, ") || strings.Contains(string(res.Source), "native.NewPrivate2(g, ")
			if got != c.private {
				t.Errorf("private copies: %v, want %v\n%s", got, c.private, res.Source)
			}
		})
	}
}
