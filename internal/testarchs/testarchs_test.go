package testarchs

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// handle is a fake GPU handle that counts its closes.
type handle struct{ closed *int }

func (h handle) Close() error { *h.closed++; return nil }

// recorder is a testing.TB that records Errorf instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// probe has GPU archs "cuda" (opens if cudaOK) and "amdgpu" (never opens);
// opens counts the calls of open.
func probe(cudaOK bool, opens, closed *int) *Probe[string, handle] {
	open := func(a string) (handle, error) {
		*opens++
		if a == "cuda" && cudaOK {
			return handle{closed}, nil
		}
		return handle{}, errors.New("no " + a + " device")
	}
	return New(open, "cpu", "cuda", "amdgpu")
}

func TestArchs(t *testing.T) {
	for _, c := range []struct {
		cudaOK, required bool
		want             []string
		errs             int
	}{
		{true, false, []string{"cpu", "cuda"}, 0},
		{true, true, []string{"cpu", "cuda"}, 0},
		{false, false, []string{"cpu"}, 0},
		{false, true, []string{"cpu"}, 1}, // QD_GPU_RUN=1 without CUDA: a failure, and the CPU still runs
	} {
		t.Run(fmt.Sprintf("cuda=%v,required=%v", c.cudaOK, c.required), func(t *testing.T) {
			env := ""
			if c.required {
				env = "1"
			}
			t.Setenv("QD_GPU_RUN", env)
			var opens, closed int
			p := probe(c.cudaOK, &opens, &closed)
			for range 3 {
				r := &recorder{TB: t}
				if got := p.Archs(r); !slices.Equal(got, c.want) {
					t.Errorf("Archs = %v, want %v", got, c.want)
				}
				if len(r.errs) != c.errs {
					t.Errorf("Archs reported %q, want %d errors", r.errs, c.errs)
				}
			}
			if opens != 2 {
				t.Errorf("open called %d times over three Archs calls, want 2 (each GPU arch once)", opens)
			}
			if len(p.keep) != len(c.want)-1 || closed != 0 {
				t.Errorf("%d handles kept, %d closed; want %d kept, none closed before Main ends", len(p.keep), closed, len(c.want)-1)
			}
		})
	}
}
