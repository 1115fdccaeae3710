package ptx

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/ptxas"
)

// Entries for sm_90 and later wait for the grids before them before they
// touch memory, then let the next grid start (target.go), and the layout
// says so; for older targets, which lack the instructions, neither.
func TestAwaitsPredecessors(t *testing.T) {
	for _, tc := range []struct {
		tg   Target
		want bool
	}{
		{Target{SM: 80, Version: "7.0"}, false},
		{Target{SM: 90, Version: "7.8"}, true},
	} {
		m, err := compilePlan(mustLower(t, saxpy()), tc.tg)
		if err != nil {
			t.Fatal(err)
		}
		if m.AwaitsPredecessors != tc.want {
			t.Errorf("sm_%d: AwaitsPredecessors %v, want %v", tc.tg.SM, m.AwaitsPredecessors, tc.want)
		}
		entries := strings.Split(m.PTX, ".visible .entry")[1:]
		if len(entries) == 0 {
			t.Fatalf("no entry:\n%s", m.PTX)
		}
		memory := regexp.MustCompile(`\b(ld|st|atom|red)\.global`)
		for i, e := range entries {
			wait := strings.Index(e, "griddepcontrol.wait;")
			launch := strings.Index(e, "griddepcontrol.launch_dependents;")
			if !tc.want {
				if wait >= 0 || launch >= 0 {
					t.Errorf("sm_%d entry %d: griddepcontrol for a target without it", tc.tg.SM, i)
				}
				continue
			}
			first := memory.FindStringIndex(e)
			switch {
			case wait < 0 || launch < wait:
				t.Errorf("sm_%d entry %d: no wait, or the next grid let in before it:\n%s", tc.tg.SM, i, numbered(e))
			case first != nil && first[0] < wait:
				t.Errorf("sm_%d entry %d: memory touched before the wait:\n%s", tc.tg.SM, i, numbered(e))
			}
		}
		if tc.want {
			if tool, err := ptxas.Find(); err == nil && slices.Contains(tool.Archs, 90) {
				if err := tool.Assemble(t.TempDir(), "saxpy", 90, m.PTX); err != nil {
					t.Errorf("ptxas sm_90: %v", err)
				}
			}
		}
	}
}

// Compile follows the layout: entries wait exactly when it says so, and a
// layout that asks for the wait on a target without it is refused.
func TestAwaitsFollowsLayout(t *testing.T) {
	plan := mustLower(t, saxpy())
	for _, tc := range []struct {
		tg      Target
		awaits  bool
		wantErr bool
	}{
		{Target{SM: 90, Version: "7.8"}, true, false},
		{Target{SM: 90, Version: "7.8"}, false, false},
		{Target{SM: 80, Version: "7.0"}, false, false},
		{Target{SM: 80, Version: "7.0"}, true, true},
	} {
		layout, err := kabi.LayoutWith(plan, kabi.Options{AwaitsPredecessors: tc.awaits})
		if err != nil {
			t.Fatal(err)
		}
		text, err := Compile(plan, layout, tc.tg, stubbed(Options{}))
		if tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), "predecessors") {
				t.Errorf("sm_%d, awaits %v: err %v, want a refusal", tc.tg.SM, tc.awaits, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("sm_%d, awaits %v: %v", tc.tg.SM, tc.awaits, err)
		}
		if got := strings.Contains(text, "griddepcontrol.wait;"); got != tc.awaits {
			t.Errorf("sm_%d, awaits %v: griddepcontrol.wait written: %v", tc.tg.SM, tc.awaits, got)
		}
	}
}
