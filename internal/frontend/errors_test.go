package frontend

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// TestErrors parses every file of testdata/invalid; its first line is
// "// want: LINE:COL: substring", the position and part of the message of
// the error Parse must report.
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
			first, _, _ := strings.Cut(string(src), "\n")
			want, ok := strings.CutPrefix(first, "// want: ")
			if !ok {
				t.Fatalf("first line %q is not a // want: line", first)
			}
			pos, msg, _ := strings.Cut(want, ": ")
			ks, err := Parse("k.go", src)
			if err == nil {
				t.Fatalf("no error; got %d kernels, want %s", len(ks), want)
			}
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error %T is not an ErrorList: %v", err, err)
			}
			var first1 *ir.Error
			if !errors.As(err, &first1) {
				t.Fatalf("errors.As(*ir.Error) failed on %v", err)
			}
			for _, e := range list {
				if strings.HasPrefix(e.Error(), "k.go:"+pos+": ") && strings.Contains(e.Msg, msg) {
					return
				}
			}
			t.Errorf("want k.go:%s: ...%s...\ngot:\n%v", pos, msg, err)
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
