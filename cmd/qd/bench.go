package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/benchsuite"
)

const benchUsage = `usage: qd bench [-arch auto|cpu|cuda|amdgpu|vulkan] [-json] [-quick] [-run REGEXP]

Run qd's performance suite on one device and print every figure
beside its reference, measured in the same run, and its bar: launch host
cost against a raw cuLaunchKernel, K streams and stream-parallel groups of
latency-bound kernels, saxpy against a device-to-device copy, a reduction
and a stencil against their byte floors, block-level kernels, ports of
CUDA samples and Rodinia programs (-run ports; their nvcc originals are
timed by internal/benchsuite/testdata/ports/run.sh), the stream pool, events, array
allocation, graph replays against launches, and compile times, and with two
devices a peer copy from device 0 to device 1 against the driver's raw peer
copy; on the CPU, construct kernels (saxpy, the demo's heat step, a
stencil, a reduction, branches, loops, math, a serial loop, short rows) on
one core and on two against the same loops in plain Go (-run CPU).
GPU-only figures are skipped on the CPU, CPU-only ones on a GPU.
The exit status is 1 when a figure misses its bar.

flags:
`

// benchCmd is the bench verb. Usage errors exit 2; a suite that cannot run
// or a missed bar exits 1.
func benchCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench", stderr)
	archName := fs.String("arch", "auto", "backend: auto, cpu, cuda, amdgpu or vulkan")
	asJSON := fs.Bool("json", false, "print the rows as JSON")
	quick := fs.Bool("quick", false, "small sizes and few iterations (a smoke run)")
	only := fs.String("run", "", "run only the measurements whose name matches this regular expression (e.g. stencil|n-body)")
	printUsage := func(w io.Writer) {
		fmt.Fprint(w, benchUsage)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(stdout)
			return 0
		}
		fmt.Fprintln(stderr)
		printUsage(stderr)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "qd bench: unexpected argument %q\n\n", fs.Arg(0))
		printUsage(stderr)
		return 2
	}
	arch, ok := map[string]qd.Arch{"auto": qd.Auto, "cpu": qd.CPU, "cuda": qd.CUDA, "amdgpu": qd.AMDGPU, "vulkan": qd.Vulkan}[strings.ToLower(*archName)]
	if !ok {
		fmt.Fprintf(stderr, "qd bench: -arch %q: want auto, cpu, cuda or amdgpu\n\n", *archName)
		printUsage(stderr)
		return 2
	}
	var runRE *regexp.Regexp
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fmt.Fprintf(stderr, "qd bench: -run: %v\n\n", err)
			printUsage(stderr)
			return 2
		}
		runRE = re
	}
	t0 := time.Now()
	p, err := qd.Init(qd.WithArch(arch))
	if err != nil {
		fmt.Fprintf(stderr, "qd bench: %v\n", err)
		return 1
	}
	defer p.Close()
	opt := benchsuite.Options{Quick: *quick, FirstInit: time.Since(t0), Run: runRE}
	if !*asJSON {
		fmt.Fprintf(stdout, "qd bench on %s\n", p.Device())
		opt.Log = stderr
	}
	rows, err := benchsuite.Run(p, opt)
	if err != nil {
		fmt.Fprintf(stderr, "qd bench: %v\n", err)
		return 1
	}
	if *asJSON {
		err = benchsuite.WriteJSON(stdout, p.Device().String(), rows)
	} else {
		err = benchsuite.WriteTable(stdout, rows)
	}
	if err != nil {
		fmt.Fprintf(stderr, "qd bench: %v\n", err)
		return 1
	}
	if n := benchsuite.Failed(rows); n > 0 {
		fmt.Fprintf(stderr, "qd bench: %d figure(s) miss their bar\n", n)
		return 1
	}
	return 0
}
