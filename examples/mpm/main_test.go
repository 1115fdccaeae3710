package main

import (
	"bytes"
	"image/gif"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quadrants-go/qd"
)

// TestNativePhysics runs two frames as plain Go and checks what the physics
// promises at every substep, before the fluid reaches a wall: the grid holds
// all the mass; the particles stay inside the grid and finite; they fall;
// and their mean velocity is exactly what gravity gives (APIC transfers
// conserve momentum, and the grid adds -g·dt to every node's velocity).
func TestNativePhysics(t *testing.T) {
	n, substeps := sizes(8192, 100)
	ps, grid := initialParticles(n), newGrid()
	mass := float64(len(ps)) * pMass
	prevY := meanY(ps)
	for s := 1; s <= substeps; s++ {
		clearGrid(grid)
		p2g(ps, grid)
		// Mass: each particle's weights sum to 1 up to rounding, so the
		// grid's total (summed in float64) is n·pMass to well within one
		// float32 ulp (measured: under 1e-8 relative).
		var m float64
		for i := range grid {
			for j := range grid[i] {
				m += float64(grid[i][j].M)
			}
		}
		if rel := math.Abs(m/mass - 1); !(rel <= 1e-7) {
			t.Fatalf("substep %d: the grid holds %.9g of mass, the particles %.9g (relative %.2g)", s, m, mass, rel)
		}
		gridUpdate(grid)
		g2p(ps, grid)

		var vy float64
		for k, p := range ps {
			if !finite(p) {
				t.Fatalf("substep %d: particle %d is not finite: %+v", s, k, p)
			}
			if !inGrid(p.X) {
				t.Fatalf("substep %d: particle %d at %v has left the grid", s, k, p.X)
			}
			vy += float64(p.V[1])
		}
		y := meanY(ps)
		if !(y < prevY) {
			t.Fatalf("substep %d: the mean height went from %.6f to %.6f; the fluid should fall", s, prevY, y)
		}
		prevY = y
		vy /= float64(len(ps))
		if want := -1 - gravity*dt*float64(s); math.Abs(vy-want) > 1e-4 {
			t.Fatalf("substep %d: mean vertical velocity %.6f, gravity gives %.6f", s, vy, want)
		}
	}
}

// sizes returns n particles and the given substeps, or a quarter of the
// particles and half the substeps with -short (which the race detector's
// run in CI uses: it makes these serial loops about ten times slower).
func sizes(n, substeps int) (int, int) {
	if testing.Short() {
		return n / 4, substeps / 2
	}
	return n, substeps
}

func meanY(ps []Particle) float64 {
	var y float64
	for _, p := range ps {
		y += float64(p.X[1])
	}
	return y / float64(len(ps))
}

func finite(p Particle) bool {
	f := []float32{p.X[0], p.X[1], p.V[0], p.V[1], p.C[0][0], p.C[0][1], p.C[1][0], p.C[1][1], p.J}
	for _, v := range f {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return false
		}
	}
	return true
}

// inGrid reports whether the 3×3 nodes of a particle at x are in the grid.
func inGrid(x qd.Vec2[float32]) bool {
	for a := range 2 {
		if !(x[a] > 0) {
			return false
		}
		if b := int(x[a]*invDx - 0.5); b < 0 || b+2 >= nGrid {
			return false
		}
	}
	return true
}

// TestReorderWithinBounds is the ground of the qd check's bounds: run as
// plain Go with the particles in the opposite order, so that every node
// sums its contributions in another order, the first frame must stay within
// them, and by a wide margin.
func TestReorderWithinBounds(t *testing.T) {
	n, _ := sizes(8192, 0)
	const substeps = 50 // the check's frame
	start := initialParticles(n)
	want, _ := reference(start, substeps)
	rev := slices.Clone(start)
	slices.Reverse(rev)
	got, _ := reference(rev, substeps)
	slices.Reverse(got)
	d := compare(got, want)
	if err := d.check(); err != nil {
		t.Fatal(err)
	}
	if d.x > tolX/10 || d.v > tolV/10 || d.j > tolJ/10 || d.c > tolC/10 {
		t.Errorf("reordering alone comes within 10× of a bound: %v", d)
	}
	t.Logf("reordered: %v", d)
}

// TestQD runs two small frames through qd on the CPU and checks them
// against plain Go.
func TestQD(t *testing.T) {
	var out bytes.Buffer
	cfg := config{n: 2048, frames: 2, substeps: 10, arch: qd.CPU}
	err := runQD(&out, cfg, initialParticles(cfg.n))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "frame 1 matches plain Go") {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestRunNative runs the program's plain-Go path and reads back its pictures.
func TestRunNative(t *testing.T) {
	dir := t.TempDir()
	cfg := config{n: 1024, frames: 3, substeps: 5, native: true, size: 64, pngFrame: -1,
		gif: filepath.Join(dir, "mpm.gif"), png: filepath.Join(dir, "frame.png")}
	var out bytes.Buffer
	if err := run(&out, cfg); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(cfg.gif)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := gif.DecodeAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Image) != cfg.frames+1 || g.Image[0].Bounds().Dx() != cfg.size {
		t.Fatalf("the GIF has %d frames of %v, want %d of %d×%d", len(g.Image), g.Image[0].Bounds(), cfg.frames+1, cfg.size, cfg.size)
	}
	// The initial block covers [0.2, 0.6]²: its centre is drawn, a corner is not.
	first := g.Image[0]
	if first.ColorIndexAt(cfg.size*2/5, cfg.size*3/5) == 0 || first.ColorIndexAt(2, 2) != 0 {
		t.Errorf("frame 0 does not show the block where it starts")
	}
	pf, err := os.Open(cfg.png)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if _, err := png.Decode(pf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "plain Go, one goroutine") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestFlags(t *testing.T) {
	var stderr bytes.Buffer
	cfg, err := parseFlags(nil, &stderr)
	if err != nil || cfg.n != 8192 || cfg.substeps != 50 || cfg.framesOn(qd.CPU) != cpuFrames || cfg.framesOn(qd.CUDA) != gpuFrames {
		t.Errorf("defaults: %+v, %v", cfg, err)
	}
	for _, bad := range [][]string{{"-arch", "tpu"}, {"-n", "0"}, {"-size", "3"}, {"extra"}} {
		if _, err := parseFlags(bad, &stderr); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
