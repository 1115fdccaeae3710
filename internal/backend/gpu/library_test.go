package gpu

import (
	"errors"
	"strings"
	"testing"
)

func TestCStrings(t *testing.T) {
	b := CString("k_saxpy")
	if len(b) != 8 || b[7] != 0 || string(b[:7]) != "k_saxpy" {
		t.Errorf("CString = %q", b)
	}
	if got := GoString(&b[0]); got != "k_saxpy" {
		t.Errorf("GoString = %q", got)
	}
	if GoString(nil) != "" {
		t.Error("GoString(nil) not empty")
	}
	if got := CBytes([]byte("abc\x00def")); got != "abc" {
		t.Errorf("CBytes = %q", got)
	}
	if got := CBytes([]byte("abc")); got != "abc" {
		t.Errorf("CBytes without NUL = %q", got)
	}
}

// A hot-path frame round trip allocates nothing once the pool is warm.
func TestFramePoolNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under -race")
	}
	putFrame(getFrame())
	if n := testing.AllocsPerRun(100, func() {
		f := getFrame()
		f.a[0] = f.outAddr(0)
		putFrame(f)
	}); n != 0 {
		t.Errorf("getFrame/putFrame: %v allocations", n)
	}
}

func TestOpenLibraryMissing(t *testing.T) {
	_, err := OpenLibrary("libqd-no-such-library.so.7", "libqd-nor-this.so")
	if !errors.Is(err, ErrNoDriver) {
		t.Fatalf("OpenLibrary of missing names: %v", err)
	}
	for _, n := range []string{"libqd-no-such-library.so.7", "libqd-nor-this.so"} {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not mention %s", err, n)
		}
	}
}

// Bind names each Fn by what it bound, refuses a missing required
// function and leaves a missing optional one unbound.
func TestBind(t *testing.T) {
	var lib Library // no handle: nothing resolves
	var req, opt Fn
	err := Bind(&lib, []Binding{{Fn: &opt, Names: []string{"optA", "optB"}, Optional: true}})
	if err != nil || opt.Bound() || opt.Name != "optA" {
		t.Errorf("optional: err %v, fn %+v", err, opt)
	}
	err = Bind(&lib, []Binding{{Fn: &req, Names: []string{"reqA"}}})
	if !errors.Is(err, ErrNoDriver) || !strings.Contains(err.Error(), "reqA") {
		t.Errorf("required: %v", err)
	}
}
