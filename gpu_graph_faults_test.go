package qd

import (
	"errors"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/gpu/fakedriver"
)

// Graphs on the fake GPU driver (gpu_faults_test.go): every kind of
// captured call goes through the runtime's capture paths without a misuse
// of the driver, and a failing capture, instantiation, launch or update
// gives the caller a clear error, leaves nothing behind and leaves the
// Program usable.

// graphCycle captures work on e.s that uses every kind of captured call
// (a stream-parallel kernel, whose pooled streams fork and join inside the
// graph; a fork onto a second stream by an event; a fill; a device copy;
// a stream-ordered allocation freed inside), replays it on e.s and on the
// second stream, and closes everything it made.
func graphCycle(e *fakeEnv) error {
	s2, err := e.p.NewStream()
	if err != nil {
		return err
	}
	defer s2.Close()
	g, err := e.s.Capture(func() error {
		tmp, err := NewNdarrayOn[float32](e.s, 256)
		if err != nil {
			return err
		}
		return errors.Join(
			e.two.LaunchOn(e.s, e.x, e.y, float32(1)),
			s2.WaitStream(e.s),
			tmp.FillOn(s2, 3),
			e.s.WaitStream(s2),
			e.y.CopyFromOn(e.s, tmp),
			tmp.Close())
	})
	if err != nil {
		return err
	}
	return errors.Join(g.LaunchOn(e.s), g.LaunchOn(s2), s2.Synchronize(), g.Close())
}

// graphUpdate captures a fill, then updates the graph with a capture of
// another shape (two fills), which builds a new executable graph, and
// replays it.
func graphUpdate(e *fakeEnv) error {
	g, err := e.s.Capture(func() error { return e.fill.LaunchOn(e.s, e.x, float32(1)) })
	if err != nil {
		return err
	}
	defer g.Close()
	err = g.Update(func() error {
		return errors.Join(e.fill.LaunchOn(e.s, e.x, float32(2)), e.fill.LaunchOn(e.s, e.y, float32(2)))
	})
	if err != nil {
		// The graph replays nothing until an Update succeeds.
		if lerr := g.LaunchOn(e.s); lerr == nil {
			return errors.Join(err, errors.New("LaunchOn after a failed Update succeeded"))
		}
		return err
	}
	return errors.Join(g.LaunchOn(e.s), e.s.Synchronize())
}

func TestGPUGraphFaults(t *testing.T) {
	cases := []struct {
		name  string
		call  string // the failing driver function, as fakedriver.Fault names it
		n     int
		op    func(e *fakeEnv) error
		names []string // what the error must name besides the function
	}{
		{"begin capture", "StreamBeginCapture", 1, graphCycle, []string{"Capture"}},
		{"end capture", "StreamEndCapture", 1, graphCycle, []string{"Capture on stream"}},
		{"instantiate", "GraphInstantiate", 1, graphCycle, []string{"Capture", "instantiating"}},
		{"launch", "GraphLaunch", 1, graphCycle, []string{"Graph.LaunchOn"}},
		{"launch on the second stream", "GraphLaunch", 2, graphCycle, []string{"Graph.LaunchOn"}},
		// A captured launch is a programmatic dependent launch: the fake's
		// entries wait for their predecessors, as sm_90's do.
		{"captured launch", "LaunchKernelEx", 1, graphCycle, []string{"Capture on stream", "kernel twoGroups"}},
		{"captured allocation", "MemAllocAsync", 1, graphCycle, []string{"Capture on stream", "NewNdarrayOn"}},
		{"captured zero fill", "MemsetD8Async", 1, graphCycle, []string{"Capture on stream", "NewNdarrayOn"}},
		{"captured FillOn", "MemsetD32Async", 1, graphCycle, []string{"Capture on stream", "FillOn"}},
		{"captured fork", "StreamWaitEvent", 1, graphCycle, []string{"Capture on stream"}},
		{"instantiate in Update", "GraphInstantiate", 2, graphUpdate, []string{"Graph.Update", "instantiating"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			withFault(t, tc.call, tc.n, gpu.Failed, tc.op, func(err error, name string) {
				if err == nil {
					t.Fatal("the operation succeeded although its driver call failed")
				}
				t.Log(err)
				for _, want := range append(tc.names, name) {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("the error does not name %q", want)
					}
				}
				if errors.Is(err, ErrDeviceLost) {
					t.Error("a failed graph call lost the device")
				}
			})
		})
	}
}

// TestGPUGraphUpdateDeclined: where the driver declines to update the
// executable graph in place, Update builds a new one instead.
func TestGPUGraphUpdateDeclined(t *testing.T) {
	sameShape := func(e *fakeEnv) error {
		g, err := e.s.Capture(func() error { return e.fill.LaunchOn(e.s, e.x, float32(1)) })
		if err != nil {
			return err
		}
		err = g.Update(func() error { return e.fill.LaunchOn(e.s, e.y, float32(5)) })
		return errors.Join(err, g.LaunchOn(e.s), e.s.Synchronize(), g.Close())
	}
	withFault(t, "GraphExecUpdate", 1, gpu.Failed, sameShape, func(err error, _ string) {
		if err != nil {
			t.Errorf("Update did not rebuild when the update in place failed: %v", err)
		}
	})
}

// TestGPUGraphUpdateInPlace: on the fake, an Update of the same shape
// updates the executable graph (GraphExecUpdate, no new instantiation);
// another shape instantiates anew.
func TestGPUGraphUpdateInPlace(t *testing.T) {
	e, fake := openFake(t)
	misuses := len(fake.Misuses())
	g := captureGraph(t, e.s, func() error { return e.fill.LaunchOn(e.s, e.x, float32(1)) })
	fake.Reset()
	check(t, g.Update(func() error { return e.fill.LaunchOn(e.s, e.y, float32(5)) }))
	if u, i := fake.Count("GraphExecUpdate"), fake.Count("GraphInstantiate"); u != 1 || i != 0 {
		t.Errorf("same shape: %d updates, %d instantiations; want 1, 0", u, i)
	}
	fake.Reset()
	check(t, g.Update(func() error {
		return errors.Join(e.fill.LaunchOn(e.s, e.x, float32(2)), e.fill.LaunchOn(e.s, e.y, float32(2)))
	}))
	if i := fake.Count("GraphInstantiate"); i != 1 {
		t.Errorf("another shape: %d instantiations, want 1", i)
	}
	check(t, g.LaunchOn(e.s))
	check(t, errors.Join(g.Close(), e.p.Close()))
	if live := fake.Live(); live.Graphs != 0 || live.Execs != 0 {
		t.Errorf("after Close the fake driver holds %v", live)
	}
	for _, m := range fake.Misuses()[misuses:] {
		t.Errorf("misuse of the fake driver: %s", m)
	}
}

// TestGPUGraphDiamondFake: on the fake driver, whose copies run, a diamond
// across three streams ordered by an event (a copy in, two copies out on
// forked streams, joined back) replays with the host data of each replay,
// on another stream than the capture's, without a misuse of the driver.
func TestGPUGraphDiamondFake(t *testing.T) {
	e, fake := openFake(t)
	misuses := len(fake.Misuses())
	const n = 64
	s2 := newStream(t, e.p)
	s3 := newStream(t, e.p)
	o := newStream(t, e.p)
	ev := newEvent(t, e.p)
	h := newHostArray[float32](t, e.p, n)
	x := newNdarray[float32](t, e.p, n)
	y := newNdarray[float32](t, e.p, n)
	z := newNdarray[float32](t, e.p, n)
	g := captureGraph(t, e.s, func() error {
		return errors.Join(x.CopyFromHostOn(e.s, h), ev.Record(e.s),
			s2.WaitEvent(ev), y.CopyFromOn(s2, x),
			s3.WaitEvent(ev), z.CopyFromOn(s3, x),
			e.s.WaitStream(s2), e.s.WaitStream(s3))
	})
	for r := range 3 {
		hs := hostData(t, h)
		for i := range hs {
			hs[i] = float32(10*r + i)
		}
		check(t, g.LaunchOn(o))
		for _, a := range []*Ndarray[float32]{y, z} {
			got := toSlice(t, a)
			for i, v := range got {
				if v != float32(10*r+i) {
					t.Fatalf("replay %d: element %d = %v, want %v", r, i, v, float32(10*r+i))
				}
			}
		}
	}
	check(t, errors.Join(g.Close(), e.p.Close()))
	if live := fake.Live(); live != (fakedriver.Live{}) {
		t.Errorf("after Close the fake driver holds %v", live)
	}
	for _, m := range fake.Misuses()[misuses:] {
		t.Errorf("misuse of the fake driver: %s", m)
	}
}
