package main

import (
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"image"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/quadrants-go/qd"
)

//go:embed kernels.go
var kernels string

// config is what the flags choose.
type config struct {
	n        int     // particles
	frames   int     // frames simulated after the initial one; 0: framesOn decides
	substeps int     // substeps per frame
	arch     qd.Arch // the backend of the qd run
	native   bool    // simulate with the kernels called as plain Go, no qd
	gif      string  // the animation's path; "" for none
	png      string  // one frame's path; "" for none
	pngFrame int     // which frame -png writes: 0 is the initial state, -1 the last
	size     int     // the pictures' width and height in pixels
}

// The default number of frames: a GPU simulates a second of fluid in
// moments; plain Go takes about 0.4 s a frame (8 ms a substep), so on the
// CPU the default shows the fall and the impact (0.15 s of fluid) in about
// 6 s.
const (
	gpuFrames = 100
	cpuFrames = 15
)

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "mpm:", err)
		os.Exit(2)
	}
	if err := run(os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "mpm:", err)
		os.Exit(1)
	}
}

// parseFlags parses and checks the command line.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("mpm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.n, "n", 8192, "particles")
	fs.IntVar(&cfg.frames, "frames", 0, fmt.Sprintf("frames to simulate (0: %d on a GPU, %d on the CPU)", gpuFrames, cpuFrames))
	fs.IntVar(&cfg.substeps, "substeps", 50, "substeps of dt = 2e-4 s per frame")
	archName := fs.String("arch", "auto", "backend of the qd run: auto, cpu, cuda or amdgpu")
	fs.BoolVar(&cfg.native, "native", false, "simulate with the kernels called as plain Go only (no qd)")
	fs.StringVar(&cfg.gif, "o", "mpm.gif", `the animated GIF to write ("" for none)`)
	fs.StringVar(&cfg.png, "png", "", "also write one frame as a PNG")
	fs.IntVar(&cfg.pngFrame, "pngframe", -1, "the frame -png writes: 0 is the initial state, -1 the last")
	fs.IntVar(&cfg.size, "size", 256, "width and height of the pictures in pixels")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	arch, ok := map[string]qd.Arch{"auto": qd.Auto, "cpu": qd.CPU, "cuda": qd.CUDA, "amdgpu": qd.AMDGPU, "vulkan": qd.Vulkan}[strings.ToLower(*archName)]
	switch {
	case !ok:
		return cfg, fmt.Errorf("-arch %q: want auto, cpu, cuda or amdgpu", *archName)
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	case cfg.n < 1 || cfg.substeps < 1 || cfg.frames < 0:
		return cfg, fmt.Errorf("-n and -substeps must be at least 1, -frames at least 0")
	case cfg.size < 16 || cfg.size > 4096:
		return cfg, fmt.Errorf("-size %d: want 16 to 4096", cfg.size)
	}
	cfg.arch = arch
	return cfg, nil
}

// framesOn returns the number of frames to simulate on arch.
func (cfg config) framesOn(arch qd.Arch) int {
	switch {
	case cfg.frames > 0:
		return cfg.frames
	case arch == qd.CPU:
		return cpuFrames
	}
	return gpuFrames
}

// describe says what is simulated.
func (cfg config) describe(frames int) string {
	return fmt.Sprintf("%d particles, %d×%d grid, %d frames of %d substeps (dt %g s)",
		cfg.n, nGrid, nGrid, frames, cfg.substeps, dt)
}

// run simulates with qd (or, with -native, as plain Go only), writes the
// pictures and prints the timings.
func run(w io.Writer, cfg config) error {
	if cfg.pngFrame < -1 {
		return fmt.Errorf("-pngframe %d: want a frame number, or -1 for the last", cfg.pngFrame)
	}
	start := initialParticles(cfg.n)
	if cfg.native {
		return runNative(w, cfg, start)
	}
	return runQD(w, cfg, start)
}

// runNative simulates every frame with the kernels called as plain Go.
func runNative(w io.Writer, cfg config, start []Particle) error {
	frames := cfg.framesOn(qd.CPU)
	fmt.Fprintf(w, "mpm as plain Go: %s\n", cfg.describe(frames))
	an := newAnimation(cfg, frames)
	ps, grid := slices.Clone(start), newGrid()
	an.add(ps)
	var d time.Duration
	for range frames {
		t0 := time.Now()
		for range cfg.substeps {
			substep(ps, grid)
		}
		d += time.Since(t0)
		an.add(ps)
	}
	row(w, "plain Go, one goroutine", d, frames*cfg.substeps, "")
	return an.write(w)
}

// reference runs substeps substeps from start as plain Go: what the qd run's
// first frame is checked against.
func reference(start []Particle, substeps int) ([]Particle, time.Duration) {
	ps, grid := slices.Clone(start), newGrid()
	t0 := time.Now()
	for range substeps {
		substep(ps, grid)
	}
	return ps, time.Since(t0)
}

// compileKernels compiles the embedded kernels. A compile error lists each
// problem at its file:line:col in kernels.go.
func compileKernels(p *qd.Program) (*qd.Module, error) {
	mod, err := qd.Compile(p, kernels, qd.WithFilename("kernels.go"))
	if err != nil {
		return nil, fmt.Errorf("compiling kernels.go with qd (-native runs the kernels as plain Go, without qd):\n%w", err)
	}
	return mod, nil
}

// row prints one timing line: the time per substep of steps substeps.
func row(w io.Writer, name string, d time.Duration, steps int, note string) {
	per := d / time.Duration(max(steps, 1))
	fmt.Fprintf(w, "  %-36s %10s/substep%s\n", name, per.Round(per/1000+1), note)
}

// animation collects the frames to write.
type animation struct {
	cfg    config
	r      *renderer
	frames []*image.Paletted
}

// newAnimation returns an animation of frames+1 pictures, or one that draws
// nothing when cfg asks for no picture.
func newAnimation(cfg config, frames int) *animation {
	a := &animation{cfg: cfg}
	if cfg.gif != "" || cfg.png != "" {
		a.r = newRenderer(cfg.size, cfg.n)
		a.frames = make([]*image.Paletted, 0, frames+1)
	}
	return a
}

// add draws ps as the next frame.
func (a *animation) add(ps []Particle) {
	if a.r != nil {
		a.frames = append(a.frames, a.r.frame(ps))
	}
}

// write writes the GIF and the PNG that cfg asks for.
func (a *animation) write(w io.Writer) error {
	if a.cfg.gif != "" {
		// Two hundredths of a second a frame: 50 frames a second for 0.01 s
		// of fluid each (50 substeps), half real speed.
		if err := writeGIF(a.cfg.gif, a.frames, 2); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s: %d frames of %d×%d\n", a.cfg.gif, len(a.frames), a.cfg.size, a.cfg.size)
	}
	if a.cfg.png != "" {
		k := a.cfg.pngFrame
		if k < 0 {
			k = len(a.frames) - 1
		}
		if k >= len(a.frames) {
			return fmt.Errorf("-pngframe %d: the animation has frames 0 to %d", k, len(a.frames)-1)
		}
		if err := writePNG(a.cfg.png, a.frames[k]); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s: frame %d\n", a.cfg.png, k)
	}
	return nil
}
