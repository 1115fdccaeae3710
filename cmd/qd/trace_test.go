package main

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/trace"
)

// writeTrace records a small two-stream trace into dir and returns its path.
func writeTrace(t *testing.T, dir string) string {
	t.Helper()
	r := trace.NewRecorder("CPU", 0)
	r.Span(trace.Span{Stream: "default", Kernel: "saxpy", Kind: "parallel", Start: 1000, End: 5000})
	r.Span(trace.Span{Stream: "stream 1", StreamID: 1, Kernel: "fill<&>", Kind: "serial", Start: 2000, End: 3000})
	path := filepath.Join(dir, "run.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// lanes checks that doc is well-formed XML and counts its lane groups.
func lanes(t *testing.T, doc []byte) int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	n := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatalf("SVG not well-formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "g" {
			for _, a := range se.Attr {
				if a.Name.Local == "class" && a.Value == "lane" {
					n++
				}
			}
		}
	}
}

func runTrace(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(append([]string{"trace"}, args...), &o, &e)
	return code, o.String(), e.String()
}

func TestTraceVerb(t *testing.T) {
	dir := t.TempDir()
	in := writeTrace(t, dir)

	code, out, errs := runTrace(in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "run.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if n := lanes(t, svg); n != 2 {
		t.Fatalf("%d lanes, want 2", n)
	}
	if !strings.Contains(out, "run.svg: 2 lanes, 2 spans") {
		t.Fatalf("stdout %q", out)
	}

	// Flags after the file, and -o -.
	code, out, errs = runTrace(in, "-o", "-", "-width", "800")
	if code != 0 || lanes(t, []byte(out)) != 2 || !strings.Contains(out, `width="800"`) {
		t.Fatalf("-o -: exit %d, %s", code, errs)
	}
	custom := filepath.Join(dir, "x.svg")
	if code, _, errs = runTrace("-o", custom, in); code != 0 {
		t.Fatalf("-o file: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(custom); err != nil {
		t.Fatal(err)
	}
	// The SVG is written beside its name and renamed: nothing else stays.
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmps) > 0 {
		t.Errorf("left behind: %v", tmps)
	}
	code, _, errs = runTrace("-o", filepath.Join(dir, "nowhere", "x.svg"), in)
	if code != 1 || !strings.Contains(errs, "writing "+filepath.Join(dir, "nowhere", "x.svg")+": no such file or directory") {
		t.Errorf("-o into a missing folder: exit %d: %s", code, errs)
	}
}

func TestTraceVerbErrors(t *testing.T) {
	dir := t.TempDir()
	in := writeTrace(t, dir)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{\"traceEvents\": [\n {\"ph\":\"X\",}]}"), 0o666)
	invalid := filepath.Join(dir, "invalid.json")
	os.WriteFile(invalid, []byte(`{"traceEvents":[{"ph":"X","name":"k","pid":1,"tid":1,"ts":1,"dur":-1}]}`), 0o666)
	svgIn := filepath.Join(dir, "t.svg")
	os.WriteFile(svgIn, []byte("{}"), 0o666)
	// A gzip bomb: 4 MiB of JSON from 4 kB.
	bomb := filepath.Join(dir, "bomb.json.gz")
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte("["))
	zw.Write(bytes.Repeat([]byte(" "), 4<<20))
	zw.Write([]byte("]"))
	zw.Close()
	os.WriteFile(bomb, z.Bytes(), 0o666)
	zeros := filepath.Join(dir, "zeros.json")
	os.WriteFile(zeros, make([]byte, 1<<20), 0o666)

	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"help", []string{"--help"}, 0, "usage: qd trace", ""},
		{"-h", []string{"-h"}, 0, "-width", ""},
		{"no args", nil, 2, "", "missing FILE"},
		{"bad flag", []string{"-bogus", in}, 2, "", "flag provided but not defined: -bogus"},
		{"bad width", []string{"-width", "5", in}, 2, "", "-width 5 is outside"},
		{"two files", []string{in, in}, 2, "", "one FILE at a time"},
		{"overwrite input", []string{svgIn}, 2, "", "is the input itself"},
		{"missing file", []string{filepath.Join(dir, "nope.json")}, 1, "", "no such file"},
		{"bad JSON", []string{bad}, 1, "", "bad.json: invalid JSON at line 2, column 12"},
		{"invalid trace", []string{invalid}, 1, "", "dur -1 is negative"},
		{"too large", []string{"-max-mib", "1", bomb}, 1, "", "bomb.json.gz: more than 1 MiB of JSON (once decompressed), the limit; -max-mib raises it"},
		{"large enough", []string{"-max-mib", "5", "-o", "-", bomb}, 0, "<svg", ""},
		{"too many events", []string{"-max-events", "3", in}, 1, "", "run.json: more than 3 events, the limit; -max-events raises it"},
		{"not JSON", []string{zeros}, 1, "", `zeros.json: want a JSON object or array at the top level, found '\x00'`},
		{"bad -max-mib", []string{"-max-mib", "0", in}, 2, "", "-max-mib 0 is outside [1, 1048576]"},
		{"huge -max-mib", []string{"-max-mib", "99999999999999", in}, 2, "", "-max-mib 99999999999999 is outside"},
		{"bad -max-events", []string{"-max-events", "-1", in}, 2, "", "-max-events -1 is outside [1, 1073741824]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runTrace(c.args...)
			if code != c.code || !strings.Contains(out, c.stdout) || !strings.Contains(errs, c.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, c.code, out, errs)
			}
		})
	}
	// A failed run writes no SVG.
	if _, err := os.Stat(filepath.Join(dir, "invalid.svg")); err == nil {
		t.Fatal("invalid trace left an SVG")
	}
}

// /dev/zero is refused at its first bytes: it used to be read until the
// process ran out of memory.
func TestTraceDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip(err)
	}
	code, _, errs := runTrace("-o", filepath.Join(t.TempDir(), "z.svg"), "/dev/zero")
	if code != 1 || !strings.Contains(errs, "/dev/zero: want a JSON object or array at the top level") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}
