package ir_test

import (
	"strings"
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

// An else holding only an if prints as else if, on the level of the first
// if.
func TestPrintElseIf(t *testing.T) {
	want := `kernel chain(y [1]i32) {
  parallel for i := range len(y, 0) {
    var v i32 = y[i]
    if v == 0 {
      y[i] = 0
    } else if v == 1 {
      y[i] = 1
    } else {
      y[i] = -1
    }
  }
}
`
	if got := Print(chainKernel(2)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A long chain prints in size linear in its length: nested, each case was
// indented once more, and 10,000 cases printed 400 MB.
func TestPrintLongChainIsLinear(t *testing.T) {
	const n = 2000
	out := Print(chainKernel(n))
	if perCase := len(out) / n; perCase > 60 {
		t.Errorf("%d bytes a case for %d cases, want at most 60 (about 40: \"} else if v == c {\", the store)", perCase, n)
	}
	if !strings.Contains(out, "\n    } else if v == 1999 {\n") {
		t.Error("the last case is not on the first if's level")
	}
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
