package frontend

import (
	"flag"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

var update = flag.Bool("update", false, "rewrite the .golden files of testdata/valid")

// TestValid parses every file of testdata/valid, checks each kernel with
// ir.Verify and lower.Lower, and compares the printed IR with NAME.golden.
func TestValid(t *testing.T) {
	files, err := filepath.Glob("testdata/valid/*.go")
	if err != nil || len(files) == 0 {
		t.Fatal("no testdata/valid files")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".go")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			file, err := ParseFile(filepath.Base(f), src)
			if err != nil {
				t.Fatal(err)
			}
			ks := append(file.Kernels, instances(t, file, src)...)
			var sb strings.Builder
			for _, k := range ks {
				checkKernel(t, k)
				sb.WriteString(ir.Print(k))
			}
			golden := strings.TrimSuffix(f, ".go") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(sb.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got := sb.String(); got != string(want) {
				t.Errorf("IR differs from %s (go test -update rewrites it):\n%s", golden, got)
			}
		})
	}
}

// instances instantiates the generic kernels of file as the source's
// "// instantiate name[T, U]" comment lines say, in their order. A generic
// kernel without such a line fails the test: it would go untested.
func instances(t *testing.T, file *File, src []byte) []*ir.Kernel {
	t.Helper()
	byName := map[string]*Generic{}
	for _, g := range file.Generics {
		byName[g.Name] = g
	}
	used := map[string]bool{}
	var out []*ir.Kernel
	for _, line := range strings.Split(string(src), "\n") {
		spec, ok := strings.CutPrefix(strings.TrimSpace(line), "// instantiate ")
		if !ok {
			continue
		}
		name, list, ok := strings.Cut(spec, "[")
		g := byName[name]
		if !ok || g == nil || !strings.HasSuffix(list, "]") {
			t.Fatalf("bad instantiate line %q", line)
		}
		var targs []types.Type
		for _, a := range splitTypeList(strings.TrimSuffix(list, "]")) {
			ty, err := g.Type(strings.TrimSpace(a))
			if err != nil {
				t.Fatal(err)
			}
			targs = append(targs, ty)
		}
		k, err := g.Instantiate(targs...)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if k.Name != irName(spec) || g.InstanceName(targs...) != spec {
			t.Errorf("instance of %s is named %s (%s in messages)", spec, k.Name, g.InstanceName(targs...))
		}
		used[name] = true
		out = append(out, k)
	}
	for _, g := range file.Generics {
		if !used[g.Name] {
			t.Errorf("generic kernel %s has no // instantiate line", g.Name)
		}
	}
	return out
}

// checkKernel asserts what every produced kernel must satisfy.
func checkKernel(t *testing.T, k *ir.Kernel) {
	t.Helper()
	if err := ir.Verify(k); err != nil {
		t.Errorf("kernel %s does not verify: %v\n%s", k.Name, err, ir.Print(k))
	}
	if _, err := lower.Lower(k); err != nil {
		t.Errorf("kernel %s does not lower: %v", k.Name, err)
	}
	if !k.Pos.IsKnown() {
		t.Errorf("kernel %s has no position", k.Name)
	}
	for _, p := range k.Params {
		if !p.Pos.IsKnown() {
			t.Errorf("kernel %s: parameter %s has no position", k.Name, p.Name)
		}
	}
	ir.Inspect(k.Body, func(n ir.Node) bool {
		if s, ok := n.(ir.Stmt); ok && !s.Position().IsKnown() {
			t.Errorf("kernel %s: %T has no position", k.Name, s)
		}
		return true
	})
}
