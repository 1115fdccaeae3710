package qd_test

import (
	"sync"
	"testing"

	"github.com/quadrants-go/qd"
)

// Natively qd.AtomicAddVec is an atomic add per component: goroutines
// adding into one element lose no update.
func TestAtomicAddVecNative(t *testing.T) {
	var v qd.Vec2[float32]
	var w [3]int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				qd.AtomicAddVec(&v, qd.Vec2[float32]{1, 2})
				qd.AtomicAddVec(&w, [3]int64{1, -1, 3})
			}
		}()
	}
	wg.Wait()
	if v != (qd.Vec2[float32]{8000, 16000}) || w != [3]int64{8000, -8000, 24000} {
		t.Fatalf("got %v %v", v, w)
	}
}
