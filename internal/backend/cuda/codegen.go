package cuda

import (
	"github.com/quadrants-go/qd/internal/codegen/ptx"
	"github.com/quadrants-go/qd/internal/lower"
)

// generate lays out plan and writes its PTX for a device of compute
// capability sm (major×10+minor) under a driver of version driverVersion.
// This file is the only one that depends on package ptx.
func generate(plan *lower.Plan, sm, driverVersion int) (*compiled, error) {
	target, err := ptx.TargetFor(sm, driverVersion)
	if err != nil {
		return nil, err
	}
	text, layout, err := ptx.Generate(plan, target)
	if err != nil {
		return nil, err
	}
	c := &compiled{ptx: text, numTemps: layout.NumTemps, tasks: make([]task, len(layout.Tasks))}
	for i, t := range layout.Tasks {
		c.tasks[i] = task{Task: t}
	}
	return c, nil
}
