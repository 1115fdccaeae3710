package cpu

import (
	"runtime"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/backend"
)

func TestProcField(t *testing.T) {
	s := "processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor\nflags\t: a:b\n"
	if got := procField(s, "model name"); got != "AMD EPYC 9654 96-Core Processor" {
		t.Errorf("model name = %q", got)
	}
	if got := procField(s, "flags"); got != "a:b" {
		t.Errorf("flags = %q", got)
	}
	if got := procField(s, "MemTotal"); got != "" {
		t.Errorf("MemTotal = %q", got)
	}
}

// The CPU registers itself last in preference, with one device.
func TestRegistered(t *testing.T) {
	b, ok := backend.Lookup("cpu")
	if !ok {
		t.Fatal("the cpu backend is not registered")
	}
	if all := backend.Registered(); all[len(all)-1].Arch != "cpu" {
		t.Errorf("cpu is not the last choice: %v", all)
	}
	d, err := b.Open(0)
	if err != nil || d.Arch() != "cpu" {
		t.Fatalf("Open(0) = %v, %v", d, err)
	}
	if _, err := b.Open(1); err == nil || !strings.Contains(err.Error(), "1 device") {
		t.Errorf("Open(1): %v", err)
	}
	infos, err := b.Devices()
	if err != nil || len(infos) != 1 || infos[0].Cores != runtime.GOMAXPROCS(0) {
		t.Errorf("Devices() = %+v, %v", infos, err)
	}
}
