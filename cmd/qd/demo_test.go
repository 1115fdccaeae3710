package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quadrants-go/qd"
)

func runDemoVerb(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(append([]string{"demo"}, args...), &o, &e)
	return code, o.String(), e.String()
}

// tiny are flags for a demo that takes a fraction of a second on the CPU.
var tiny = []string{"-sims", "3", "-size", "16", "-steps", "3", "-walkers", "200", "-elements", "4096", "-time", "5ms"}

// TestDemoOutput runs a small demo on the CPU and checks the shape of what
// it prints: the header, one plain progress line per phase (stdout is not
// a terminal), each section with its rows and summary, and the check.
func TestDemoOutput(t *testing.T) {
	code, out, errs := runDemoVerb(append([]string{"-arch", "cpu"}, tiny...)...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if errs != "" {
		t.Errorf("stderr: %s", errs)
	}
	if strings.ContainsAny(out, "\r\033") {
		t.Errorf("piped output holds terminal control characters: %q", out)
	}
	x := ` +\S+ +\d+\.\d\d×`
	for _, re := range []string{
		`(?m)^qd demo on .* \(CPU, \d+ cores?\): four ways streams pay off, each checked against plain Go$`,
		`(?m)^\[1/14\] compiling demo_kernels.go$`,
		`(?m)^\[\d+/14\] section 1: one stream$`,
		`(?m)^\[14/14\] section 4: 4 StreamParallel groups$`,
		`(?m)^compiled 5 kernels from demo_kernels.go in \S+$`,
		`(?m)^1\. copy/compute overlap: 4,096 float32 in 16 chunks, each copied in from a HostArray, worked on \(\d+ multiply-adds? an element\) and copied back$`,
		`(?m)^  one stream` + x + `$`,
		`(?m)^  4 streams, chunks in turn` + x + `$`,
		`(?m)^  plain Go, one goroutine` + x + `  \(copies and kernel, timed on 1/1 of the elements\)$`,
		`(?m)^2\. independent work: 3 Monte Carlo simulations of 200 random walkers, [\d,]+ steps each$`,
		`(?m)^  a stream per simulation` + x + `$`,
		`(?m)^  plain Go, one goroutine` + x + `  \(timed on 1/18 of the walkers\)$`,
		`(?m)^3\. launch-bound work: 3 heat simulations of 16×16 cells, 3 steps each: 9 kernels$`,
		`(?m)^  launched one by one, a stream each` + x + `$`,
		`(?m)^  captured once, replayed as a graph` + x + `$`,
		`(?m)^4\. stream-parallel groups: one kernel, 4 loops of 200 random walkers, [\d,]+ steps each$`,
		`(?m)^  4 loops, one after the other` + x + `$`,
		`(?m)^  4 StreamParallel groups` + x + `$`,
		`(?m)^all 8 qd runs match the plain-Go reference exactly$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks %s\n%s", re, out)
		}
	}
	if n := strings.Count(out, "\n  → "); n != 4 {
		t.Errorf("%d summary lines, want 4:\n%s", n, out)
	}
}

// TestDemoTerminalProgress: on a terminal the progress is one line
// rewritten in place, and it is cleared before the results.
func TestDemoTerminalProgress(t *testing.T) {
	var out bytes.Buffer
	cfg := demoConfig{arch: qd.CPU, sims: 2, size: 8, steps: 2, walkers: 64, elements: 1024, streams: 2, budget: time.Millisecond, tty: true}
	if err := runDemo(cfg, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "\r\033[K[1/14] compiling demo_kernels.go") {
		t.Errorf("no in-place progress line: %q", s)
	}
	if strings.Contains(s, "[1/14] compiling demo_kernels.go\n") {
		t.Errorf("plain progress lines on a terminal: %q", s)
	}
	if !strings.Contains(s, "\r\033[Kcompiled 5 kernels") {
		t.Errorf("progress line not cleared before the results: %q", s)
	}
}

// TestDemoArchAuto: the default backend always runs (the CPU without a GPU).
func TestDemoArchAuto(t *testing.T) {
	if code, out, errs := runDemoVerb(tiny...); code != 0 || !strings.Contains(out, "match the plain-Go reference") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
}

// TestDemoTrace: -trace writes a trace that qd trace renders, with a lane
// for the streams the demo used.
func TestDemoTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.json")
	code, out, errs := runDemoVerb(append([]string{"-arch", "cpu", "-trace", path}, tiny...)...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if !strings.Contains(out, "trace written to "+path) {
		t.Errorf("no word of the trace:\n%s", out)
	}
	svg := filepath.Join(t.TempDir(), "demo.svg")
	if code, o, e := runTrace(path, "-o", svg); code != 0 {
		t.Fatalf("qd trace: exit %d\n%s%s", code, o, e)
	}
	doc, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if n := lanes(t, doc); n < 4 {
		t.Errorf("%d lanes in the demo's trace, want several streams", n)
	}
}

// A run that fails after -trace's file was opened leaves no file behind
// if it made it, and leaves one that was there as it was.
func TestDemoTraceOnFailure(t *testing.T) {
	arch := ""
	for _, c := range []struct {
		arch qd.Arch
		flag string
	}{{qd.AMDGPU, "amdgpu"}, {qd.CUDA, "cuda"}} {
		usable := false
		for _, in := range qd.Devices() {
			usable = usable || (in.Arch == c.arch && in.Err == nil)
		}
		if !usable {
			arch = c.flag
			break
		}
	}
	if arch == "" {
		t.Skip("every GPU backend is usable here: no run fails after opening the trace's file")
	}
	dir := t.TempDir()
	fresh, old := filepath.Join(dir, "fresh.json"), filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, []byte("an earlier trace"), 0o666); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fresh, old} {
		if code, _, errs := runDemoVerb(append([]string{"-arch", arch, "-trace", path}, tiny...)...); code != 1 {
			t.Fatalf("-arch %s: exit %d, want 1: %s", arch, code, errs)
		}
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Error("the failed run left the trace file it made")
	}
	if b, err := os.ReadFile(old); err != nil || string(b) != "an earlier trace" {
		t.Errorf("the failed run changed the file that was there: %q, %v", b, err)
	}
}

// TestDemoUnavailableArch: a backend that cannot run is exit 1 with the
// reason, not a usage error.
func TestDemoUnavailableArch(t *testing.T) {
	ok := map[qd.Arch]bool{}
	for _, in := range qd.Devices() {
		ok[in.Arch] = ok[in.Arch] || in.Err == nil
	}
	for _, c := range []struct {
		arch qd.Arch
		flag string
	}{{qd.AMDGPU, "amdgpu"}, {qd.CUDA, "cuda"}} {
		code, out, errs := runDemoVerb(append([]string{"-arch", c.flag}, tiny...)...)
		switch {
		case ok[c.arch] && code != 0:
			t.Errorf("-arch %s with a device: exit %d\nstdout: %s\nstderr: %s", c.flag, code, out, errs)
		case !ok[c.arch] && (code != 1 || !strings.Contains(errs, c.flag+" backend is unavailable")):
			t.Errorf("-arch %s without a device: exit %d, stderr %q", c.flag, code, errs)
		}
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
		{"-h", []string{"-h"}, 0, "-walkers", ""},
		{"bad flag", []string{"-bogus"}, 2, "", "flag provided but not defined: -bogus"},
		{"bad value", []string{"-sims", "many"}, 2, "", "invalid value \"many\" for flag -sims"},
		{"bad arch", []string{"-arch", "tpu"}, 2, "", `-arch "tpu": want auto, cpu, cuda or amdgpu`},
		{"no sims", []string{"-sims", "0"}, 2, "", "-sims 0 is outside"},
		{"tiny grid", []string{"-size", "2"}, 2, "", "-size 2 is outside"},
		{"no steps", []string{"-steps", "0"}, 2, "", "-steps 0 is outside"},
		{"negative walkers", []string{"-walkers", "-1"}, 2, "", "-walkers -1 is outside"},
		{"few elements", []string{"-elements", "15"}, 2, "", "-elements 15 is outside [16, "},
		{"no streams", []string{"-streams", "0"}, 2, "", "-streams 0 is outside"},
		{"negative time", []string{"-time", "-1s"}, 2, "", "-time -1s is outside"},
		{"extra argument", []string{"now"}, 2, "", `unexpected argument "now"`},
		{"no such device", []string{"-arch", "cpu", "-device", "3"}, 1, "", "WithDevice(3): the cpu backend has 1 device (0)"},
		{"negative device", []string{"-device", "-1"}, 2, "", "-device -1: device ordinals start at 0"},
		{"too many walkers", []string{"-walkers", "20000000"}, 2, "", "-walkers 20000000 is outside [1, 16777216] (0: from the device)"},
		{"trace to nowhere", []string{"-arch", "cpu", "-trace", "/nonexistent-dir/t.json"}, 1, "", "qd demo: -trace: open /nonexistent-dir/t.json: no such file or directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runDemoVerb(c.args...)
			if code != c.code || !strings.Contains(out, c.stdout) || !strings.Contains(errs, c.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, c.code, out, errs)
			}
			if c.code == 2 && !strings.Contains(errs, "usage: qd demo") {
				t.Errorf("usage error without the usage: %s", errs)
			}
			if c.code != 0 && out != "" {
				t.Errorf("a run that fails at its flags ran first:\n%s", out)
			}
		})
	}
}

// TestSizeFor: sizes left at zero come from the device; given ones stay.
func TestSizeFor(t *testing.T) {
	h100 := qd.DeviceInfo{Arch: qd.CUDA, Cores: 132, MemoryBytes: 80 << 30}
	small := qd.DeviceInfo{Arch: qd.AMDGPU, Cores: 16, MemoryBytes: 1 << 30}
	cpu := qd.DeviceInfo{Arch: qd.CPU, Cores: 2}
	for _, c := range []struct {
		name string
		in   qd.DeviceInfo
		cfg  demoConfig
		want demoConfig
	}{
		{"H100", h100, demoConfig{}, demoConfig{walkers: 8448, size: 128, elements: 1 << 26, budget: 50 * time.Millisecond}},
		{"1 GiB GPU", small, demoConfig{}, demoConfig{walkers: 1024, size: 128, elements: 1 << 25, budget: 50 * time.Millisecond}},
		{"CPU", cpu, demoConfig{}, demoConfig{walkers: 2048, size: 128, elements: 1 << 22, budget: 300 * time.Millisecond}},
		{"given", h100, demoConfig{walkers: 7, size: 9, elements: 99, budget: time.Second}, demoConfig{walkers: 7, size: 9, elements: 99, budget: time.Second}},
	} {
		if got := sizeFor(c.cfg, c.in); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestDemoKernelsNative: the kernel file is ordinary Go: walk4Groups
// called natively equals four walk calls, and lcgJump equals stepping the
// generator.
func TestDemoKernelsNative(t *testing.T) {
	const n, steps = 5, 77
	var s, want [4][]uint32
	var x, wantX [4][]int32
	for k := range 4 {
		s[k], want[k] = make([]uint32, n), make([]uint32, n)
		x[k], wantX[k] = make([]int32, n), make([]int32, n)
		for i := range n {
			s[k][i] = uint32(10*k + i)
			want[k][i] = s[k][i]
		}
		walk(want[k], wantX[k], steps)
	}
	walk4Groups(s[0], x[0], s[1], x[1], s[2], x[2], s[3], x[3], steps)
	mul, add := lcgJump(steps)
	for k := range 4 {
		for i := range n {
			if s[k][i] != want[k][i] || x[k][i] != wantX[k][i] {
				t.Fatalf("simulation %d walker %d: (%d, %d), want (%d, %d)", k, i, s[k][i], x[k][i], want[k][i], wantX[k][i])
			}
			if j := mul*uint32(10*k+i) + add; j != want[k][i] {
				t.Fatalf("lcgJump: walker %d of %d: %d, want %d", i, k, j, want[k][i])
			}
		}
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 67108864: "67,108,864", -1234: "-1,234"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}
