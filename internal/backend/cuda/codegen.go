package cuda

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/codegen/ptx"
	"github.com/quadrants-go/qd/internal/lower"
)

// generate runs the PTX code generator for a device of compute capability
// sm (major×10+minor) under a driver of version driverVersion, and converts
// its result to this package's types. This file is the only one that
// depends on package ptx.
func generate(plan *lower.Plan, sm, driverVersion int) (*compiled, error) {
	target, err := ptx.TargetFor(sm, driverVersion)
	if err != nil {
		return nil, err
	}
	pm, err := ptx.Compile(plan, target)
	if err != nil {
		return nil, err
	}
	c := &compiled{ptx: pm.PTX, numTemps: pm.NumTemps, tasks: make([]task, len(pm.Tasks))}
	for i, ti := range pm.Tasks {
		t := task{
			entry:     ti.Entry,
			kind:      ti.Kind,
			group:     ti.Group,
			blockDim:  ti.BlockDim,
			hostTotal: ti.HostTotal,
			params:    make([]slot, len(ti.Params)),
		}
		for j, s := range ti.Params {
			k, err := slotKindOf(s.Kind)
			if err != nil {
				return nil, fmt.Errorf("task %d (%s), parameter slot %d: %w", i, ti.Entry, j, err)
			}
			t.params[j] = slot{kind: k, param: s.Param, dim: s.Dim, size: s.Size}
		}
		c.tasks[i] = t
	}
	return c, nil
}

func slotKindOf(k ptx.SlotKind) (slotKind, error) {
	switch k {
	case ptx.ScalarSlot:
		return scalarSlot, nil
	case ptx.ArraySlot:
		return arraySlot, nil
	case ptx.DimSlot:
		return dimSlot, nil
	case ptx.TempsSlot:
		return tempsSlot, nil
	}
	return 0, fmt.Errorf("unknown slot kind %d", k)
}
