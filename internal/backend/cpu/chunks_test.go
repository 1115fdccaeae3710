package cpu

import (
	"sync"
	"testing"
)

// TestChunkEnds: takers from both ends, concurrently, get every chunk
// exactly once, the front ones in ascending order, the back ones in
// descending order.
func TestChunkEnds(t *testing.T) {
	for _, n := range []int64{0, 1, 2, 7, 64, 1000} {
		var c chunkEnds
		c.reset(n)
		got := make([][]int64, 4)
		var wg sync.WaitGroup
		for w := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					k, ok := c.take(w > 0)
					if !ok {
						return
					}
					got[w] = append(got[w], k)
				}
			}()
		}
		wg.Wait()
		seen := make([]int, n)
		for w, ks := range got {
			for i, k := range ks {
				seen[k]++
				if i > 0 && (w == 0) != (k > ks[i-1]) {
					t.Fatalf("n=%d taker %d: chunks %v out of order", n, w, ks)
				}
			}
		}
		for k, s := range seen {
			if s != 1 {
				t.Fatalf("n=%d: chunk %d taken %d times", n, k, s)
			}
		}
	}
}
