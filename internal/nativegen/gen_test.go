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
	src := "package k\n\n//qd:kernel\nfunc k(x []int32, n int) {\n\tfor i := range len(x) {\n" + body + "\n\t}\n}\n"
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
