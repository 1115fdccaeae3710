package qd

import (
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/suitekernels"
)

// Errors raised while a kernel runs are reported once, to the launch that
// raised them, by its stream's next synchronizing call (docs/semantics.md). The error
// is an index out of range: the CPU always checks, GPU kernels under
// WithDebug.

// forEachChecked runs f for every backend with index checks on.
func forEachChecked(t *testing.T, f func(t *testing.T, p *Program)) {
	t.Helper()
	forEachArchWith(t, []InitOption{WithDebug()}, f)
}

// wantOnce fails unless err reports an index out of range exactly once.
func wantOnce(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil || strings.Count(err.Error(), "out of range") != 1 {
		t.Fatalf("%s = %v, want one index-out-of-range error", what, err)
	}
}

// poolClean fails unless every pooled stream is back in the pool.
func poolClean(t *testing.T, p *Program) {
	t.Helper()
	out := p.pool.Out()
	if out != 0 {
		t.Fatalf("%d pooled streams still out", out)
	}
}

// TestGroupErrorReportedOnce: the second group of a launch indexes out of
// range. Its launch stream's Synchronize reports it, once; afterwards every
// user of the pooled stream the group ran on (the same kernel with good
// arguments, another stream-parallel kernel on a fresh stream, the default
// stream, a launch with slices, Program.Synchronize) sees no error.
func TestGroupErrorReportedOnce(t *testing.T) {
	forEachChecked(t, func(t *testing.T, p *Program) {
		bad := build(t, p, suitekernels.BadGroup())
		good := build(t, p, suitekernels.TwoGroups())
		short := newNdarray[float32](t, p, 4)
		long := newNdarray[float32](t, p, 100)
		a := newNdarray[float32](t, p, arrayLen)
		b := newNdarray[float32](t, p, arrayLen)
		s := newStream(t, p)
		check(t, bad.LaunchOn(s, short))
		wantOnce(t, "Synchronize of the launch stream", s.Synchronize())
		check(t, s.Synchronize())
		poolClean(t, p)

		check(t, bad.LaunchOn(s, long))
		check(t, s.Synchronize())
		fresh := newStream(t, p)
		check(t, good.LaunchOn(fresh, a, b, float32(1)))
		check(t, fresh.Synchronize())
		check(t, good.Launch(a, b, float32(2)))
		check(t, p.DefaultStream().Synchronize())
		sa, sb := make([]float32, 8), make([]float32, 8)
		check(t, good.Launch(sa, sb, float32(3)))
		allEqual(t, "b", sb, 6)
		check(t, p.Synchronize())
		poolClean(t, p)
	})
}

// TestErrorBeforeForkReportedOnce: a launch stream already holding an
// error forks a stream-parallel launch; the error stays the launch
// stream's, and the pooled streams come back clean.
func TestErrorBeforeForkReportedOnce(t *testing.T) {
	forEachChecked(t, func(t *testing.T, p *Program) {
		oob := build(t, p, suitekernels.OOB())
		good := build(t, p, suitekernels.TwoGroups())
		short := newNdarray[float32](t, p, 4)
		ga := newNdarray[float32](t, p, arrayLen)
		gb := newNdarray[float32](t, p, arrayLen)
		s := newStream(t, p)
		check(t, oob.LaunchOn(s, short))
		check(t, good.LaunchOn(s, ga, gb, float32(1)))
		wantOnce(t, "Synchronize of the launch stream", s.Synchronize())
		fresh := newStream(t, p)
		check(t, good.LaunchOn(fresh, ga, gb, float32(2)))
		check(t, fresh.Synchronize())
		check(t, p.Synchronize())
		poolClean(t, p)
	})
}

// TestErrorNotCopiedByWaits: a stream that waits for a failed launch's
// stream (WaitStream, WaitEvent) is ordered after it but does not report
// its error again: Program.Synchronize reports it once.
func TestErrorNotCopiedByWaits(t *testing.T) {
	forEachChecked(t, func(t *testing.T, p *Program) {
		bad := build(t, p, suitekernels.BadGroup())
		short := newNdarray[float32](t, p, 4)
		s := newStream(t, p)
		o := newStream(t, p)
		e := newEvent(t, p)
		check(t, bad.LaunchOn(s, short))
		check(t, o.WaitStream(s))
		check(t, e.Record(s))
		check(t, p.DefaultStream().WaitEvent(e))
		wantOnce(t, "Program.Synchronize", p.Synchronize())
		check(t, p.Synchronize())
		poolClean(t, p)
	})
}
