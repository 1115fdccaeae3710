package native

import (
	"runtime"
	"testing"
)

// TestPrivate: a loop long enough for its target gets copies, reused by
// later chunks and merged into the target once each; a short one gets none
// and adds through the atomic.
func TestPrivate(t *testing.T) {
	add := func(p *int32, v int32) int32 { old := *p; *p += v; return old }
	h := []int32{10, 20, 30, 40}
	workers := runtime.GOMAXPROCS(0)
	if p := NewPrivate(h, privateOver*len(h)*workers-1); p.Get() != nil {
		t.Error("a loop too short for copies got one")
	}
	p := NewPrivate(h, privateOver*len(h)*workers)
	a, b := p.Get(), p.Get() // two chunks at once: two copies
	if a == nil || b == nil || &a[0] == &b[0] {
		t.Fatalf("copies %p %p: want two distinct ones", a, b)
	}
	Scatter(a, h, 1, 5, add)
	Scatter(b, h, 3, 7, add)
	p.Put(a)
	c := p.Get() // a later chunk takes a copy back, uncleared
	if &c[0] != &a[0] {
		t.Error("a later chunk got a new copy instead of a free one")
	}
	Scatter(c, h, 1, 1, add)
	p.Put(c)
	p.Put(b)
	if h[1] != 20 || h[3] != 40 {
		t.Fatalf("the target changed before the merge: %v", h)
	}
	p.Merge(add)
	if want := []int32{10, 26, 30, 47}; h[0] != want[0] || h[1] != want[1] || h[2] != want[2] || h[3] != want[3] {
		t.Errorf("after the merge %v, want %v", h, want)
	}
	Scatter(nil, h, 0, 2, add) // no copy: straight to the target
	if h[0] != 12 {
		t.Errorf("a scatter without a copy left %d", h[0])
	}
}
