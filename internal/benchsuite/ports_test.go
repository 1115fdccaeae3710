package benchsuite

import (
	"regexp"
	"strings"
	"testing"

	"github.com/quadrants-go/qd"
)

// TestPortsCPU runs the ports rows quickly on the CPU backend: every port
// runs its original's launch sequence on small inputs and matches its
// plain-Go reference (a mismatch is a FAIL row), so CI, which has no GPU,
// exercises the kernels that run.sh times on one.
func TestPortsCPU(t *testing.T) {
	p, err := qd.Init(qd.WithArch(qd.CPU))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rows, err := Run(p, Options{Quick: true, Run: regexp.MustCompile("^ports")})
	if err != nil {
		t.Fatal(err)
	}
	s := &suite{opt: Options{Quick: true}}
	if want := len(s.portCases()); len(rows) != want {
		t.Errorf("%d rows, want %d", len(rows), want)
	}
	progs := map[string]bool{}
	for _, r := range rows {
		if r.Status != Info || r.Value <= 0 || r.Unit != "ms" {
			t.Errorf("%s: %s %v %s: %s", r.Name, r.Status, r.Value, r.Unit, r.Note)
		}
		f := strings.Fields(r.Name)
		if len(f) != 3 || f[0] != "port" {
			t.Errorf("row %q is not named \"port PROGRAM CONFIG\" (run.sh joins the drivers' lines by it)", r.Name)
			continue
		}
		progs[strings.TrimSuffix(f[1], ":fma")] = true
	}
	for _, prog := range []string{"matrixMul", "transpose", "transpose-copy", "histogram256", "scan-short", "scan-large", "bitonicSort", "hotspot", "nw"} {
		if !progs[prog] {
			t.Errorf("no row for %s", prog)
		}
	}
}
