package gpu_test

import (
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// Stream-ordered buffers, views and page-locked host memory: a pipeline
// host → device → kernel on a view → host, all asynchronous on one stream,
// freed in stream order, many times (the pool reuses the memory).
func TestStreamOrderedMemory(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d *gpu.Device) {
		s := mustStream(t, d, 0)
		fill := build(t, d, fillKernel())
		kernels := computes(t, d)
		const n = 4096
		h, err := d.AllocHost(4 * n)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		host := unsafe.Slice((*uint32)(h.Pointer()), n)
		for i, v := range host {
			if v != 0 {
				t.Fatalf("host memory not zeroed at %d", i)
			}
		}
		for round := range 50 {
			for i := range host {
				host[i] = uint32(i + round)
			}
			b, err := d.AllocOn(s, 4*n)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.CopyFromHost(s, h.Pointer(), 4*n); err != nil {
				t.Fatal(err)
			}
			// The second half through a view.
			v, err := b.View(4*n/2, 4*n/2)
			if err != nil {
				t.Fatal(err)
			}
			launch(t, fill, s, &backend.Args{Scalars: []uint64{0, 7}, Arrays: []backend.ArrayArg{arr(v, n/2)}})
			if err := b.CopyToHost(s, h.Pointer(), 4*n); err != nil {
				t.Fatal(err)
			}
			if err := v.FreeOn(s); err != nil {
				t.Fatal(err)
			}
			if err := b.FreeOn(s); err != nil {
				t.Fatal(err)
			}
			if err := s.Synchronize(); err != nil {
				t.Fatal(err)
			}
			for i, got := range host {
				want := uint32(i + round)
				if i >= n/2 && kernels {
					want = 7
				}
				if got != want {
					t.Fatalf("round %d: host[%d] = %d, want %d", round, i, got, want)
				}
			}
		}
		b := mustAlloc(t, d, 16)
		if _, err := b.View(8, 16); err == nil {
			t.Error("a view past the end succeeded")
		}
		if _, err := d.AllocOn(s, 0); err == nil {
			t.Error("AllocOn(0) succeeded")
		}
		if _, err := d.AllocHost(0); err == nil {
			t.Error("AllocHost(0) succeeded")
		}
	})
}
