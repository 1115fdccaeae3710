package kabi

// SlotKind says what an entry parameter carries.
type SlotKind uint8

const (
	// ScalarSlot is a scalar kernel parameter: 4 bytes for bool, the 8-,
	// 16- and 32-bit types, 8 for the 64-bit ones. A bool is 0 or 1; an
	// 8- or 16-bit integer is its value sign-extended (int8, int16) or
	// zero-extended (uint8, uint16) to 32 bits, which is what a launcher
	// writes that takes the value from backend.Args.Scalars, where every
	// scalar is an ir.Const bit pattern (sign- or zero-extended to 64
	// bits). The entries read only the value's own low 8 or 16 bits, so a
	// slot whose upper bits were left otherwise still means its value.
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
