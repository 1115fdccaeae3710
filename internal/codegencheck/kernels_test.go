package codegencheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/builtin"
	"github.com/quadrants-go/qd/internal/difftest"
	"github.com/quadrants-go/qd/internal/frontend"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kerneldocs"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// source is a Go source of kernels and the name it is parsed under.
type source struct {
	name string
	text []byte
}

// checkedKernels are the kernels every check compiles: the behaviour
// suite's IR-built kernels, qd's own (internal/builtin), every Go source the tests compile (the suite's,
// the differential tests', the accuracy test's, the examples of
// docs/kernels.md, qd bench's), without repeats (two tests may build the same kernel),
// renamed apart (two kernels may share a name).
func checkedKernels(t *testing.T) []*ir.Kernel {
	t.Helper()
	diff, err := difftest.Source()
	if err != nil {
		t.Fatalf("the differential tests' source: %v", err)
	}
	sources := append(rootSources(t),
		source{"reduce.go", []byte(suitekernels.ReduceSource())},
		source{difftest.FileName, diff},
		source{"accuracy.go", []byte(accSource())})
	sources = append(sources, docSources(t)...)
	sources = append(sources, kernelFiles(t)...)
	all := suitekernels.All()
	for _, ft := range builtin.FillTypes {
		all = append(all, builtin.Fill(ft))
	}
	for _, src := range sources {
		f, err := frontend.ParseFile(src.name, src.text)
		if err != nil {
			t.Errorf("parsing %s: %v", src.name, err)
			continue
		}
		all = append(all, f.Kernels...)
		for _, g := range f.Generics {
			all = append(all, instances(t, g)...)
		}
	}
	var kernels []*ir.Kernel
	seen := map[ir.Hash]bool{}
	for i, k := range all {
		plan, err := lower.Lower(k)
		if err != nil {
			t.Errorf("lower %s: %v", k.Name, err)
			continue
		}
		if seen[plan.Hash] {
			continue
		}
		seen[plan.Hash] = true
		k.Name = fmt.Sprintf("k%03d_%s", i, k.Name)
		kernels = append(kernels, k)
	}
	return kernels
}

// kernelFiles are the Go files of kernels that the examples and qd bench
// embed and compile at run time (examples/*/, internal/benchsuite/testdata):
// each file holding a //qd:kernel.
func kernelFiles(t *testing.T) []source {
	t.Helper()
	var out []source
	for _, pattern := range []string{"examples/*/*.go", "internal/benchsuite/testdata/*.go"} {
		files, err := filepath.Glob(filepath.Join("..", "..", pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(text), "//qd:kernel") {
				out = append(out, source{filepath.ToSlash(file[len("../../"):]), text})
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no kernel files found under examples/ and internal/benchsuite/testdata/")
	}
	return out
}

// docSources are the examples of docs/kernels.md, each a kernel file whose
// positions are the page's (kerneldocs.Block.Source).
func docSources(t *testing.T) []source {
	t.Helper()
	md, err := os.ReadFile(filepath.Join("..", "..", kerneldocs.Page))
	if err != nil {
		t.Fatal(err)
	}
	examples, err := kerneldocs.Examples(md)
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) == 0 {
		t.Fatalf("%s has no examples", kerneldocs.Page)
	}
	out := make([]source, len(examples))
	for i, text := range examples {
		out[i] = source{kerneldocs.Page, text}
	}
	return out
}

// rootSources are the Go sources of the root package's tests: every string
// constant of its test files that holds a //qd:kernel, read from the files
// (package qd's tests cannot be imported). A source that a test builds to
// see it rejected is no constant.
func rootSources(t *testing.T) []source {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []source
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST && gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING || i >= len(vs.Names) {
						continue
					}
					if text, err := strconv.Unquote(lit.Value); err == nil && strings.Contains(text, "//qd:kernel") {
						out = append(out, source{filepath.Base(file) + ":" + vs.Names[i].Name, []byte(text)})
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no Go sources of kernels found in the root package's test files")
	}
	return out
}

// instances instantiates generic kernel g with each type list its
// constraints' terms make (for every type parameter, each term), as many
// as maxInstances.
func instances(t *testing.T, g *frontend.Generic) []*ir.Kernel {
	const maxInstances = 16
	lists := [][]types.Type{nil}
	for i := range g.TypeParams {
		terms := g.TermTypes(i)
		if len(terms) == 0 {
			t.Errorf("generic kernel %s: type parameter %s has no terms to instantiate it with", g.Name, g.TypeParams[i])
			return nil
		}
		var next [][]types.Type
		for _, l := range lists {
			for _, term := range terms {
				if len(next) < maxInstances {
					next = append(next, append(slices.Clone(l), term))
				}
			}
		}
		lists = next
	}
	var out []*ir.Kernel
	for _, l := range lists {
		k, err := g.Instantiate(l...)
		if err != nil {
			t.Errorf("instantiating %s: %v", g.InstanceName(l...), err)
			continue
		}
		out = append(out, k)
	}
	return out
}
