package frontend

import (
	"go/types"
	"os"
	"path/filepath"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// FuzzParse checks that no input makes ParseFile (or the instantiation of a
// generic kernel) panic, and that every kernel it accepts verifies and
// lowers. The seeds are the files of testdata/valid and testdata/invalid,
// and fuzzSeeds.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"testdata/valid", "testdata/invalid"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, file := range files {
			src, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := ParseFile("fuzz.go", src)
		if err != nil {
			return
		}
		ks := file.Kernels
		// Generic kernels: every type argument of float32, when that
		// instantiation is allowed.
		for _, g := range file.Generics {
			targs := make([]types.Type, len(g.TypeParams))
			for i := range targs {
				targs[i] = types.Typ[types.Float32]
			}
			if k, err := g.Instantiate(targs...); err == nil {
				ks = append(ks, k)
			}
		}
		for _, k := range ks {
			if err := ir.Verify(k); err != nil {
				t.Fatalf("accepted kernel %s does not verify: %v\n%s\nsource:\n%s", k.Name, err, ir.Print(k), src)
			}
			if _, err := lower.Lower(k); err != nil {
				// Lowering's placement rules are the front end's to report
				// first, with Go positions.
				t.Fatalf("accepted kernel %s does not lower: %v\nsource:\n%s", k.Name, err, src)
			}
		}
	})
}
