package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/quadrants-go/qd"
)

func runDevicesVerb(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(append([]string{"devices"}, args...), &o, &e)
	return code, o.String(), e.String()
}

// TestDevicesVerb: a table with the CPU, a row per CUDA device or the
// reason CUDA is unavailable, the same for AMD GPUs, and Auto's choice;
// exit 0 with or without a GPU.
func TestDevicesVerb(t *testing.T) {
	code, out, errs := runDevicesVerb()
	if code != 0 || errs != "" {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	for _, re := range []string{
		`(?m)^BACKEND +# +DEVICE +COMPUTE +CORES +MEMORY +DRIVER$`,
		`(?m)^cpu +0 +.+ +- +\d+ threads +\S+( GiB)? +\w+/\w+$`,
		`(?m)^cuda +(\d+ +.+ +sm_\d+ +\d+ SMs +[\d.]+ GiB +CUDA \d+\.\d+.*|- +unavailable: .+)$`,
		`(?m)^amdgpu +(\d+ +.+ +gfx\w+ .+|- +unavailable: .+)$`,
		`(?m)^qd.Auto picks: (cpu|cuda) .+$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks %s\n%s", re, out)
		}
	}
}

// TestWritePeers: the peer section appears for a backend with several
// devices, and not for one with a single device.
func TestWritePeers(t *testing.T) {
	var b bytes.Buffer
	writePeers(&b, []qd.DeviceInfo{
		{Arch: qd.CPU, Name: "cpu"},
		{Arch: qd.CUDA, Ordinal: 0, Peers: []int{1, 2}},
		{Arch: qd.CUDA, Ordinal: 1, Peers: []int{0}},
		{Arch: qd.CUDA, Ordinal: 2},
	})
	want := "\npeer access (copies between devices go directly; otherwise staged through host memory):\n" +
		"  cuda 0 reaches: 1, 2\n  cuda 1 reaches: 0\n  cuda 2 reaches: none\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	writePeers(&b, []qd.DeviceInfo{{Arch: qd.CPU}, {Arch: qd.CUDA}})
	if b.Len() != 0 {
		t.Errorf("one device per backend: %q, want nothing", b.String())
	}
}

func TestDevicesVerbJSON(t *testing.T) {
	code, out, errs := runDevicesVerb("-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var list []deviceJSON
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(list) < 3 || list[0].Backend != "cpu" || !list[0].Available || list[0].Cores < 1 {
		t.Fatalf("unexpected list: %+v", list)
	}
	for _, d := range list {
		if d.Available == (d.Reason != "") {
			t.Errorf("%s: available %v with reason %q", d.Backend, d.Available, d.Reason)
		}
		if d.Backend == "cuda" && d.Available && (d.ComputeCapability == "" || d.MemoryBytes == 0) {
			t.Errorf("CUDA device without properties: %+v", d)
		}
	}
}

func TestDevicesVerbUsage(t *testing.T) {
	for _, c := range []struct {
		args         []string
		code         int
		stdout, errs string
	}{
		{[]string{"--help"}, 0, "usage: qd devices", ""},
		{[]string{"-h"}, 0, "-json", ""},
		{[]string{"-bogus"}, 2, "", "flag provided but not defined: -bogus"},
		{[]string{"gpu"}, 2, "", `unexpected argument "gpu"`},
	} {
		code, out, errs := runDevicesVerb(c.args...)
		if code != c.code || !strings.Contains(out, c.stdout) || !strings.Contains(errs, c.errs) {
			t.Errorf("%v: exit %d (want %d)\nstdout: %s\nstderr: %s", c.args, code, c.code, out, errs)
		}
	}
}

// TestTopLevelUsage: no verb and unknown verbs are usage errors; help
// lists every verb.
func TestTopLevelUsage(t *testing.T) {
	var o, e bytes.Buffer
	if code := run(nil, &o, &e); code != 2 || !strings.Contains(e.String(), "usage:") {
		t.Errorf("no verb: exit %d, stderr %q", code, e.String())
	}
	o.Reset()
	e.Reset()
	if code := run([]string{"frobnicate"}, &o, &e); code != 2 || !strings.Contains(e.String(), `unknown command "frobnicate"`) {
		t.Errorf("unknown verb: exit %d, stderr %q", code, e.String())
	}
	for _, h := range []string{"help", "-h", "--help"} {
		o.Reset()
		if code := run([]string{h}, &o, &e); code != 0 {
			t.Errorf("%s: exit %d", h, code)
		}
		for _, verb := range []string{"qd devices", "qd demo", "qd trace"} {
			if !strings.Contains(o.String(), verb) {
				t.Errorf("%s: usage lacks %s:\n%s", h, verb, o.String())
			}
		}
	}
}
