package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/quadrants-go/qd"
)

func runDemoVerb(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(append([]string{"demo"}, args...), &o, &e)
	return code, o.String(), e.String()
}

// TestDemoOutput runs a small demo on the CPU and checks the shape of what
// it prints: the header, one plain progress line per phase (stdout is not
// a terminal), the table with a time and a speedup per run, and the check.
func TestDemoOutput(t *testing.T) {
	code, out, errs := runDemoVerb("-arch", "cpu", "-sims", "5", "-size", "16", "-steps", "3")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if errs != "" {
		t.Errorf("stderr: %s", errs)
	}
	if strings.ContainsAny(out, "\r\033") {
		t.Errorf("piped output holds terminal control characters: %q", out)
	}
	for _, re := range []string{
		`(?m)^qd demo: 5 heat simulations of 16×16 cells, 3 steps each, on CPU \(`,
		`(?m)^\[1/6\] compiling heat_kernels.go$`,
		`(?m)^\[2/6\] plain-Go reference`,
		`(?m)^\[3/6\] all on one stream$`,
		`(?m)^\[6/6\] 4 StreamParallel groups$`,
		`(?m)^compiled 3 kernels from heat_kernels.go in \S+$`,
		`(?m)^run +time +speedup$`,
		`(?m)^independent kernels, 15 launches:$`,
		`(?m)^  all on one stream +\S+ +1\.00×$`,
		`(?m)^  one stream per simulation +\S+ +\d+\.\d\d×$`,
		`(?m)^one kernel for 4 simulations, 6 launches, padded to 8 simulations:$`,
		`(?m)^  4 loops, no groups +\S+ +1\.00×$`,
		`(?m)^  4 StreamParallel groups +\S+ +\d+\.\d\d×$`,
		`(?m)^  heatStep called natively +\S+$`,
		`(?m)^all 4 runs match the plain-Go reference exactly$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks %s\n%s", re, out)
		}
	}
}

// TestDemoTerminalProgress: on a terminal the progress is one line
// rewritten in place, and it is cleared before the table.
func TestDemoTerminalProgress(t *testing.T) {
	var out bytes.Buffer
	err := runDemo(demoConfig{arch: qd.CPU, sims: 2, size: 8, steps: 2, tty: true}, &out)
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "\r\033[K[1/6] compiling heat_kernels.go") {
		t.Errorf("no in-place progress line: %q", s)
	}
	if strings.Contains(s, "[1/6] compiling heat_kernels.go\n") {
		t.Errorf("plain progress lines on a terminal: %q", s)
	}
	if !strings.Contains(s, "\r\033[Kcompiled 3 kernels") {
		t.Errorf("progress line not cleared before the results: %q", s)
	}
}

// TestDemoArchAuto: the default backend always runs (the CPU without a GPU).
func TestDemoArchAuto(t *testing.T) {
	if code, out, errs := runDemoVerb("-sims", "2", "-size", "8", "-steps", "2"); code != 0 || !strings.Contains(out, "match the plain-Go reference") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
}

// TestDemoUnavailableArch: a backend that cannot run is exit 1 with the
// reason, not a usage error.
func TestDemoUnavailableArch(t *testing.T) {
	amdOK := false
	for _, in := range qd.Devices() {
		amdOK = amdOK || (in.Arch == qd.AMDGPU && in.Err == nil)
	}
	if code, _, errs := runDemoVerb("-arch", "amdgpu", "-sims", "1", "-size", "8", "-steps", "1"); !amdOK && (code != 1 || !strings.Contains(errs, "amdgpu backend is unavailable")) {
		t.Errorf("-arch amdgpu: exit %d, stderr %q", code, errs)
	}
	cudaOK := false
	for _, in := range qd.Devices() {
		cudaOK = cudaOK || (in.Arch == qd.CUDA && in.Err == nil)
	}
	code, out, errs := runDemoVerb("-arch", "cuda", "-sims", "2", "-size", "8", "-steps", "2")
	switch {
	case cudaOK && code != 0:
		t.Errorf("-arch cuda with a GPU: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	case !cudaOK && (code != 1 || !strings.Contains(errs, "cuda backend is unavailable")):
		t.Errorf("-arch cuda without a GPU: exit %d, stderr %q", code, errs)
	}
}

func TestDemoUsage(t *testing.T) {
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"--help", []string{"--help"}, 0, "usage: qd demo", ""},
		{"-h", []string{"-h"}, 0, "-steps", ""},
		{"bad flag", []string{"-bogus"}, 2, "", "flag provided but not defined: -bogus"},
		{"bad value", []string{"-sims", "many"}, 2, "", "invalid value \"many\" for flag -sims"},
		{"bad arch", []string{"-arch", "tpu"}, 2, "", `-arch "tpu": want auto, cpu, cuda or amdgpu`},
		{"no sims", []string{"-sims", "0"}, 2, "", "-sims 0 is outside"},
		{"tiny grid", []string{"-size", "2"}, 2, "", "-size 2 is outside"},
		{"no steps", []string{"-steps", "0"}, 2, "", "-steps 0 is outside"},
		{"extra argument", []string{"now"}, 2, "", `unexpected argument "now"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runDemoVerb(c.args...)
			if code != c.code || !strings.Contains(out, c.stdout) || !strings.Contains(errs, c.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, c.code, out, errs)
			}
			if c.code == 2 && !strings.Contains(errs, "usage: qd demo") {
				t.Errorf("usage error without the usage: %s", errs)
			}
		})
	}
}

// TestHeatKernelsNative: the kernel file is ordinary Go: heatStep4Groups
// called natively equals four heatStep calls.
func TestHeatKernelsNative(t *testing.T) {
	const n = 6
	var ins, outs, want [4][][]float32
	for k := range 4 {
		ins[k], outs[k], want[k] = initial(k, n), initial(0, n), initial(0, n)
		heatStep(ins[k], want[k], alpha)
	}
	heatStep4Groups(ins[0], outs[0], ins[1], outs[1], ins[2], outs[2], ins[3], outs[3], alpha)
	for k := range 4 {
		for i := range n {
			for j := range n {
				if outs[k][i][j] != want[k][i][j] {
					t.Fatalf("simulation %d cell (%d, %d): %v, want %v", k, i, j, outs[k][i][j], want[k][i][j])
				}
			}
		}
	}
}
