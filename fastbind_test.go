package qd

import (
	"math"
	"slices"
	"testing"
	"unsafe"
)

const fastBindSrc = `package kernels

//qd:kernel
func allTypes(b bool, i int, i32 int32, i64 int64, u uint, u32 uint32, u64 uint64, f32 float32, f64 float64, xf []float32, xi [][]int, xb []bool, xu []uint64) {
	for k := range len(xf) {
		if b {
			xf[k] = f32
		}
	}
}

//qd:kernel
func constants(x []float32, v float32, n int64) {
	for k := range n {
		x[k] = v
	}
}
`

// TestFastBindMatchesBind checks that the fast bind (fastbind.go) binds
// what the general bind binds for arguments of the learned types, and
// declines, having pinned nothing, whatever else: then the general bind
// accepts it or names the error.
func TestFastBindMatchesBind(t *testing.T) {
	p := initProgram(t, WithArch(CPU))
	defer p.Close()
	m := compileModule(t, p, fastBindSrc)
	k := kernelOf(t, m, "allTypes")
	xf := newNdarray[float32](t, p, 4)
	xi := newNdarray[int](t, p, 2, 3)
	xb := newNdarray[bool](t, p, 4)
	xu := newNdarray[uint64](t, p, 5)
	arrays := []*ndCore{xf.c, xi.c, xb.c, xu.c}
	args := func() []any {
		return []any{true, 5, int32(-3), int64(-1 << 40), uint(7), uint32(1 << 31), uint64(1 << 63), float32(1.5), -2.25, xf, xi, xb, xu}
	}
	check(t, k.Launch(args()...))
	check(t, p.Synchronize())
	kc := k.c
	sig := kc.sig.Load()
	if sig == nil {
		t.Fatal("a launch with exactly typed arguments taught no signature")
	}
	unpinned := func(what string) {
		t.Helper()
		for i, a := range arrays {
			if n := a.st.pins.n.Load(); n != 0 {
				t.Errorf("%s: array %d left pinned %d times", what, i, n)
			}
		}
	}
	release := func(c *call) {
		for _, a := range c.arrays {
			a.unpin()
		}
	}
	same := func(what string, a []any) {
		t.Helper()
		var slow, fast call
		if err := kc.bind(&slow, a); err != nil {
			t.Fatalf("%s: bind: %v", what, err)
		}
		defer release(&slow)
		if !kc.bindFast(&fast, sig, a) {
			t.Fatalf("%s: the fast bind declined", what)
		}
		defer release(&fast)
		if !slices.Equal(slow.b.Scalars, fast.b.Scalars) {
			t.Errorf("%s: scalars %#x, fast %#x", what, slow.b.Scalars, fast.b.Scalars)
		}
		if !slices.Equal(slow.b.Arrays, fast.b.Arrays) {
			t.Errorf("%s: arrays %v, fast %v", what, slow.b.Arrays, fast.b.Arrays)
		}
		if !slices.Equal(slow.arrays, fast.arrays) {
			t.Errorf("%s: pinned %v, fast %v", what, slow.arrays, fast.arrays)
		}
	}
	same("first values", args())
	a := args()
	a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8] = false, -1, int32(1<<31-1), int64(0), uint(1<<64-1), uint32(0), uint64(3), float32(-0.0), 1e300
	same("second values", a)
	unpinned("after equal binds")

	other := initProgram(t, WithArch(CPU))
	defer other.Close()
	foreign := newNdarray[float32](t, other, 4)
	closed := newNdarray[float32](t, p, 4)
	check(t, closed.Close())
	flat := newNdarray[int](t, p, 6)
	wide := newNdarray[int64](t, p, 2, 3)
	for _, c := range []struct {
		name  string
		index int
		v     any
		slow  bool // the general bind accepts it
	}{
		{"int32 for int", 1, int32(5), false},
		{"untyped constant for float32", 7, 2, true},
		{"untyped constant for float64", 8, 2, true},
		{"int for int64", 3, 4, true},
		{"float64 for float32", 7, 1.5, true},
		{"nil", 0, nil, false},
		{"slice for an Ndarray", 9, []float32{1, 2}, true},
		{"nil Ndarray", 9, (*Ndarray[float32])(nil), false},
		{"Ndarray of float64", 9, newNdarray[float64](t, p, 4), false},
		{"Ndarray of another Program", 9, foreign, false},
		{"closed Ndarray", 9, closed, false},
		{"1-dim for 2-dim", 10, flat, false},
		{"Ndarray[int64] for [][]int", 10, wide, true},
	} {
		a := args()
		a[c.index] = c.v
		var fast call
		if kc.bindFast(&fast, sig, a) {
			release(&fast)
			t.Errorf("%s: the fast bind accepted it", c.name)
		}
		if len(fast.arrays) != 0 {
			t.Errorf("%s: declined with %d arrays kept", c.name, len(fast.arrays))
		}
		unpinned(c.name)
		var slow call
		err := kc.bind(&slow, a)
		release(&slow)
		if (err == nil) != c.slow {
			t.Errorf("%s: general bind error %v, want accepted %v", c.name, err, c.slow)
		}
		unpinned(c.name + ", general bind")
	}
	if kc.bindFast(new(call), sig, args()[:5]) {
		t.Error("the fast bind accepted too few arguments")
	}

	// A launch with an untyped constant teaches nothing; an exactly typed
	// one then does.
	kk := kernelOf(t, m, "constants")
	check(t, kk.Launch(xf, 2, int64(4)))
	if kk.c.sig.Load() != nil {
		t.Error("a launch with an untyped constant taught a signature")
	}
	check(t, kk.Launch(xf, float32(2), int64(4)))
	if s := kk.c.sig.Load(); s == nil || !slices.Equal(s.arrays, []sigArray{{0, 1}}) || !slices.Equal(s.uint32s, []int{1}) || !slices.Equal(s.words, []int{2}) {
		t.Errorf("signature %+v after an exactly typed launch", s)
	}
	check(t, kk.Launch(xf, float32(3), int64(4)))
	check(t, p.Synchronize())
	host := make([]float32, 4)
	check(t, xf.CopyToHost(host))
	if !slices.Equal(host, []float32{3, 3, 3, 3}) {
		t.Errorf("after fast launches x = %v", host)
	}
}

// TestEfaceLayout checks what the fast bind reads through eface: the
// dynamic type word tells types apart, the data word points to a scalar's
// bits (or is the pointer of a pointer type), and every *Ndarray[T] points
// to its core first.
func TestEfaceLayout(t *testing.T) {
	vals := []any{true, int(-5), int32(-7), int64(1 << 40), uint(9), uint32(1<<31 + 1), uint64(1<<63 + 3), float32(-1.5), 2.75}
	for i, v := range vals {
		for j, w := range vals {
			if same := efaceOf(&vals[i]).typ == efaceOf(&vals[j]).typ; same != (i == j) {
				t.Errorf("%T and %T: same type word %v", v, w, same)
			}
		}
	}
	data := func(v any) unsafe.Pointer { return efaceOf(&v).data }
	if *(*bool)(data(true)) != true || *(*int64)(data(int(-5))) != -5 || *(*int32)(data(int32(-7))) != -7 ||
		*(*uint64)(data(uint64(1<<63 + 3))) != 1<<63+3 || *(*uint32)(data(uint32(1<<31 + 1))) != 1<<31+1 ||
		math.Float32frombits(*(*uint32)(data(float32(-1.5)))) != -1.5 || math.Float64frombits(*(*uint64)(data(2.75))) != 2.75 {
		t.Error("a scalar's data word does not point to its bits")
	}
	core := &ndCore{}
	for _, a := range []any{&Ndarray[bool]{c: core}, &Ndarray[int]{c: core}, &Ndarray[int32]{c: core}, &Ndarray[int64]{c: core},
		&Ndarray[uint]{c: core}, &Ndarray[uint32]{c: core}, &Ndarray[uint64]{c: core}, &Ndarray[float32]{c: core}, &Ndarray[float64]{c: core}} {
		if got := (*ndHandle)(data(a)).c; got != core {
			t.Errorf("%T: the handle's first word is %p, not its core %p", a, got, core)
		}
	}
	if (*ndHandle)(data((*Ndarray[float32])(nil))) != nil {
		t.Error("a nil *Ndarray has a data word")
	}
}
