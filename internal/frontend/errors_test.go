package frontend

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// TestErrors parses every file of testdata/invalid and checks the errors
// Parse reports against the file's ERROR markers, comments written as
// go/types writes its testdata:
//
//	go /* ERROR "go statements are not supported" */ func() {}()
//	return // ERROR "return inside a parallel loop"
//	x /* ERRORx `^kernel k: cannot assign to (array|kernel) parameter x` */ = y
//
// A marker follows the token at which the error is reported: the error
// must be at that token's line and column. ERROR's quoted string must be
// part of the message (the text after "file:line:col: "); ERRORx's is a
// regular expression the message must match. Where gofmt will not leave a
// comment right after the token, the rules bend the least they can: a
// marker after the dot of qd.LoopConfig stands for qd, and an error about
// a comment (a misspelt //qd:kernel) is marked by a // ERROR line right
// below that comment. Several markers in a row expect several errors at
// one token.
//
// Matching is one to one, as in go/types: every reported error must meet a
// marker and every marker an error. So a file can want several errors, and
// the test fails when an error moves to another line or column, when its
// message changes, or when Parse reports one that no marker expects.
// testdata/README.md says how to add a case.
func TestErrors(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*.go")
	if err != nil || len(files) == 0 {
		t.Fatal("no testdata/invalid files")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".go"), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Base(f)
			want, err := markers(name, src)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatal("no ERROR marker: a file of testdata/invalid says which errors it wants")
			}
			ks, err := Parse(name, src)
			if err == nil {
				t.Fatalf("no error; got %d kernels, want %d errors", len(ks), len(want))
			}
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error %T is not an ErrorList: %v", err, err)
			}
			var first *ir.Error
			if !errors.As(err, &first) {
				t.Fatalf("errors.As(*ir.Error) failed on %v", err)
			}
			if problems := checkMarkers(name, want, list); len(problems) > 0 {
				t.Errorf("%s\nParse reported:\n%v", strings.Join(problems, "\n"), err)
			}
		})
	}
}

// TestErrorMarkers: the marker check of TestErrors fails where it must: an
// error at another column or line than its marker's token, another
// message, an error without a marker, a marker without an error, and a
// malformed marker.
func TestErrorMarkers(t *testing.T) {
	const head = "package k\n\n//qd:kernel\nfunc k(x []float32) {\n\tfor i := range x {\n\t\t"
	const tail = "\n\t\t_ = i\n\t}\n}\n"
	cases := []struct {
		name, stmt string
		problems   int // how many mismatches checkMarkers reports; -1: markers refuses the file
	}{
		{"match", `go /* ERROR "go statements are not supported" */ func() {}()`, 0},
		{"line comment", `return // ERROR "return inside a parallel loop"`, 0},
		{"end of line", `go func() {}() // ERROR "go statements are not supported"`, 2},
		{"regexp", "go /* ERRORx `^kernel k: go statements are not supported in kernels;` */ func() {}()", 0},
		{"regexp mismatch", "go /* ERRORx `^go statements` */ func() {}()", 2},
		{"other column", `go func /* ERROR "go statements are not supported" */ () {}()`, 2},
		{"other line", "go func() {}()\n\t\t_ = i /* ERROR \"go statements are not supported\" */", 2},
		{"other message", `go /* ERROR "goroutines are not supported" */ func() {}()`, 2},
		{"no marker", `go func() {}()`, 1},
		{"two markers", `go /* ERROR "go statements" */ /* ERROR "go statements" */ func() {}()`, 1},
		{"unquoted", `go /* ERROR go statements are not supported */ func() {}()`, -1},
		{"misspelt", `go /* ERRORS "go statements are not supported" */ func() {}()`, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := []byte(head + c.stmt + tail)
			want, err := markers("k.go", src)
			if c.problems < 0 {
				if err == nil {
					t.Fatalf("markers accepted %q", c.stmt)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse("k.go", src)
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Parse: %v, want an ErrorList", err)
			}
			if got := checkMarkers("k.go", want, list); len(got) != c.problems {
				t.Errorf("%d problems, want %d:\n%s", len(got), c.problems, strings.Join(got, "\n"))
			}
		})
	}
}

// TestRedeclared: a name declared twice is reported as go vet does: "X
// redeclared in this block" at the second declaration, the other one named
// after it, whether the name is a kernel, a helper or a package-level var.
func TestRedeclared(t *testing.T) {
	const fill = "(x []int32) {\n\tfor i := range x {\n\t\tx[i] = int32(n + h())\n\t}\n}\n"
	cases := []struct{ name, src, want string }{
		{"kernel", "package k\n\nvar n = 1\n\nfunc h() int { return 1 }\n\n//qd:kernel\nfunc k" + fill + "\n//qd:kernel\nfunc k" + fill,
			"k.go:15:6: k redeclared in this block\n\tk.go:8:6: other declaration of k"},
		{"helper", "package k\n\nvar n = 1\n\nfunc h() int { return 1 }\nfunc h() int { return 2 }\n\n//qd:kernel\nfunc k" + fill,
			"k.go:6:6: h redeclared in this block\n\tk.go:5:6: other declaration of h"},
		{"var", "package k\n\nvar n = 1\nvar n = 2\n\nfunc h() int { return 1 }\n\n//qd:kernel\nfunc k" + fill,
			"k.go:4:5: n redeclared in this block\n\tk.go:3:5: other declaration of n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("k.go", []byte(c.src))
			var first *ir.Error
			if !errors.As(err, &first) || first.Error() != c.want {
				t.Fatalf("got\n%v\nwant first error\n%s", err, c.want)
			}
		})
	}
}

// TestLineDirective: errors after a //line directive name the file and
// line it gives (and the column, where it gives one), as the Go compiler's
// do; those before it keep the source's name. internal/difftest compiles a
// hand-written file and a generated one as one source, the generated part
// under a //line directive.
func TestLineDirective(t *testing.T) {
	const body = "(x []int32) {\n\tfor i := range x {\n\t\tx[i] = 1.5\n\t}\n}\n"
	for _, c := range []struct{ directive, want string }{
		{"gen.go:40:1", "gen.go:43:10: "},
		{"gen.go:40", "gen.go:43: "}, // no column given: none known
	} {
		src := "package k\n\n//qd:kernel\nfunc a" + body + "\n//line " + c.directive + "\n//qd:kernel\nfunc b" + body
		_, err := Parse("k.go", []byte(src))
		var list ErrorList
		if !errors.As(err, &list) || len(list) != 2 {
			t.Fatalf("//line %s: got %v, want two errors", c.directive, err)
		}
		for i, want := range []string{"k.go:6:10: ", c.want} {
			if !strings.HasPrefix(list[i].Error(), want) {
				t.Errorf("//line %s: error %d: %v, want it at %s", c.directive, i, list[i], want)
			}
		}
	}
	src := "package k\n\n//line gen.go:40:1\nfunc b(x []int32 {\n}\n"
	if _, err := Parse("k.go", []byte(src)); err == nil || !strings.HasPrefix(err.Error(), "gen.go:40:18: ") {
		t.Errorf("syntax error after a //line directive: %v, want it at gen.go:40:18", err)
	}
}
