package gosem

// Rule is one point of Go's semantics that a target does not give for
// free.
type Rule uint8

// The rules. A generator's code that implements one names it in a comment.
const (
	// DivZero: integer x / 0 and x % 0. Go panics; the CPU raises the run
	// time error; the C source gives all ones for the quotient (-1 when
	// signed) and x for the remainder, C's undefined behaviour kept away;
	// PTX leaves it to the hardware (div and rem by zero are unspecified
	// in the ISA, and no trap is taken); kabi's host evaluator declines.
	DivZero Rule = iota + 1
	// Division: integer / and % truncate toward zero, in the operands'
	// signedness, and MinInt / -1 is MinInt with remainder 0 (Go's
	// wrapping; the hardware may trap or give anything).
	Division
	// ShiftWide: a shift count of the width or more gives 0, or all sign
	// bits for >> of a negative signed value; the count's own type may be
	// wider or narrower than the value's (a 64-bit count on a 32-bit value
	// must not be truncated to a small one).
	ShiftWide
	// ShiftNegative: a negative signed shift count. Go panics; the CPU
	// raises the run-time error; the GPUs count it as huge (an unsigned
	// reading of its bits), so the result is ShiftWide's.
	ShiftNegative
	// FloatToInt: float to integer conversion truncates toward zero. Out
	// of range Go leaves the value to the implementation; qd's GPUs
	// saturate to the integer type's range and give 0 for NaN (PTX's
	// cvt.rzi), and the CPU gives what Go gives on the host. To an 8- or
	// 16-bit type the GPUs convert as Go's compiler does, through int32:
	// saturated to int32's range (NaN 0), then the low bits, so
	// int8(200.5) is -56 and uint8(-1.5) is 255 everywhere, and only
	// values beyond int32's range differ from the host's Go (amd64's
	// conversion gives MinInt32 there, so 0).
	FloatToInt
	// MinMaxFloat: Go's min and max of floats are NaN when either operand
	// is, and min(-0, +0) is -0, max(-0, +0) is +0, whatever the order.
	MinMaxFloat
	// SmallInts: conversions between the 8- and 16-bit integers and the
	// other integer and float types. To a small type an integer keeps its
	// low bits (int8(200) is -56, uint8(-1) is 255); from one a value
	// extends by its own signedness (uint32(int8(-1)) is 0xFFFFFFFF); to a
	// float it is exact. Go defines all of it; the generators hold small
	// values widened in 32-bit registers, so every conversion must
	// re-truncate or re-extend where the widths differ.
	SmallInts
	// Bitcast: the bits of a 4- or 8-byte value read as another type of
	// the same size (math.Float32bits, math.Float64frombits, and the
	// signed forms int32(math.Float32bits(x))): every bit kept, signs,
	// zeros, infinities, subnormals and NaN payloads included.
	Bitcast
	numRules
)

// GoMeaning is what the Go specification says of a rule's cases.
type GoMeaning uint8

const (
	// Defined: Go gives the result; every backend gives it.
	Defined GoMeaning = iota + 1
	// Panics: a run-time panic.
	Panics
	// ImplementationDefined: in range Go gives the result, out of range
	// the implementation decides.
	ImplementationDefined
)

// Outcome is what a backend does in a rule's cases.
type Outcome uint8

const (
	// Want: the case's Want, bit for bit (NaN payloads aside).
	Want Outcome = iota + 1
	// RuntimeError: the kernel fails with the rule's Error.
	RuntimeError
	// Unspecified: some value, not checked.
	Unspecified
	// HostGo: Reference, what Go gives on this machine.
	HostGo
	// Declines: the evaluator gives no value (kabi's HostTotal then
	// sizes the grid at the cap, and the kernel bounds itself).
	Declines
)

// Backend is a code generator, or kabi's host evaluator.
type Backend uint8

// The backends.
const (
	CPU   Backend = iota // package codegen/cpu
	PTX                  // package codegen/ptx
	C                    // package codegen/csrc, AMD and NVRTC alike
	Host                 // package kabi's evaluation of extents
	SPIRV                // package codegen/spirv, run by the Vulkan backend
	numBackends
)

var backendNames = [numBackends]string{CPU: "cpu", PTX: "ptx", C: "c", Host: "host", SPIRV: "spirv"}

func (b Backend) String() string {
	if b < numBackends {
		return backendNames[b]
	}
	return "backend?"
}

// RuleInfo describes a rule.
type RuleInfo struct {
	Name string
	Go   GoMeaning
	// Does is what each backend does in the rule's cases.
	Does [numBackends]Outcome
	// Error is the text of the run-time error of a backend whose outcome
	// is RuntimeError (the CPU's, as Go's panic words it).
	Error string
}

// Rules describes every rule, indexed by Rule.
var Rules = [numRules]RuleInfo{
	DivZero: {Name: "DivZero", Go: Panics, Error: "integer divide by zero",
		Does: [numBackends]Outcome{CPU: RuntimeError, PTX: Unspecified, C: Want, Host: Declines, SPIRV: Want}},
	Division: {Name: "Division", Go: Defined,
		Does: [numBackends]Outcome{CPU: Want, PTX: Want, C: Want, Host: Want, SPIRV: Want}},
	ShiftWide: {Name: "ShiftWide", Go: Defined,
		Does: [numBackends]Outcome{CPU: Want, PTX: Want, C: Want, Host: Want, SPIRV: Want}},
	ShiftNegative: {Name: "ShiftNegative", Go: Panics, Error: "negative shift amount",
		Does: [numBackends]Outcome{CPU: RuntimeError, PTX: Want, C: Want, Host: Want, SPIRV: Want}},
	FloatToInt: {Name: "FloatToInt", Go: ImplementationDefined,
		Does: [numBackends]Outcome{CPU: HostGo, PTX: Want, C: Want, Host: Want, SPIRV: Want}},
	MinMaxFloat: {Name: "MinMaxFloat", Go: Defined,
		Does: [numBackends]Outcome{CPU: Want, PTX: Want, C: Want, Host: Want, SPIRV: Want}},
	SmallInts: {Name: "SmallInts", Go: Defined,
		Does: [numBackends]Outcome{CPU: Want, PTX: Want, C: Want, Host: Want, SPIRV: Want}},
	Bitcast: {Name: "Bitcast", Go: Defined,
		Does: [numBackends]Outcome{CPU: Want, PTX: Want, C: Want, Host: Want, SPIRV: Want}},
}

func (r Rule) String() string {
	if r > 0 && r < numRules {
		return Rules[r].Name
	}
	return "rule?"
}
