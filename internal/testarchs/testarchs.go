package testarchs

import (
	"io"
	"os"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/backend/gpu/gputest"
)

// Probe finds the GPU archs of a test binary, once, and keeps one handle
// of each open. Its methods are safe for concurrent use.
type Probe[A any, H io.Closer] struct {
	open func(A) (H, error)
	cpu  A
	gpus []A

	once    sync.Once
	found   []A   // the archs of gpus that opened, in order
	keep    []H   // a handle of each, open until Main returns
	missing error // why gpus[0], the arch QD_GPU_RUN=1 requires, did not open
}

// New returns a Probe that opens each arch of gpus with open, on the first
// call of Archs. The first of gpus is the one that QD_GPU_RUN=1 requires.
func New[A any, H io.Closer](open func(A) (H, error), cpu A, gpus ...A) *Probe[A, H] {
	return &Probe[A, H]{open: open, cpu: cpu, gpus: gpus}
}

// Archs returns the archs to run a test on: the CPU, then the GPU archs
// that opened. Under QD_GPU_RUN=1, where the required GPU arch did not
// open, it marks t failed (and still returns the CPU, whose part runs).
func (p *Probe[A, H]) Archs(t testing.TB) []A {
	t.Helper()
	p.once.Do(func() {
		for i, a := range p.gpus {
			h, err := p.open(a)
			if err != nil {
				if i == 0 {
					p.missing = err
				}
				continue
			}
			p.keep = append(p.keep, h)
			p.found = append(p.found, a)
		}
	})
	if p.missing != nil && gputest.Required() {
		t.Errorf("QD_GPU_RUN=1 but %v is unavailable: %v", p.gpus[0], p.missing)
	}
	return append([]A{p.cpu}, p.found...)
}

// Main runs the tests of m, closes the handles that Archs keeps open and
// exits with the tests' status: the whole of a TestMain.
func (p *Probe[A, H]) Main(m *testing.M) {
	code := m.Run()
	for _, h := range p.keep {
		h.Close()
	}
	os.Exit(code)
}
