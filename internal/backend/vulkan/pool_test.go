package vulkan

import (
	"testing"
)

func TestPoolClass(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{1, 256}, {256, 256}, {257, 512}, {1 << 20, 1 << 20}, {1<<20 + 1, 2 << 20}, {maxPooled, maxPooled}, {maxPooled + 1, 0},
	} {
		if got := poolClass(c.n); got != c.want {
			t.Errorf("poolClass(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

// TestPoolReuse: a block freed in stream order serves the next AllocOn of
// its size class once the stream reaches the free, and holds the bytes
// written into it by the new owner.
func TestPoolReuse(t *testing.T) {
	d := openTestDevice(t)
	s := newStream(t, d)
	b1, err := d.AllocOn(s, 1000)
	if err != nil {
		t.Fatal(err)
	}
	mem := b1.(*Buffer).a.mem
	if err := b1.FreeOn(s); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	b2, err := d.AllocOn(s, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if b2.(*Buffer).a.mem != mem || b2.Bytes() != 1024 {
		t.Fatalf("AllocOn after a free of its class: memory %p (freed %p), %d bytes", b2.(*Buffer).a.mem, mem, b2.Bytes())
	}
	data := pattern(1024, 3)
	write(t, s, b2, data)
	if got := read(t, s, b2, 1024); string(got) != string(data) {
		t.Fatal("the reused block does not hold what was written")
	}
	b2.FreeOn(s)
	// Another class is a new block.
	b3, err := d.AllocOn(s, 5000)
	if err != nil {
		t.Fatal(err)
	}
	if b3.(*Buffer).a.mem == mem {
		t.Fatal("a block of another class was reused")
	}
	b3.Close()
	// On a stream whose work is all done, FreeOn returns the block at
	// once: the next AllocOn reuses it with no Synchronize between.
	syncStream(t, s)
	for i := range 3 {
		b4, err := d.AllocOn(s, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && b4.(*Buffer).a.mem != mem {
			t.Fatalf("round %d: AllocOn after FreeOn on an idle stream took new memory", i)
		}
		mem = b4.(*Buffer).a.mem
		if err := b4.FreeOn(s); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkAllocOnFree is NewNdarrayOn's backend part: AllocOn and FreeOn
// of 1 MiB on one stream, served by the pool after the first.
func BenchmarkAllocOnFree(b *testing.B) {
	d := openTestDevice(b)
	s := newStream(b, d)
	for i := range b.N {
		buf, err := d.AllocOn(s, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		if err := buf.FreeOn(s); err != nil {
			b.Fatal(err)
		}
		if i%64 == 63 {
			s.Synchronize()
		}
	}
	s.Synchronize()
}
