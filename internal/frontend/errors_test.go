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
