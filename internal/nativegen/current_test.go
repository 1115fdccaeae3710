package nativegen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedFilesCurrent: every *_qdgen.go of the repository is what
// qd gen writes for its kernel file now. A stale one is not wrong (qd runs
// the closures for a source it does not match) but loses the native path.
func TestGeneratedFilesCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	n := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".gpu" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_qdgen.go") {
			return nil
		}
		n++
		srcPath := strings.TrimSuffix(path, "_qdgen.go") + ".go"
		src, err := os.ReadFile(srcPath)
		if err != nil {
			t.Errorf("%s has no kernel file %s", path, srcPath)
			return nil
		}
		res, err := Generate(filepath.Base(srcPath), src)
		if err != nil {
			t.Errorf("qd gen %s: %v", srcPath, err)
			return nil
		}
		old, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Equal(old, res.Source) {
			t.Errorf("%s is stale: run go run ./cmd/qd gen %s", path, srcPath)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("found no generated file: the walk is broken")
	}
}
