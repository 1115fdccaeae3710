package gpu

import "testing"

func TestSizeClass(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{1, 512}, {512, 512}, {513, 1024}, {1000, 1024}, {4096, 4096}, {4097, 8192},
		{1 << 20, 1 << 20}, {1<<20 + 1, 2 << 20}, {3<<20 - 5, 3 << 20},
		{64 << 20, 64 << 20}, {64<<20 + 1, 64<<20 + 1}, {1 << 30, 1 << 30},
	} {
		if got := sizeClass(c.n); got != c.want {
			t.Errorf("sizeClass(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

// Blocks come back only on the stream that freed them, in their class,
// within the byte budget, and not to a closing stream.
func TestBlockCache(t *testing.T) {
	var c blockCache
	s1, s2 := &stream{}, &stream{}
	if !c.keep(s1, 1024, 0x1000) || !c.keep(s1, 1024, 0x2000) || !c.keep(s2, 4096, 0x3000) {
		t.Fatal("keep refused a block under the budget")
	}
	if p := c.take(s2, 1024); p != 0 {
		t.Errorf("s2 took s1's block %#x", p)
	}
	if p := c.take(s1, 2048); p != 0 {
		t.Errorf("a 2048 request took block %#x of another class", p)
	}
	if p := c.take(s1, 1024); p != 0x2000 {
		t.Errorf("take = %#x, want the last kept, 0x2000", p)
	}
	if c.keep(s1, cacheMaxBlock+1, 0x4000) {
		t.Error("kept a block over cacheMaxBlock")
	}
	got := c.drop(s1)
	if len(got) != 1 || len(got[s1]) != 1 || got[s1][0] != 0x1000 {
		t.Errorf("drop(s1) = %v", got)
	}
	if c.empty() {
		t.Error("empty with s2's block cached")
	}
	c.drop(nil)
	if !c.empty() || c.bytes != 0 {
		t.Errorf("after drop(nil): %d bytes", c.bytes)
	}
	for i := 0; ; i++ {
		if !c.keep(s1, cacheMaxBlock, uint64(i+1)) {
			if i*cacheMaxBlock+cacheMaxBlock <= cacheBytes {
				t.Errorf("refused block %d under the budget", i)
			}
			break
		}
	}
	s1.closed.Store(true)
	c.drop(nil)
	if c.keep(s1, 1024, 0x5000) {
		t.Error("kept a block for a closing stream")
	}
}
