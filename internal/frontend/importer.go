package frontend

//go:generate cp ../../kernelapi.go qdapi.go.txt

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path"
	"strings"
	"sync"

	"github.com/quadrants-go/qd/internal/ir"
)

// QDPath is the import path of the kernel API.
const QDPath = "github.com/quadrants-go/qd"

// The declarations go/types needs, as Go source: machines that run qd have no
// Go toolchain and so no export data. qdapi.go.txt is an exact copy of the
// root package's kernelapi.go (go:embed cannot reach a parent directory); a
// test in the root package fails when the two differ.
var (
	//go:embed qdapi.go.txt
	qdSource []byte
	//go:embed math.go.txt
	mathSource []byte
	//go:embed iter.go.txt
	iterSource []byte
)

// apiKind says what a kernel API function is.
type apiKind uint8

const (
	apiNone apiKind = iota
	apiStreamParallel
	apiSerial
	apiLoopConfig
	apiBlockDim
	apiNDRange
	apiNDRange3
	apiAtomic    // qd.Atomic*: op in atomic
	apiAtomicVec // qd.AtomicAddVec
	apiIntrinsic // qd math or math: fn in intrinsic
	apiMathMinMax
	apiMathInf
	apiMathNaN
	apiMathIsNaN
	apiMathIsInf
	apiBlocks       // qd.Blocks (blocks.go)
	apiShared       // qd.Shared
	apiNewPerThread // qd.NewPerThread
	apiBlockReduce  // qd.BlockSum, BlockMin, BlockMax: op in minmax
	apiBlockScan    // qd.BlockExclusiveSum, BlockInclusiveSum
)

// apiFunc is the meaning of one function of qd or math in kernels.
type apiFunc struct {
	kind      apiKind
	atomic    ir.AtomicOp
	intrinsic ir.Intrinsic
	minmax    ir.BinOp
	inclusive bool // apiBlockScan
}

// stdlib is the type-checked kernel API, value library and math, shared
// (read-only) by every Parse.
type stdlib struct {
	qd, math, iter *types.Package
	fset           *token.FileSet                // positions of every embedded source
	info           *types.Info                   // of package qd's library bodies
	decls          map[*types.Func]*ast.FuncDecl // the library's functions and methods
	funcs          map[*types.Func]apiFunc
	index3         *types.Named // qd.Index3
	index3Fields   map[*types.Var]int
	blockMethods   map[*types.Func]string // qd.Block's methods, by name
	err            error
}

var (
	stdOnce sync.Once
	std     stdlib
)

// loadStd type-checks the embedded sources once: math and iter as
// declarations, package qd with its library's bodies (checkQD).
func loadStd() *stdlib {
	stdOnce.Do(func() {
		fset := token.NewFileSet()
		std.fset = fset
		var err error
		if std.iter, err = checkEmbedded(fset, "iter", iterSource, nil); err != nil {
			std.err = err
			return
		}
		if std.math, err = checkEmbedded(fset, "math", mathSource, nil); err != nil {
			std.err = err
			return
		}
		if std.qd, std.info, std.decls, err = checkQD(fset, &std); err != nil {
			std.err = err
			return
		}
		std.index()
	})
	return &std
}

func checkEmbedded(fset *token.FileSet, pkgPath string, src []byte, deps *stdlib) (*types.Package, error) {
	f, err := parser.ParseFile(fset, path.Base(pkgPath)+".go", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("qd: embedded declarations of %s: %v", pkgPath, err)
	}
	conf := types.Config{
		IgnoreFuncBodies:         true,
		DisableUnusedImportCheck: true,
		Importer:                 importerFunc(func(p string) (*types.Package, error) { return deps.imp(p, nil) }),
		Sizes:                    sizes,
	}
	pkg, err := conf.Check(pkgPath, fset, []*ast.File{f}, nil)
	if err != nil {
		return nil, fmt.Errorf("qd: embedded declarations of %s: %v", pkgPath, err)
	}
	return pkg, nil
}

// sizes are those of the 64-bit targets qd compiles for: int is 64 bits.
var sizes = types.SizesFor("gc", "amd64")

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// imp resolves an import. Packages other than qd, math, iter and unsafe
// become empty packages recorded in fake: a kernel file's host code may use
// them, and a kernel that does gets a clear error instead of a type error.
func (s *stdlib) imp(p string, fake map[*types.Package]bool) (*types.Package, error) {
	if s != nil {
		switch p {
		case QDPath:
			if s.qd != nil {
				return s.qd, nil
			}
		case "math":
			return s.math, nil
		case "iter":
			return s.iter, nil
		}
	}
	if p == "unsafe" {
		return types.Unsafe, nil
	}
	name := path.Base(p)
	if len(name) > 1 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" && path.Dir(p) != "." {
		name = path.Base(path.Dir(p)) // module major-version suffix: example.com/x/v2 is package x
	}
	name = strings.TrimPrefix(name, "go-")
	name = strings.Map(func(r rune) rune {
		if r == '-' || r == '.' {
			return '_'
		}
		return r
	}, name)
	pkg := types.NewPackage(p, name)
	pkg.MarkComplete()
	if fake != nil {
		fake[pkg] = true
	}
	return pkg, nil
}

// index records which function is which, by object.
func (s *stdlib) index() {
	s.funcs = map[*types.Func]apiFunc{}
	qdNames := map[string]apiFunc{
		"StreamParallel": {kind: apiStreamParallel},
		"Serial":         {kind: apiSerial},
		"LoopConfig":     {kind: apiLoopConfig},
		"BlockDim":       {kind: apiBlockDim},
		"NDRange":        {kind: apiNDRange},
		"NDRange3":       {kind: apiNDRange3},
		"AtomicAdd":      {kind: apiAtomic, atomic: ir.AtomicAdd},
		"AtomicSub":      {kind: apiAtomic, atomic: ir.AtomicSub},
		"AtomicMin":      {kind: apiAtomic, atomic: ir.AtomicMin},
		"AtomicMax":      {kind: apiAtomic, atomic: ir.AtomicMax},
		"AtomicAnd":      {kind: apiAtomic, atomic: ir.AtomicAnd},
		"AtomicOr":       {kind: apiAtomic, atomic: ir.AtomicOr},
		"AtomicXor":      {kind: apiAtomic, atomic: ir.AtomicXor},
		"AtomicExchange": {kind: apiAtomic, atomic: ir.AtomicExchange},
		"AtomicCAS":      {kind: apiAtomic, atomic: ir.AtomicCAS},
		"AtomicAddVec":   {kind: apiAtomicVec, atomic: ir.AtomicAdd},
		// Block loops (blocks.go).
		"Blocks":            {kind: apiBlocks},
		"Shared":            {kind: apiShared},
		"NewPerThread":      {kind: apiNewPerThread},
		"BlockSum":          {kind: apiBlockReduce, minmax: ir.Add},
		"BlockMin":          {kind: apiBlockReduce, minmax: ir.Min},
		"BlockMax":          {kind: apiBlockReduce, minmax: ir.Max},
		"BlockExclusiveSum": {kind: apiBlockScan},
		"BlockInclusiveSum": {kind: apiBlockScan, inclusive: true},
	}
	mathNames := map[string]apiFunc{
		"Min":   {kind: apiMathMinMax, minmax: ir.Min},
		"Max":   {kind: apiMathMinMax, minmax: ir.Max},
		"Inf":   {kind: apiMathInf},
		"NaN":   {kind: apiMathNaN},
		"IsNaN": {kind: apiMathIsNaN},
		"IsInf": {kind: apiMathIsInf},
	}
	for _, f := range ir.Intrinsics() {
		name := intrinsicGoName(f)
		qdNames[name] = apiFunc{kind: apiIntrinsic, intrinsic: f}
		mathNames[name] = apiFunc{kind: apiIntrinsic, intrinsic: f}
	}
	for pkg, names := range map[*types.Package]map[string]apiFunc{s.qd: qdNames, s.math: mathNames} {
		for name, a := range names {
			if fn, ok := pkg.Scope().Lookup(name).(*types.Func); ok {
				s.funcs[fn] = a
			}
		}
	}
	s.blockMethods = map[*types.Func]string{}
	if tn, ok := s.qd.Scope().Lookup("Block").(*types.TypeName); ok {
		if named, ok := tn.Type().(*types.Named); ok {
			for i := range named.NumMethods() {
				m := named.Method(i)
				s.blockMethods[m] = m.Name()
			}
		}
	}
	if tn, ok := s.qd.Scope().Lookup("Index3").(*types.TypeName); ok {
		s.index3, _ = tn.Type().(*types.Named)
	}
	s.index3Fields = map[*types.Var]int{}
	if s.index3 != nil {
		if st, ok := s.index3.Underlying().(*types.Struct); ok {
			for i := range st.NumFields() {
				s.index3Fields[st.Field(i)] = i
			}
		}
	}
}

// intrinsicGoName is the Go name of an intrinsic: the name of the function
// in math and in qd ("Sqrt" for ir.Sqrt).
func intrinsicGoName(f ir.Intrinsic) string {
	s := f.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

// supportedMath lists the math functions kernels may call, for messages.
func supportedMath() string {
	var names []string
	for _, f := range ir.Intrinsics() {
		names = append(names, intrinsicGoName(f))
	}
	return strings.Join(names, ", ") + ", Min, Max, Inf, NaN, IsNaN, IsInf"
}
