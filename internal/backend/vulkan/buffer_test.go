package vulkan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/quadrants-go/qd/internal/backend"
)

// TestHostCopies copies host → device → device → host, through staging
// (Go memory) and through host buffers (at offsets inside them), for
// sizes around the alignment and staging boundaries.
func TestHostCopies(t *testing.T) {
	d := openTestDevice(t)
	s := newStream(t, d)
	sizes := []int{1, 3, 4, 5, 1000, stagingMin + 1, 1<<20 + 3}
	if !testing.Short() {
		sizes = append(sizes, d.staging.chunk()+5) // several staging buffers
	}
	for _, n := range sizes {
		for _, host := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d/host=%v", n, host), func(t *testing.T) {
				a, b := alloc(t, d, n), alloc(t, d, n)
				want := pattern(n, byte(n))
				got := make([]byte, n)
				if host {
					const off = 3
					hin, hout := allocHost(t, d, n+off+1), allocHost(t, d, n+off+1)
					in := hostBytes(hin.Pointer(), hin.Bytes())
					copy(in[off:], want)
					if err := a.CopyFromHost(s, ptr(in[off:]), n); err != nil {
						t.Fatal(err)
					}
					if err := b.CopyFrom(s, a, n); err != nil {
						t.Fatal(err)
					}
					out := hostBytes(hout.Pointer(), hout.Bytes())
					if err := b.CopyToHost(s, ptr(out[off:]), n); err != nil {
						t.Fatal(err)
					}
					syncStream(t, s)
					copy(got, out[off:])
					if out[off-1] != 0 || out[off+n] != 0 {
						t.Error("the copy into the host buffer wrote outside its range")
					}
				} else {
					write(t, s, a, want)
					if err := b.CopyFrom(s, a, n); err != nil {
						t.Fatal(err)
					}
					got = read(t, s, b, n)
				}
				if j := firstDiff(got, want); j >= 0 {
					t.Fatalf("byte %d is %#x, want %#x", j, got[j], want[j])
				}
			})
		}
	}
}

// TestHostBufferFind checks the registry that tells host-buffer memory
// from other memory.
func TestHostBufferFind(t *testing.T) {
	d := openTestDevice(t)
	hs := []*HostBuffer{allocHost(t, d, 100), allocHost(t, d, 1), allocHost(t, d, 4096)}
	for _, h := range hs {
		p := h.Pointer()
		for _, c := range []struct{ off, n int }{{0, h.n}, {h.n - 1, 1}, {0, 0}} {
			got, off := d.hosts.find(unsafePtrAdd(p, c.off), c.n)
			if got != h || off != c.off {
				t.Errorf("find(%d, %d) in a host buffer of %d bytes: %p at %d", c.off, c.n, h.n, got, off)
			}
		}
		if got, _ := d.hosts.find(p, h.n+1); got != nil {
			t.Errorf("a range past the end of a host buffer of %d bytes was found in it", h.n)
		}
	}
	if got, _ := d.hosts.find(ptr(make([]byte, 10)), 10); got != nil {
		t.Error("Go memory was found in a host buffer")
	}
	h := hs[0]
	for i := range h.n {
		if hostBytes(h.Pointer(), h.n)[i] != 0 {
			t.Fatal("AllocHost memory is not zeroed")
		}
	}
	h.Close()
	if got, _ := d.hosts.find(h.mem.Mapped, 1); got != nil {
		t.Error("a closed host buffer was found")
	}
}

// TestViews copies between views at odd offsets, overlapping ones
// included, and checks that no byte outside the target changes.
func TestViews(t *testing.T) {
	d := openTestDevice(t)
	s := newStream(t, d)
	const n = 1000
	cases := []struct {
		name            string
		dstOff, srcOff  int
		count           int
		sameAllocation  bool
		nestedViewLevel bool
	}{
		{"odd offsets", 3, 7, 101, false, false},
		{"unaligned to aligned", 1, 0, 64, false, false},
		{"same allocation, apart", 1, 501, 333, true, false},
		{"overlap, forward", 5, 1, 300, true, false},
		{"overlap, backward", 2, 9, 301, true, false},
		{"view of a view", 13, 21, 77, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dstBuf := alloc(t, d, n)
			srcBuf := dstBuf
			if !c.sameAllocation {
				srcBuf = alloc(t, d, n)
			}
			dstInit, srcInit := pattern(n, 1), pattern(n, 2)
			write(t, s, dstBuf, dstInit)
			if srcBuf != dstBuf {
				write(t, s, srcBuf, srcInit)
			} else {
				srcInit = dstInit
			}
			var dv, sv *Buffer
			if c.nestedViewLevel {
				dv = view(t, view(t, dstBuf, 1, n-1), c.dstOff-1, c.count)
				sv = view(t, view(t, srcBuf, 5, n-5), c.srcOff-5, c.count+10)
			} else {
				dv, sv = view(t, dstBuf, c.dstOff, c.count), view(t, srcBuf, c.srcOff, c.count)
			}
			if err := dv.CopyFrom(s, sv, c.count); err != nil {
				t.Fatal(err)
			}
			want := bytes.Clone(dstInit)
			copy(want[c.dstOff:c.dstOff+c.count], srcInit[c.srcOff:c.srcOff+c.count])
			got := read(t, s, dstBuf, n)
			if j := firstDiff(got, want); j >= 0 {
				t.Fatalf("byte %d is %#x, want %#x", j, got[j], want[j])
			}
			if v := read(t, s, dv, c.count); !bytes.Equal(v, want[c.dstOff:c.dstOff+c.count]) {
				t.Error("reading the view gives other bytes than reading its buffer")
			}
			if err := dv.Close(); err != nil {
				t.Fatal(err)
			}
			if got := read(t, s, sv, 1); len(got) != 1 {
				t.Fatal("closing a view freed its buffer's memory")
			}
		})
	}
}

func TestViewErrors(t *testing.T) {
	d := openTestDevice(t)
	s := newStream(t, d)
	b := alloc(t, d, 100)
	for _, c := range []struct{ off, n int }{{-1, 1}, {0, -1}, {0, 101}, {100, 1}, {99, 2}, {1 << 62, 1 << 62}} {
		if _, err := b.View(c.off, c.n); err == nil {
			t.Errorf("View(%d, %d) of 100 bytes succeeded", c.off, c.n)
		}
	}
	for _, c := range []struct{ off, n int }{{0, 100}, {100, 0}, {37, 63}} {
		if _, err := b.View(c.off, c.n); err != nil {
			t.Errorf("View(%d, %d) of 100 bytes: %v", c.off, c.n, err)
		}
	}
	v := view(t, b, 10, 20)
	buf := make([]byte, 100)
	other := alloc(t, d, 100)
	for name, err := range map[string]error{
		"CopyFromHost past the view":   v.CopyFromHost(s, ptr(buf), 21),
		"CopyToHost past the view":     v.CopyToHost(s, ptr(buf), 21),
		"CopyFrom into the view":       v.CopyFrom(s, other, 21),
		"CopyFrom out of the view":     other.CopyFrom(s, v, 21),
		"negative copy":                v.CopyFromHost(s, ptr(buf), -1),
		"Fill past the view":           v.Fill(s, 0, 4, 6),
		"Fill of 3-byte elements":      v.Fill(s, 0, 3, 1),
		"Fill of -1 elements":          v.Fill(s, 0, 1, -1),
		"CopyFrom a foreign buffer":    v.CopyFrom(s, fakeBuffer{}, 1),
		"CopyFrom on a foreign stream": v.CopyFrom(fakeStream{}, other, 1),
	} {
		if err == nil {
			t.Errorf("%s succeeded", name)
		}
	}
}

// TestForeignDevice checks that buffers and streams of another device are
// refused with a clear error.
func TestForeignDevice(t *testing.T) {
	d := openTestDevice(t)
	d2 := openTestDevice(t)
	s, s2 := newStream(t, d), newStream(t, d2)
	b, b2 := alloc(t, d, 16), alloc(t, d2, 16)
	if err := b.CopyFrom(s, b2, 16); err == nil || !errors.Is(err, errForeign) {
		t.Errorf("CopyFrom a buffer of another device: %v", err)
	}
	if err := b.Zero(s2); err == nil {
		t.Error("Zero on a stream of another device succeeded")
	}
	if _, err := d.buffer(b2); !errors.Is(err, errForeign) {
		t.Errorf("buffer of another device: %v", err)
	}
	if got, err := d.buffer(b); got != b || err != nil || b.address() == 0 {
		t.Errorf("buffer: %v, %v, address %#x", got, err, b.address())
	}
	if m, off := view(t, b, 4, 4).memory(); m != b.a.mem || off != 4 || view(t, b, 4, 4).address() != b.address()+4 {
		t.Errorf("a view's memory at %d, address %#x", off, view(t, b, 4, 4).address())
	}
}

// TestFill fills views at unaligned offsets and lengths with 1, 2 and
// 4-byte patterns and checks every byte, inside and outside the range.
func TestFill(t *testing.T) {
	d := openTestDevice(t)
	s := newStream(t, d)
	const n = 256
	b := alloc(t, d, n)
	const pat = 0xa1b2c3d4
	for _, size := range []int{1, 2, 4} {
		for _, off := range []int{0, 1, 2, 3, 5, 8} {
			for _, count := range []int{0, 1, 2, 3, 5, 7, 16, 33} {
				t.Run(fmt.Sprintf("size%d/off%d/count%d", size, off, count), func(t *testing.T) {
					init := bytes.Repeat([]byte{0xee}, n)
					write(t, s, b, init)
					v := view(t, b, off, size*count+1)
					if err := v.Fill(s, pat, size, count); err != nil {
						t.Fatal(err)
					}
					want := bytes.Clone(init)
					var p [4]byte
					binary.LittleEndian.PutUint32(p[:], pat)
					for i := range size * count {
						want[off+i] = p[i%size]
					}
					if got := read(t, s, b, n); !bytes.Equal(got, want) {
						j := firstDiff(got, want)
						t.Fatalf("byte %d is %#x, want %#x\ngot  % x\nwant % x", j, got[j], want[j], got[:48], want[:48])
					}
				})
			}
		}
	}
	// Zero of a view at an unaligned offset and length.
	write(t, s, b, bytes.Repeat([]byte{0xee}, n))
	if err := view(t, b, 3, 70).Zero(s); err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte{0xee}, n)
	clear(want[3:73])
	if got := read(t, s, b, n); !bytes.Equal(got, want) {
		t.Fatalf("Zero of [3, 73): got % x", got[:80])
	}
}

func TestAllocOnFreeOn(t *testing.T) {
	d := openTestDevice(t)
	s, s2 := newStream(t, d), newStream(t, d)
	bb, err := d.AllocOn(s, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	b := bb.(*Buffer)
	data := pattern(1<<16, 9)
	write(t, s, b, data)
	// The free waits for s2's use of the buffer, which s waits for.
	other := alloc(t, d, 1<<16)
	e := newEvent(t, d, false)
	if err := e.Record(s); err != nil {
		t.Fatal(err)
	}
	if err := s2.WaitEvent(e); err != nil {
		t.Fatal(err)
	}
	if err := other.CopyFrom(s2, b, 1<<16); err != nil {
		t.Fatal(err)
	}
	if err := e.Record(s2); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitEvent(e); err != nil {
		t.Fatal(err)
	}
	if err := b.FreeOn(s); err != nil {
		t.Fatal(err)
	}
	if err := b.Zero(s); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("use after FreeOn: %v, want ErrClosed", err)
	}
	if err := b.FreeOn(s); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("second FreeOn: %v, want ErrClosed", err)
	}
	syncStream(t, s)
	d.mu.Lock()
	_, still := d.buffers[b.a]
	d.mu.Unlock()
	if still || !b.a.closed.Load() {
		t.Error("the memory is not freed after the stream reached FreeOn's point")
	}
	if got := read(t, s2, other, 1<<16); !bytes.Equal(got, data) {
		t.Error("the copy on the other stream did not see the data")
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close after FreeOn: %v", err)
	}
	if _, err := d.AllocOn(fakeStream{}, 8); err == nil {
		t.Error("AllocOn a foreign stream succeeded")
	}
	if _, err := d.AllocOn(s, 0); err == nil {
		t.Error("AllocOn of 0 bytes succeeded")
	}
}

// TestStagingPool checks that small pieces are cut from one block and the
// block reused once they are back, that whole buffers are reused, and
// that the pool keeps no more than stagingKeep bytes of them.
func TestStagingPool(t *testing.T) {
	d := openTestDevice(t)
	p := &d.staging
	var pieces []staging
	for range 3 * stagingBlockBytes / 4096 {
		st, err := p.get(4000)
		if err != nil {
			t.Fatal(err)
		}
		if st.blk == nil || st.off%stagingAlign != 0 || len(st.bytes()) != 4000 {
			t.Fatalf("a small piece: block %p, offset %d, %d bytes", st.blk, st.off, len(st.bytes()))
		}
		pieces = append(pieces, st)
	}
	blocks := map[*stagingBlock]bool{}
	for i, st := range pieces {
		blocks[st.blk] = true
		if i > 0 && st.blk == pieces[i-1].blk && st.off < pieces[i-1].off+4000 {
			t.Fatalf("pieces %d and %d overlap", i-1, i)
		}
	}
	if len(blocks) != 3 {
		t.Errorf("%d pieces of 4000 bytes took %d blocks, want 3", len(pieces), len(blocks))
	}
	for _, st := range pieces {
		p.put(st)
	}
	if len(p.blocks) != 2 {
		t.Errorf("%d free blocks after every piece is back, want 2 (and the current one)", len(p.blocks))
	}
	again, err := p.get(10)
	if err != nil {
		t.Fatal(err)
	}
	if !blocks[again.blk] {
		t.Error("a new block was allocated while free ones were there")
	}
	p.put(again)

	big, err := p.get(stagingSmall + 1)
	if err != nil {
		t.Fatal(err)
	}
	if big.blk != nil || big.m.Bytes != stagingMin || big.m.Mapped == nil {
		t.Fatalf("a large piece: block %p, %d bytes, mapped at %p", big.blk, big.m.Bytes, big.m.Mapped)
	}
	p.put(big)
	if big2, err := p.get(stagingMin); err != nil || big2.m != big.m {
		t.Errorf("a free whole buffer of the size was not reused (%v)", err)
	} else {
		p.put(big2)
	}
	var ms []staging
	for range stagingKeep/p.chunk() + 2 {
		st, err := p.get(p.chunk())
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, st)
	}
	for _, st := range ms {
		p.put(st)
	}
	if p.bytes > stagingKeep {
		t.Errorf("the pool keeps %d bytes", p.bytes)
	}
}

// TestStagingBurst enqueues thousands of small staged copies and fills
// without waiting: their staging memory comes from a few blocks, not an
// allocation each.
func TestStagingBurst(t *testing.T) {
	d := openTestDevice(t)
	s := newStream(t, d)
	const k, n = 4000, 61
	b := alloc(t, d, k*n)
	want := make([]byte, k*n)
	for i := range k {
		p := pattern(n, byte(i))
		copy(want[i*n:], p)
		write(t, s, view(t, b, i*n, n), p)
		if i%2 == 0 {
			if err := view(t, b, i*n+1, n-2).Fill(s, uint32(i), 1, n-2); err != nil {
				t.Fatal(err)
			}
			for j := 1; j < n-1; j++ {
				want[i*n+j] = byte(i)
			}
		}
	}
	p := &d.staging
	if made := p.made.Load(); made > 2 {
		t.Errorf("%d staging allocations for %d small copies and %d fills", made, k, k/2)
	}
	if got := read(t, s, b, k*n); !bytes.Equal(got, want) {
		j := firstDiff(got, want)
		t.Fatalf("byte %d is %#x, want %#x", j, got[j], want[j])
	}
}
