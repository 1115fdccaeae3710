package ir_test

import (
	"testing"
	"time"

	. "github.com/quadrants-go/qd/internal/ir"
)

// chainKernel holds what the front end makes of a switch of n cases on a
// local declared outside it: an if/else chain n deep, each condition using
// the local.
func chainKernel(n int) *Kernel {
	b := NewBuilder("chain")
	y := b.Array("y", I32, 1)
	b.Parallel(LenOf(y, 0), func(i *Var) {
		v := b.Decl("v", Ld(y, Ref(i)))
		var arm func(c int)
		arm = func(c int) {
			if c == n {
				b.Store(y, I32c(-1), Ref(i))
				return
			}
			b.If(Op(Eq, Ref(v), I32c(int32(c))), func() { b.Store(y, I32c(int32(c)), Ref(i)) }, func() { arm(c + 1) })
		}
		arm(0)
	})
	return b.Kernel()
}

// Verify takes time linear in the depth of nested blocks: a use of a
// local is one lookup, not a walk up every enclosing block, which made a
// chain of n cases O(n²): 50,000 cases took 41 s to verify, now 30 ms.
// The budget leaves 15 times what the race detector takes (0.3 s).
func TestVerifyDeepChainIsLinear(t *testing.T) {
	k := chainKernel(50000)
	start := time.Now()
	if err := Verify(k); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Verify took %v for 50,000 cases, want well under 5s", d)
	}
}
