package pool

import (
	"errors"
	"sync"
	"testing"
)

func TestPool(t *testing.T) {
	made := 0
	p := &Pool[*int]{New: func() (*int, error) { made++; v := made; return &v, nil }}
	a, _ := p.Get()
	b, _ := p.Get()
	if *a != 1 || *b != 2 || p.Out() != 2 {
		t.Fatalf("got %d, %d, out %d", *a, *b, p.Out())
	}
	p.Put(a)
	p.Put(b)
	if c, _ := p.Get(); c != b {
		t.Error("not LIFO: the last value given back is not the first lent")
	}
	if made != 2 || p.Out() != 1 {
		t.Errorf("made %d, out %d", made, p.Out())
	}
	if all := p.Drain(); len(all) != 2 || p.Out() != 0 {
		t.Errorf("Drain gave %d values, out %d", len(all), p.Out())
	}
}

func TestPoolNewFails(t *testing.T) {
	p := &Pool[int]{New: func() (int, error) { return 0, errors.New("no") }}
	if _, err := p.Get(); err == nil || p.Out() != 0 || len(p.Drain()) != 0 {
		t.Errorf("a failed New: err %v, out %d", err, p.Out())
	}
}

func TestPoolConcurrent(t *testing.T) {
	p := &Pool[*int]{New: func() (*int, error) { return new(int), nil }}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				v, _ := p.Get()
				*v++
				p.Put(v)
			}
		}()
	}
	wg.Wait()
	if p.Out() != 0 || len(p.Drain()) > 8 {
		t.Error("values lost or made past the concurrency")
	}
}

func BenchmarkGetPut(b *testing.B) {
	p := &Pool[*struct{}]{New: func() (*struct{}, error) { return new(struct{}), nil }}
	b.ReportAllocs()
	for b.Loop() {
		v, _ := p.Get()
		p.Put(v)
	}
}
