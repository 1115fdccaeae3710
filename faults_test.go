package qd

import (
	"sync/atomic"
	"testing"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/lower"
)

// Fault injection at the backend seam: a Device that wraps a real one and
// fails the task launches a test chooses, so that what a failed launch
// leaves behind is tested on every backend without a hook in qd's code.

// faultyDevice is a backend.Device whose modules fail Run for the tasks
// failRun says to.
type faultyDevice struct {
	backend.Device
	failRun atomic.Pointer[func(task int) error]
}

type faultyModule struct {
	backend.Module
	d *faultyDevice
}

type faultyLaunch struct {
	backend.Launch
	d *faultyDevice
}

func (d *faultyDevice) Compile(plan *lower.Plan, opts backend.CompileOptions) (backend.Module, error) {
	m, err := d.Device.Compile(plan, opts)
	if err != nil {
		return nil, err
	}
	return &faultyModule{m, d}, nil
}

func (m *faultyModule) Begin(s backend.Stream, args *backend.Args) (backend.Launch, error) {
	l, err := m.Module.Begin(s, args)
	if err != nil {
		return nil, err
	}
	return &faultyLaunch{l, m.d}, nil
}

func (l *faultyLaunch) Run(task int, s backend.Stream) error {
	if f := l.d.failRun.Load(); f != nil {
		if err := (*f)(task); err != nil {
			return err
		}
	}
	return l.Launch.Run(task, s)
}

// forEachArchFaulty is forEachArch on a faultyDevice over each backend.
func forEachArchFaulty(t *testing.T, f func(t *testing.T, p *Program, d *faultyDevice)) {
	t.Helper()
	for _, a := range suiteArchs(t) {
		t.Run(a.String(), func(t *testing.T) {
			b, ok := backend.Lookup(a.String())
			if !ok {
				t.Fatalf("%s is not registered", a)
			}
			dev, err := b.Open(0)
			if err != nil {
				t.Fatal(err)
			}
			d := &faultyDevice{Device: dev}
			p, err := newProgram(d, a, initConfig{arch: a})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := p.Close(); err != nil {
					t.Errorf("Program.Close: %v", err)
				}
			})
			f(t, p, d)
		})
	}
}
