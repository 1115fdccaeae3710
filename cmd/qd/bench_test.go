package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The CPU runs of the suite use -quick: the full sizes are for a GPU.

func TestBenchTable(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"bench", "-arch", "cpu", "-quick"}, &out, &errb)
	// A missed bar on a loaded CI machine exits 1; the shape is what counts.
	if code != 0 && code != 1 {
		t.Fatalf("exit %d; stderr:\n%s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "qd bench on CPU") {
		t.Fatalf("unexpected output:\n%s", out.String())
	}
	if !strings.HasPrefix(lines[1], "figure") || !strings.Contains(lines[1], "reference") || !strings.Contains(lines[1], "bar") {
		t.Errorf("no header line: %q", lines[1])
	}
	for _, want := range []string{"launch host cost", "K=32 streams speedup", "G=8 stream-parallel groups", "saxpy bandwidth", "reduction", "stencil", "stream pool", "event record", "Ndarray alloc", "compile 20-line kernel", "compile, cache hit"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no row %q in:\n%s", want, out.String())
		}
	}
	if !strings.Contains(out.String(), "skip") || !strings.Contains(out.String(), "GPU only") {
		t.Errorf("GPU-only rows are not skipped with a reason:\n%s", out.String())
	}
}

func TestBenchJSON(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"bench", "-json", "-quick", "-arch=cpu"}, &out, &errb)
	if code != 0 && code != 1 {
		t.Fatalf("exit %d; stderr:\n%s", code, errb.String())
	}
	var doc struct {
		Device string `json:"device"`
		Rows   []struct {
			Name   string  `json:"name"`
			Value  float64 `json:"value"`
			Unit   string  `json:"unit"`
			Status string  `json:"status"`
		} `json:"rows"`
		Failed int `json:"failed"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, out.String())
	}
	if !strings.HasPrefix(doc.Device, "CPU") || len(doc.Rows) < 15 {
		t.Fatalf("device %q, %d rows", doc.Device, len(doc.Rows))
	}
	if (doc.Failed > 0) != (code == 1) {
		t.Errorf("failed = %d but exit %d", doc.Failed, code)
	}
	for _, r := range doc.Rows {
		if r.Name == "" || r.Status == "" {
			t.Errorf("incomplete row %+v", r)
		}
	}
}

func TestBenchUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "--help"}, &out, &errb); code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	if !strings.Contains(out.String(), "usage: qd bench") || !strings.Contains(out.String(), "-json") {
		t.Errorf("--help output:\n%s", out.String())
	}
	for _, args := range [][]string{{"bench", "-nope"}, {"bench", "-arch", "tpu"}, {"bench", "extra"}} {
		out.Reset()
		errb.Reset()
		if code := run(args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
		if !strings.Contains(errb.String(), "usage: qd bench") {
			t.Errorf("%q: no usage on stderr:\n%s", args, errb.String())
		}
	}
	out.Reset()
	run([]string{"help"}, &out, &errb)
	if !strings.Contains(out.String(), "qd bench") {
		t.Errorf("qd help does not list bench:\n%s", out.String())
	}
}
