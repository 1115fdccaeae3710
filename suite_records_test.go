package qd

import (
	"strings"
	"testing"
)

// Kernels over arrays of records: parameters []Particle and [][]Cell read
// and write the fields of Ndarrays and Go slices of the same Go types,
// whose layout the front end computes as reflect does.

type recParticle struct {
	X, V Vec2[float32]
	C    Mat2[float32]
	J    float32
	N    int32
	Hot  bool
}

type recCell struct {
	V Vec2[float32]
	M float32
}

const recordsSrc = `package k

import "github.com/quadrants-go/qd"

type Particle struct {
	X, V qd.Vec2[float32]
	C    qd.Mat2[float32]
	J    float32
	N    int32
	Hot  bool
}

type Cell struct {
	V qd.Vec2[float32]
	M float32
}

//qd:kernel
func step(ps []Particle, grid [][]Cell) {
	for i := range len(ps) {
		q := ps[i]
		q.X = q.X.Add(q.V.Scale(0.5))
		q.J *= 2
		q.C[0][1] = float32(q.N)
		ps[i] = q
		if q.Hot {
			ps[i].N++
			ps[i].V[1] = -ps[i].V[1]
		}
		c := int(q.N) % len(grid[0])
		qd.AtomicAdd(&grid[0][c].M, q.J)
		qd.AtomicAdd(&grid[1][c].V[1], 1)
	}
}

type Wide struct {
	V qd.Vec2[float32]
	M float64
}

//qd:kernel
func wide(cs []Wide) {
	for i := range len(cs) {
		cs[i].M = 1
	}
}
`

// recStep is step of recordsSrc in Go.
func recStep(ps []recParticle, grid [][]recCell) {
	for i := range ps {
		q := ps[i]
		q.X = q.X.Add(q.V.Scale(0.5))
		q.J *= 2
		q.C[0][1] = float32(q.N)
		ps[i] = q
		if q.Hot {
			ps[i].N++
			ps[i].V[1] = -ps[i].V[1]
		}
		c := int(q.N) % len(grid[0])
		grid[0][c].M += q.J
		grid[1][c].V[1]++
	}
}

func recInputs() ([]recParticle, [][]recCell) {
	ps := make([]recParticle, 300)
	for i := range ps {
		f := float32(i)
		ps[i] = recParticle{X: Vec2[float32]{f, 1}, V: Vec2[float32]{2, f}, C: Mat2[float32]{{1, 2}, {3, 4}}, J: 0.5, N: int32(i), Hot: i%3 == 0}
	}
	return ps, [][]recCell{make([]recCell, 7), make([]recCell, 7)}
}

// TestRecordKernels launches a kernel over arrays of structs, as Ndarrays
// and as Go slices, and compares the elements with the kernel run as Go.
func TestRecordKernels(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		step := kernelOf(t, compileModule(t, p, recordsSrc), "step")
		want, wantGrid := recInputs()
		recStep(want, wantGrid)

		start, _ := recInputs()
		ps := newNdarray[recParticle](t, p, len(start))
		check(t, ps.CopyFromHost(start))
		grid := newNdarray[recCell](t, p, 2, 7)
		check(t, step.Launch(ps, grid))
		got := toSlice(t, ps)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("Ndarray particle %d: got %+v, want %+v", i, got[i], want[i])
			}
		}
		g := toSlice(t, grid)
		for c := range 7 {
			if g[c] != wantGrid[0][c] || g[7+c] != wantGrid[1][c] {
				t.Fatalf("cell %d: got %+v and %+v, want %+v and %+v", c, g[c], g[7+c], wantGrid[0][c], wantGrid[1][c])
			}
		}

		// Go slices of the same types, copied in and out around the launch.
		hps, hgrid := recInputs()
		check(t, step.Launch(hps, hgrid))
		for i := range want {
			if hps[i] != want[i] {
				t.Fatalf("Go slice particle %d: got %+v, want %+v", i, hps[i], want[i])
			}
		}
		for r := range 2 {
			for c := range 7 {
				if hgrid[r][c] != wantGrid[r][c] {
					t.Fatalf("Go slice cell [%d][%d]: got %+v, want %+v", r, c, hgrid[r][c], wantGrid[r][c])
				}
			}
		}
	})
}

// TestRecordLayoutMismatch: an array whose element type's layout differs
// from the kernel's struct is refused, naming both types.
func TestRecordLayoutMismatch(t *testing.T) {
	p := initProgram(t, WithArch(CPU))
	defer p.Close()
	wide := kernelOf(t, compileModule(t, p, recordsSrc), "wide")
	cells := newNdarray[recCell](t, p, 4)
	for _, arg := range []any{cells, make([]recCell, 4)} {
		err := wide.Launch(arg)
		if err == nil {
			t.Fatalf("launching wide([]Wide) with %T succeeded", arg)
		}
		if msg := err.Error(); !strings.Contains(msg, "[]Wide") || !strings.Contains(msg, "recCell") ||
			!strings.Contains(msg, "the kernel's Wide has .M f64 at byte 8 where qd.recCell has .M f32 at byte 8") {
			t.Errorf("launching wide([]Wide) with %T: %v; want both types named, and the field that differs", arg, err)
		}
	}
}
