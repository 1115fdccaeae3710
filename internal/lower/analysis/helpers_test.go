package analysis

import (
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// lowered lowers the kernel build writes, failing the test on an error.
func lowered(t *testing.T, build func(b *ir.Builder)) *lower.Plan {
	t.Helper()
	b := ir.NewBuilder("k")
	build(b)
	plan, err := lower.Lower(b.Kernel())
	if err != nil {
		t.Fatalf("lower: %v", err)
	}
	return plan
}

// parallelTask is the plan's only parallel task.
func parallelTask(t *testing.T, plan *lower.Plan) *lower.Task {
	t.Helper()
	for _, task := range plan.Tasks {
		if task.Kind == lower.Parallel {
			return task
		}
	}
	t.Fatal("no parallel task")
	return nil
}
