// Package diffgen generates the per-type kernels of the differential tests
// (internal/difftest): the arith* and atomics* kernels are one pattern
// instantiated for every integer and float type, and writing each instance
// by hand let them drift apart. Source returns the generated file
// (FileName); the program in ./gen writes it, run by go generate in
// internal/difftest. A test here regenerates it in memory and fails when
// the checked-in file is stale.
//
// The kernels stay ordinary Go of package difftest, so the tests still
// call each one natively as the reference; Join puts the generated
// declarations after the hand-written kernel file, because qd.Compile
// compiles one source and the kernels share its constants (ctint, halfPi).
package diffgen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
)

// FileName is the generated file, in internal/difftest.
const FileName = "kernels_gen.go"

// intType is one integer instance of the arith and atomics patterns.
type intType struct {
	T     string // the element type
	Shift string // the type of arith's shift counts: uint32 for 32-bit types, else uint64
}

// The types of the instances, in the order of the generated file.
var (
	intTypes = []intType{
		{"int", "uint64"}, {"int32", "uint32"}, {"int64", "uint64"},
		{"uint", "uint64"}, {"uint32", "uint32"}, {"uint64", "uint64"},
	}
	floatTypes = []string{"float32", "float64"}
)

// Source returns the generated file, gofmt-formatted.
func Source() ([]byte, error) {
	var b bytes.Buffer
	if err := fileTmpl.Execute(&b, struct {
		Ints   []intType
		Floats []string
	}{intTypes, floatTypes}); err != nil {
		return nil, err
	}
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("diffgen: formatting the generated file: %w", err)
	}
	return out, nil
}

// Join returns the hand-written kernel file followed by the declarations of
// the generated one (gen without its package clause and imports, which must
// be among hand's), as one source for qd.Compile or the front end. A //line
// directive keeps the positions of the generated kernels those of gen's own
// file, so an error names the file, line and column to look at.
func Join(hand, gen []byte) ([]byte, error) { return JoinFile(hand, FileName, gen) }

// JoinFile is Join for another file of the package, named name.
func JoinFile(hand []byte, name string, gen []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, gen, parser.SkipObjectResolution|parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(hand)
	for _, d := range f.Decls {
		pos := d.Pos()
		switch d := d.(type) {
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			if d.Doc != nil {
				pos = d.Doc.Pos()
			}
		case *ast.FuncDecl:
			if d.Doc != nil {
				pos = d.Doc.Pos()
			}
		}
		// The rest of gen, from the first declaration after the imports
		// (with its doc comment).
		p := fset.Position(pos)
		if len(hand) > 0 && hand[len(hand)-1] != '\n' {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "\n//line %s:%d:1\n", name, p.Line)
		b.Write(gen[p.Offset:])
		break
	}
	return b.Bytes(), nil
}
