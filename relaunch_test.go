package qd

import (
	"context"
	"errors"
	"io"
	"math"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/suitekernels"
)

// TestRelaunch checks the launch memo (relaunch.go) on the GPU runtime
// over the fake driver: a launch with the arguments of the memo's enqueues
// it again (one driver call, no new launch block); other arguments take
// the general path and become the memo, in the same memo; launches that
// alternate arguments allocate nothing; a closed array is refused as
// before; concurrent launches with varying arguments pass the driver's
// checks on every parameter.
func TestRelaunch(t *testing.T) {
	e, fake := openFake(t)
	misuses := len(fake.Misuses())
	p := e.p
	k := build(t, p, suitekernels.SaxpyN())
	x, y := e.x, e.y
	launch := func(args ...any) {
		t.Helper()
		if err := k.LaunchOn(e.s, args...); err != nil {
			t.Fatal(err)
		}
	}
	launch(float32(2), x, y, int64(256)) // learns the argument types
	launch(float32(2), x, y, int64(256)) // fast bind: makes the memo
	mm := k.c.memo.m.Load()
	if mm == nil {
		t.Fatal("no memo after two launches with the same argument types")
	}
	l0 := mm.l
	calls := fake.Count("LaunchKernel")
	launch(float32(2), x, y, int64(256))
	if got := fake.Count("LaunchKernel") - calls; got != 1 {
		t.Errorf("a relaunch made %d driver launches, want 1", got)
	}
	if k.c.memo.m.Load() != mm || mm.l != l0 {
		t.Error("a launch with the memo's arguments did not rerun the memo's launch")
	}

	// Other arguments: the general path, whose launch the same memo keeps.
	launch(float32(3), x, y, int64(256))
	if k.c.memo.m.Load() != mm || mm.l == l0 || mm.bits[0] != uint64(math.Float32bits(3)) {
		t.Errorf("after other arguments: memo %p (was %p), bits %#x", k.c.memo.m.Load(), mm, mm.bits)
	}
	launch(float32(3), y, x, int64(256))
	if mm.cores[1] != y.c || mm.cores[2] != x.c {
		t.Error("the memo did not follow the swapped arrays")
	}
	if !k.c.memo.made.Load() {
		t.Error("memoMade unset")
	}

	// Launches that alternate their arrays (each takes the general path
	// and refills the memo) allocate no more than repeated ones (the fake
	// driver's callbacks allocate on every call; on a GPU neither does).
	same := testing.AllocsPerRun(200, func() { launch(float32(2), x, y, int64(256)) })
	alternating := testing.AllocsPerRun(200, func() {
		launch(float32(2), x, y, int64(256))
		launch(float32(2), y, x, int64(256))
	})
	if !raceEnabled && alternating > 2*same+0.05 { // the race detector drops pooled objects
		t.Errorf("%.2f allocations per pair of alternating launches, %.2f per repeated launch", alternating, same)
	}

	// A closed array in the memo is refused by the general path.
	z := newNdarray[float32](t, p, 256)
	launch(float32(2), z, y, int64(256))
	launch(float32(2), z, y, int64(256))
	check(t, z.Close())
	if err := k.LaunchOn(e.s, float32(2), z, y, int64(256)); !errors.Is(err, ErrClosed) {
		t.Errorf("launch with a closed array in the memo: %v, want ErrClosed", err)
	}

	// Arrays from NewNdarrayOn, whose zero fill is in progress on the
	// launch's own stream, relaunch too.
	a := newNdarrayOn[float32](t, e.s, 256)
	b := newNdarrayOn[float32](t, e.s, 256)
	launch(float32(2), a, b, int64(256))
	mm = k.c.memo.m.Load()
	l1 := mm.l
	for range 3 {
		launch(float32(2), a, b, int64(256))
	}
	if k.c.memo.m.Load() != mm || mm.l != l1 {
		t.Error("launches with NewNdarrayOn arrays on their own stream did not relaunch")
	}

	// A launch with a context, or under a trace, takes the general path
	// and leaves the memo alone.
	check(t, k.LaunchContext(context.Background(), e.s, float32(5), x, y, int64(256)))
	check(t, p.StartTrace())
	launch(float32(6), y, x, int64(256))
	check(t, p.StopTrace(io.Discard))
	if k.c.memo.m.Load() != mm || mm.l != l1 || mm.cores[1] != a.c {
		t.Error("a launch with a context or under a trace changed the memo")
	}

	// A kernel whose launches carry temporaries makes no memo.
	m := compileModule(t, p, relaunchSrc)
	kt := kernelOf(t, m, "withTemp")
	for range 3 {
		check(t, kt.LaunchOn(e.s, x, float32(2)))
	}
	if kt.c.memo.m.Load() != nil {
		t.Error("a kernel with temporaries made a memo")
	}
	check(t, a.Close())
	check(t, b.Close())

	// Concurrent launches with varying arguments: every parameter the
	// driver sees is live memory of the right size.
	arrays := []*Ndarray[float32]{x, y, newNdarray[float32](t, p, 256)}
	streams := []*Stream{e.s, newStream(t, p), newStream(t, p)}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := range 200 {
				a, b := arrays[(g+i)%3], arrays[(g+i+1)%3]
				if err := k.LaunchOn(streams[g%3], float32(i%2), a, b, int64(256-i%3)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	check(t, p.Synchronize())
	if got := fake.Misuses()[misuses:]; len(got) != 0 {
		t.Errorf("misuses of the fake driver: %v", got)
	}
}

const relaunchSrc = `package kernels

//qd:kernel
func withTemp(x []float32, v float32) {
	t := v * 2
	for i := range len(x) {
		x[i] = t
	}
}
`
