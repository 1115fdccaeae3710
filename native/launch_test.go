package native

import (
	"testing"
	"unsafe"
)

// TestRowHeadersKept: Slice2 and Slice3 build an array's row headers once
// per buffer and shape, and again for another shape or element type.
func TestRowHeadersKept(t *testing.T) {
	mem := make([]float32, 24)
	for i := range mem {
		mem[i] = float32(i)
	}
	var rows Rows
	arr := func(shape ...int) Array {
		a := Array{Data: unsafe.Pointer(&mem[0]), Shape: [4]int{1, 1, 1, 1}, Rows: &rows}
		copy(a.Shape[:], shape)
		return a
	}
	launch := func(a Array) *Launch { return NewLaunch("k", "k.go", nil, []Array{a}, nil, nil) }

	a := Slice2[float32](launch(arr(12, 2)), 0)
	b := Slice2[float32](launch(arr(12, 2)), 0)
	if &a[0] != &b[0] {
		t.Error("a second launch over the same buffer and shape built its row headers again")
	}
	if len(a) != 12 || len(a[5]) != 2 || a[5][1] != 11 {
		t.Errorf("rows of (12, 2): %v", a)
	}
	c := Slice2[float32](launch(arr(6, 4)), 0)
	if len(c) != 6 || len(c[5]) != 4 || c[5][3] != 23 {
		t.Errorf("rows of (6, 4) after (12, 2): %v", c)
	}
	u := Slice2[uint32](launch(arr(6, 4)), 0)
	if len(u) != 6 || u[1][0] != *(*uint32)(unsafe.Pointer(&mem[4])) {
		t.Errorf("rows of uint32 after float32: %v", u)
	}
	p := Slice3[float32](launch(arr(2, 3, 4)), 0)
	q := Slice3[float32](launch(arr(2, 3, 4)), 0)
	if &p[0] != &q[0] || len(p) != 2 || len(p[1]) != 3 || p[1][2][3] != 23 {
		t.Errorf("planes of (2, 3, 4), built twice or wrong: %v", p)
	}
	bare := arr(12, 2)
	bare.Rows = nil
	if r := Slice2[float32](launch(bare), 0); len(r) != 12 || r[11][1] != 23 {
		t.Errorf("rows without a cache: %v", r)
	}
}

// TestRegisterVersion: code generated for another Version is not
// registered, so that qd.Compile runs those kernels on the closures.
func TestRegisterVersion(t *testing.T) {
	src := []byte("package k // TestRegisterVersion")
	run := func(*Launch) {}
	Register(Version+1, "k.go", Hash(src), Kernel{Name: "k", Run: run})
	if _, ok := Lookup(src); ok {
		t.Fatal("code of another version was registered")
	}
	Register(Version, "k.go", Hash(src), Kernel{Name: "k", Run: run})
	s, ok := Lookup(src)
	if !ok || s.File != "k.go" || s.Kernels["k"] == nil {
		t.Fatalf("code of this version: %v, %v", s, ok)
	}
}
