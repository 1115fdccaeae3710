package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quadrants-go/qd"
)

// TestRun runs the example on every device of the backend, one slab per
// device and more slabs than devices (Programs sharing a device exchange
// halos the same way), and on one device alone.
func TestRun(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  config
	}{
		{"every device", config{rows: 61, cols: 67, steps: 7, work: 5, check: true}},
		{"3 slabs", config{rows: 61, cols: 67, steps: 7, work: 5, parts: 3, check: true}},
		{"one device, 2 slabs", config{rows: 40, cols: 33, steps: 4, work: 3, devices: 1, parts: 2, check: true}},
		{"a slab per row", config{rows: 4, cols: 16, steps: 5, work: 2, parts: 4, check: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(&out, c.cfg); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "results match the Go reference") {
				t.Errorf("output: %s", out.String())
			}
			t.Log(out.String())
		})
	}
}

// TestRunErrors: flags out of range, and more devices than there are
// (an error that names how many there are).
func TestRunErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  config
		want string
	}{
		{"no rows", config{rows: 0, cols: 4}, "at least 1"},
		{"negative steps", config{rows: 4, cols: 4, steps: -1}, "at least 0"},
		{"too many devices", config{rows: 4, cols: 4, devices: 1 << 10}, "WithDevice(1)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := qd.Init()
			if err != nil {
				t.Fatal(err)
			}
			n := len(filterDevices(p.Arch()))
			p.Close()
			if c.cfg.devices > 0 {
				c.want = fmt.Sprintf("WithDevice(%d)", n)
			}
			if err := run(&bytes.Buffer{}, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("run: %v, want an error saying %q", err, c.want)
			}
		})
	}
}

func filterDevices(a qd.Arch) []qd.DeviceInfo {
	var out []qd.DeviceInfo
	for _, in := range qd.Devices() {
		if in.Arch == a && in.Err == nil {
			out = append(out, in)
		}
	}
	return out
}

// BenchmarkMultiGPU times the example's steps (the check aside) at a
// compute-bound size on one GPU, then on every GPU, and reports the
// speedup of the second over the first: the multi-GPU bar is ≥ 1.8 on
// two GPUs. It needs two GPUs: it skips below that (fails under
// QD_GPU_RUN=1 with QD_GPU_COUNT ≥ 2, or under QD_GPU_RUN=1 without a GPU).
//
//	QD_GPU_RUN=1 QD_GPU_COUNT=2 go test ./examples/multigpu -run XXX -bench MultiGPU -benchtime 10x
func BenchmarkMultiGPU(b *testing.B) {
	p, err := qd.Init()
	if err != nil {
		b.Fatal(err)
	}
	arch := p.Arch()
	p.Close()
	n := len(filterDevices(arch))
	required := os.Getenv("QD_GPU_RUN") == "1"
	need, _ := strconv.Atoi(os.Getenv("QD_GPU_COUNT"))
	switch {
	case arch == qd.CPU && required:
		b.Fatal("QD_GPU_RUN=1 but no GPU backend opened")
	case arch == qd.CPU:
		b.Skip("no GPU: the benchmark compares one GPU with several")
	case n < 2 && need >= 2:
		b.Fatalf("QD_GPU_COUNT=%d but %s shows %d device(s)", need, arch, n)
	case n < 2:
		b.Skipf("needs 2 %s devices, this machine has %d: skipped (set QD_GPU_COUNT=2 where there are)", arch, n)
	}
	const rows, cols, work, steps = 8192, 8192, 512, 10
	var one time.Duration
	for _, devices := range []int{1, n} {
		b.Run(fmt.Sprintf("devices=%d", devices), func(b *testing.B) {
			ps, err := openDevices(devices)
			if err != nil {
				b.Fatal(err)
			}
			defer closeAll(ps)
			s, err := newSim(ps, devices, initial(rows, cols), cols, work)
			if err != nil {
				b.Fatal(err)
			}
			run := func() {
				if err := s.advance(steps); err != nil {
					b.Fatal(err)
				}
				if err := s.wait(); err != nil {
					b.Fatal(err)
				}
			}
			run() // warm: modules loaded, peer access enabled
			for b.Loop() {
				run()
			}
			per := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(float64(rows*cols*steps)/per.Seconds(), "cells/s")
			if devices == 1 {
				one = per
			} else if one > 0 {
				speedup := one.Seconds() / per.Seconds()
				b.ReportMetric(speedup, "speedup")
				b.Logf("%d GPUs: %.3g× one GPU (bar ≥ %.2g on two)", devices, speedup, 1.8)
			}
		})
	}
}
