package difftest

import (
	_ "embed"

	"github.com/quadrants-go/qd/internal/diffgen"
)

//go:generate go run ../diffgen/gen

// The kernels' text: the hand-written file, the generated per-type kernels
// and the value kernels, which Source joins because the generated ones use
// the constants of the hand-written file and qd.Compile compiles one
// source.
var (
	//go:embed kernels.go
	handSrc []byte
	//go:embed kernels_gen.go
	genSrc []byte
	//go:embed values.go
	valuesSrc []byte
)

// FileName is the name the tests give the source when they compile it:
// positions in kernels.go read as such, those in kernels_gen.go keep its
// own name (diffgen.Join).
const FileName = "kernels.go"

// Source returns the kernels of kernels.go, kernels_gen.go and values.go
// as one Go source, for qd.Compile or the front end.
func Source() ([]byte, error) {
	src, err := diffgen.Join(handSrc, genSrc)
	if err != nil {
		return nil, err
	}
	return diffgen.JoinFile(src, "values.go", valuesSrc)
}
