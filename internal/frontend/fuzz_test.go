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
	for _, src := range fuzzSeeds {
		f.Add([]byte(src))
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

// fuzzSeeds are small kernels of the value constructs, for the fuzzer to
// mutate: values, places, receivers, generics, unrolling and the library.
var fuzzSeeds = []string{
	// Block loops: shared arrays, per-thread values, collectives.
	"package k\n\nimport \"github.com/quadrants-go/qd\"\n\n//qd:kernel\nfunc k(x []float32, out []int32, n int) {\n\tfor b := range qd.Blocks(n, 64) {\n\t\ttile := qd.Shared[[64]float32]()\n\t\tv := qd.NewPerThread[int32](b)\n\t\tfor t := range b.Threads() {\n\t\t\ttile[t] = x[b.Index()*64+t]\n\t\t\tv[t] = int32(t)\n\t\t}\n\t\ts := qd.BlockSum(b, v)\n\t\te := qd.BlockExclusiveSum(b, v)\n\t\tfor t := range b.Threads() {\n\t\t\tx[b.Index()*64+t] = tile[63-t]\n\t\t\tout[t] = s + e[t]\n\t\t}\n\t}\n}\n",
	"package k\n\nimport \"github.com/quadrants-go/qd\"\n\ntype cell struct{ N int32 }\n\n//qd:kernel\nfunc k(x []float32, n int) {\n\tfor b := range qd.Blocks(n, n) {\n\t\tc := qd.Shared[[8][9]cell]()\n\t\tfor k := 0; k < 3; k++ {\n\t\t\tfor t := range b.Threads() {\n\t\t\t\tqd.AtomicAdd(&c[t%8][t%9].N, 1)\n\t\t\t}\n\t\t}\n\t\tfor t := range b.Threads() {\n\t\t\tx[t] = float32(c[0][0].N)\n\t\t}\n\t}\n}\n",
	`package k

import "github.com/quadrants-go/qd"

type P struct {
	X qd.Vec3[float32]
	N [2]int32
}

func (p *P) Move(d float32) { p.X[1] += d; p.N[0]++ }

func (p P) Sum() float32 { return p.X.Sum() + float32(p.N[1]) }

//qd:kernel
func k(x []float32, j []int32) {
	for i := range len(x) {
		p := P{X: qd.Vec3[float32]{x[i], 1, 2}, N: [2]int32{1}}
		q := p
		q.Move(2)
		var a [4]float32
		a[j[i]] = q.Sum()
		for n := range 4 {
			a[n] *= float32(n)
		}
		x[i] = a[j[i]%4] + p.X.Cross(q.X).Norm()
	}
}
`,
	`package k

import "github.com/quadrants-go/qd"

type pair[T qd.Float] struct{ A, B T }

func (p *pair[T]) Swap() { p.A, p.B = p.B, p.A }

func twice[T qd.Float](v T) T { return v + T(1+1e-10) }

//qd:kernel
func g[T qd.Float](x []T) {
	for i := range len(x) {
		p := pair[T]{x[i], 2}
		p.Swap()
		x[i] = twice(p.A) * T(0.5)
	}
}
`,
	`package k

import "github.com/quadrants-go/qd"

//qd:kernel
func lib(x [][]float64, seed uint64, u []uint32) {
	for i := range len(x) {
		m := qd.Mat3[float64]{{x[i][0], 1, 0}, {0, x[i][1], 1}, {1, 0, 2}}
		_, s, _ := qd.SVD3(m)
		r, _ := qd.PolarDecompose3(m.Inv())
		q := qd.QuatIdent[float64]().Mul(qd.Quat[float64]{0, 0, 1, 1}).Normalized()
		v := q.Rotate(s)
		rnd := qd.NewRand(seed, uint64(i))
		u[i] = rnd.Uint32()
		x[i][0] = v.Dot(r.MulVec(s)) + float64(rnd.Float32())
	}
}
`,
}
