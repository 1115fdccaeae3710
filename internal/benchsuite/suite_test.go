package benchsuite

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/quadrants-go/qd"
)

// TestQuickCPU runs the quick suite on the CPU: every row present, the
// GPU-only ones skipped with a reason, the others measured.
func TestQuickCPU(t *testing.T) {
	p, err := qd.Init(qd.WithArch(qd.CPU))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rows, err := Run(p, Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	skipped, measured := 0, 0
	for _, r := range rows {
		switch r.Status {
		case Skip:
			skipped++
			if r.Note == "" {
				t.Errorf("row %q skipped without a reason", r.Name)
			}
		case Fail:
			if r.Unit == "" {
				t.Errorf("row %q: %s", r.Name, r.Note)
			}
			measured++
		default:
			measured++
			if r.Value <= 0 {
				t.Errorf("row %q: value %v", r.Name, r.Value)
			}
		}
	}
	wantSkipped := 11 // K streams ×5, groups ×3, host copies ×2, peer copy
	if runtime.NumCPU() < 2 {
		wantSkipped += len(cpuCases()) + len(cpuBlockCases()) + 1 // the 2-core rows, the machine's
	}
	if skipped != wantSkipped {
		t.Errorf("%d rows skipped, want %d", skipped, wantSkipped)
	}
	if measured < 9 {
		t.Errorf("%d rows measured, want at least 9", measured)
	}
	// Every CPU construct and block kernel has its per-core row and its 2-core row (skipped
	// on one core), the heat step its demo row, the machine its scaling rows; none failed
	// to run.
	cpuRows := 0
	for _, r := range rows {
		if strings.HasPrefix(r.Name, "cpu ") {
			cpuRows++
			if r.Status == Fail && r.Unit == "" {
				t.Errorf("CPU row %q did not run: %s", r.Name, r.Note)
			}
		}
	}
	want := 2 * (len(cpuCases()) + len(cpuBlockCases()))
	if runtime.NumCPU() >= 2 {
		want += 1 + 2 // the heat step's demo row, the machine's two loops
	} else {
		want++ // the machine rows' skip
	}
	if cpuRows != want {
		t.Errorf("%d CPU construct rows, want %d", cpuRows, want)
	}
	var tab bytes.Buffer
	if err := WriteTable(&tab, rows); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(tab.String(), "\n"); lines != len(rows)+1 {
		t.Errorf("table has %d lines for %d rows:\n%s", lines, len(rows), tab.String())
	}
	t.Log("\n" + tab.String())
	var js bytes.Buffer
	if err := WriteJSON(&js, p.Device().String(), rows); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rows []Row `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || len(doc.Rows) != len(rows) {
		t.Fatalf("JSON: %v, %d rows", err, len(doc.Rows))
	}
}
