package backend

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/kabi"
)

// SlotValue is what slot sl of a GPU entry passes for the launch
// arguments a: a scalar's bits, an extent, or an array's device address,
// which address gives for the argument's buffer (a GPU backend's own
// lookup, with its own error for a foreign buffer). The temporaries'
// address is the launcher's and reads as 0 here. Every GPU launcher
// resolves its slots through it, so that a missing or foreign argument
// reads the same on every backend.
func (a *Args) SlotValue(sl kabi.Slot, address func(Buffer) (uint64, error)) (uint64, error) {
	switch sl.Kind {
	case kabi.ScalarSlot:
		if sl.Param >= len(a.Scalars) {
			return 0, fmt.Errorf("parameter %d: no scalar value (%d given)", sl.Param, len(a.Scalars))
		}
		return a.Scalars[sl.Param], nil
	case kabi.ArraySlot, kabi.DimSlot:
		if sl.Param >= len(a.Arrays) {
			return 0, fmt.Errorf("parameter %d: no array (%d given)", sl.Param, len(a.Arrays))
		}
		arr := a.Arrays[sl.Param]
		if sl.Kind == kabi.DimSlot {
			return uint64(int64(arr.Shape[sl.Dim])), nil
		}
		p, err := address(arr.Buf)
		if err != nil {
			return 0, fmt.Errorf("parameter %d: %w", sl.Param, err)
		}
		return p, nil
	case kabi.TempsSlot:
		return 0, nil
	}
	return 0, fmt.Errorf("unknown slot kind %d", sl.Kind)
}
