package ir

import "testing"

// TestBinaryTypeCached: the type of a Binary built by Op or NewBinary is
// worked out once, so Type does not walk its operands: asking for the type
// of every node of a chain x+1+1+... of n terms costs n steps, not n²/2.
// The test takes the operands away after construction; Type must not
// notice.
func TestBinaryTypeCached(t *testing.T) {
	b := NewBuilder("k")
	x := b.Scalar("x", F32)
	cases := []struct {
		name string
		e    Expr
		want Type
	}{
		{"arithmetic", Op(Add, P(x), F32c(1)), F32},
		{"comparison", Op(Lt, P(x), F32c(1)), Bool},
		{"chain", Op(Mul, Op(Add, Op(Add, P(x), F32c(1)), F32c(1)), F32c(2)), F32},
		{"NewBinary", NewBinary(Shl, I64c(1), U32c(3)), I64},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := c.e.(*Binary)
			bin.X, bin.Y = nil, nil
			if got := bin.Type(); got != c.want {
				t.Fatalf("Type = %v, want %v", got, c.want)
			}
		})
	}
	// A Binary written as a literal still works it out.
	if got := (&Binary{Op: Add, X: I32c(1), Y: I32c(2)}).Type(); got != I32 {
		t.Fatalf("literal Binary: Type = %v, want i32", got)
	}
}

func TestIntrinsicExact(t *testing.T) {
	exact := map[Intrinsic]bool{Sqrt: true, Abs: true, Floor: true, Ceil: true, Trunc: true, Round: true}
	for _, f := range Intrinsics() {
		if f.Exact() != exact[f] {
			t.Errorf("%v.Exact() = %v, want %v", f, f.Exact(), exact[f])
		}
	}
}
