package qd

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/quadrants-go/qd/internal/backend"
)

// countDevice is a device whose graph execs count how Update went: in
// place (the backend updated the exec) or declined (qd then rebuilt it).
type countDevice struct {
	backend.Device
	inPlace, declined atomic.Int32
}

type countGraph struct {
	backend.Graph
	d *countDevice
}

type countExec struct {
	backend.GraphExec
	d *countDevice
}

func (d *countDevice) BeginCapture(s backend.Stream) error {
	return d.Device.(backend.Capturer).BeginCapture(s)
}

func (d *countDevice) EndCapture(s backend.Stream) (backend.Graph, error) {
	g, err := d.Device.(backend.Capturer).EndCapture(s)
	if err != nil {
		return nil, err
	}
	return countGraph{g, d}, nil
}

func (g countGraph) Instantiate() (backend.GraphExec, error) {
	x, err := g.Graph.Instantiate()
	if err != nil {
		return nil, err
	}
	return countExec{x, g.d}, nil
}

func (x countExec) Update(g backend.Graph) (bool, error) {
	ok, err := x.GraphExec.Update(g.(countGraph).Graph)
	if ok && err == nil {
		x.d.inPlace.Add(1)
	} else {
		x.d.declined.Add(1)
	}
	return ok, err
}

// TestGraphUpdateInPlace: on the CPU backend, Update with new scalars and
// arrays updates the executable graph in place, and a capture of another
// shape is declined and rebuilt; the replays compute the same either way.
func TestGraphUpdateInPlace(t *testing.T) {
	b, _ := backend.Lookup(CPU.String())
	dev, err := b.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	d := &countDevice{Device: dev}
	p, err := newProgram(d, CPU, initConfig{arch: CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { check(t, p.Close()) }()
	k := newGraphKernels(t, p)
	const n = 64
	x := newNdarray[float32](t, p, n)
	y := newNdarray[float32](t, p, n)
	s := newStream(t, p)
	g := captureGraph(t, s, func() error { return k.axpb.LaunchOn(s, x, float32(2), float32(1)) })
	defer g.Close()
	cases := []struct {
		name              string
		fn                func() error
		inPlace, declined int32
		want              float32 // y after a replay
	}{
		{"new scalars and arrays", func() error { return k.axpb.LaunchOn(s, y, float32(3), float32(0.5)) }, 1, 0, 0.5},
		{"same shape again", func() error { return k.axpb.LaunchOn(s, y, float32(1), float32(2)) }, 2, 0, 2.5},
		{"another shape", func() error {
			return errors.Join(k.axpb.LaunchOn(s, y, float32(1), float32(1)), k.axpb.LaunchOn(s, y, float32(1), float32(1)))
		}, 2, 1, 4.5},
	}
	for _, tc := range cases {
		check(t, g.Update(tc.fn))
		if d.inPlace.Load() != tc.inPlace || d.declined.Load() != tc.declined {
			t.Errorf("%s: %d updates in place, %d declined; want %d, %d", tc.name, d.inPlace.Load(), d.declined.Load(), tc.inPlace, tc.declined)
		}
		check(t, g.LaunchOn(s))
		wantAll(t, tc.name, y, tc.want)
	}
}

// TestGraphSpanName: a replay span names the graph's kernels, the first three.
func TestGraphSpanName(t *testing.T) {
	cases := []struct {
		kernels []string
		want    string
	}{
		{nil, "graph"},
		{[]string{"fill"}, "graph: fill"},
		{[]string{"a", "b", "c"}, "graph: a, b, c"},
		{[]string{"a", "b", "c", "d", "e"}, "graph: a, b, c and 2 more"},
	}
	for _, tc := range cases {
		if got := spanName(tc.kernels); got != tc.want {
			t.Errorf("spanName(%q) = %q, want %q", tc.kernels, got, tc.want)
		}
	}
}
