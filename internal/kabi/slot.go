package kabi

// SlotKind says what an entry parameter carries.
type SlotKind uint8

const (
	// ScalarSlot is a scalar kernel parameter: 4 bytes for bool and the
	// 32-bit types (bool as 0 or 1), 8 for the 64-bit ones.
	ScalarSlot SlotKind = iota + 1
	// ArraySlot is the device address of an array's first element.
	ArraySlot
	// DimSlot is one extent of an array, as an int64.
	DimSlot
	// TempsSlot is the device address of the launch's temporaries buffer.
	TempsSlot
)

func (k SlotKind) String() string {
	switch k {
	case ScalarSlot:
		return "scalar"
	case ArraySlot:
		return "array"
	case DimSlot:
		return "dim"
	case TempsSlot:
		return "temps"
	}
	return "slot?"
}

// Slot is one parameter of an entry.
type Slot struct {
	Kind  SlotKind
	Param int // ir.Param.Index (ScalarSlot, ArraySlot, DimSlot)
	Dim   int // DimSlot: which extent
	Size  int // bytes: 4 or 8
}
