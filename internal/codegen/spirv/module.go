package spirv

import (
	"fmt"
	"math"
	"strings"
)

// ID is a SPIR-V result id.
type ID = uint32

// Version is the SPIR-V version modules declare: 1.5, the first with
// PhysicalStorageBuffer in the core, which Vulkan 1.2 accepts.
const Version = 0x00010500

// magic is SPIR-V's magic number, the first word of every module.
const magic = 0x07230203

// Module builds one SPIR-V module word by word, in the logical layout the
// specification requires: capabilities, extensions, imports, the memory
// model, entry points, execution modes, names, decorations, then types,
// constants and global variables, then functions. Types and constants are
// made once per distinct value and found again by key, as the
// specification requires of non-aggregate types.
type Module struct {
	bound ID

	caps       []uint32
	hasCap     map[uint32]bool
	exts       []string
	hasExt     map[string]bool
	glsl       ID
	addressing uint32
	memory     uint32

	entries, modes, names, decorations, globals, functions []uint32

	types map[string]ID
}

// NewModule starts a module in the given addressing and memory models.
func NewModule(addressing, memory uint32) *Module {
	return &Module{bound: 1, hasCap: map[uint32]bool{}, hasExt: map[string]bool{},
		addressing: addressing, memory: memory, types: map[string]ID{}}
}

// ID allocates a fresh result id.
func (m *Module) ID() ID {
	id := m.bound
	m.bound++
	return id
}

// Capability declares a capability once.
func (m *Module) Capability(c uint32) {
	if !m.hasCap[c] {
		m.hasCap[c] = true
		m.caps = append(m.caps, c)
	}
}

// Extension declares an extension once.
func (m *Module) Extension(name string) {
	if !m.hasExt[name] {
		m.hasExt[name] = true
		m.exts = append(m.exts, name)
	}
}

// GLSL is the id of the GLSL.std.450 extended instruction set, imported
// on first use.
func (m *Module) GLSL() ID {
	if m.glsl == 0 {
		m.glsl = m.ID()
	}
	return m.glsl
}

// inst appends one instruction to a section.
func inst(sec *[]uint32, op uint32, operands ...uint32) {
	*sec = append(*sec, uint32(len(operands)+1)<<16|op)
	*sec = append(*sec, operands...)
}

// String encodes s as SPIR-V's literal string: UTF-8, NUL-terminated,
// padded with NULs to a whole number of words.
func String(s string) []uint32 {
	b := append([]byte(s), 0)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24
	}
	return w
}

// EntryPoint declares fn as an entry point of model with the global
// variables it uses (SPIR-V 1.4 and later list every one).
func (m *Module) EntryPoint(model uint32, fn ID, name string, interfaces ...ID) {
	ops := append([]uint32{model, fn}, String(name)...)
	inst(&m.entries, OpEntryPoint, append(ops, interfaces...)...)
}

// ExecutionMode sets an execution mode of entry point fn.
func (m *Module) ExecutionMode(fn ID, mode uint32, args ...uint32) {
	inst(&m.modes, OpExecutionMode, append([]uint32{fn, mode}, args...)...)
}

// Name names id for disassemblies and validator messages.
func (m *Module) Name(id ID, name string) {
	inst(&m.names, OpName, append([]uint32{id}, String(name)...)...)
}

// Decorate decorates id.
func (m *Module) Decorate(id ID, decoration uint32, args ...uint32) {
	inst(&m.decorations, OpDecorate, append([]uint32{id, decoration}, args...)...)
}

// MemberDecorate decorates member of struct type id.
func (m *Module) MemberDecorate(id ID, member int, decoration uint32, args ...uint32) {
	inst(&m.decorations, OpMemberDecorate, append([]uint32{id, uint32(member), decoration}, args...)...)
}

// typeOf returns the id of the global made by op with operands, making it
// on first use: types and constants are unique per key.
func (m *Module) typeOf(key string, op uint32, operands ...uint32) ID {
	if id, ok := m.types[key]; ok {
		return id
	}
	id := m.ID()
	m.types[key] = id
	inst(&m.globals, op, append([]uint32{id}, operands...)...)
	return id
}

// constOf is typeOf for constants, whose result type comes before the
// result id.
func (m *Module) constOf(key string, op uint32, t ID, operands ...uint32) ID {
	if id, ok := m.types[key]; ok {
		return id
	}
	id := m.ID()
	m.types[key] = id
	inst(&m.globals, op, append([]uint32{t, id}, operands...)...)
	return id
}

// Void is the void type.
func (m *Module) Void() ID { return m.typeOf("void", OpTypeVoid) }

// Bool is the boolean type.
func (m *Module) Bool() ID { return m.typeOf("bool", OpTypeBool) }

// Int is the integer type of bits bits. Signedness is left to the
// instructions (SDiv or UDiv, SConvert or UConvert), so one type serves
// int32 and uint32.
func (m *Module) Int(bits int) ID {
	switch bits {
	case 8:
		m.Capability(CapabilityInt8)
	case 16:
		m.Capability(CapabilityInt16)
	case 64:
		m.Capability(CapabilityInt64)
	}
	return m.typeOf(fmt.Sprintf("i%d", bits), OpTypeInt, uint32(bits), 0)
}

// Float is the floating type of bits bits (32 or 64).
func (m *Module) Float(bits int) ID {
	if bits == 64 {
		m.Capability(CapabilityFloat64)
	}
	return m.typeOf(fmt.Sprintf("f%d", bits), OpTypeFloat, uint32(bits))
}

// Vector is a vector of n elements of elem.
func (m *Module) Vector(elem ID, n int) ID {
	return m.typeOf(fmt.Sprintf("v%d.%d", n, elem), OpTypeVector, elem, uint32(n))
}

// Pointer is a pointer into storage class sc to elem.
func (m *Module) Pointer(sc uint32, elem ID) ID {
	return m.typeOf(fmt.Sprintf("p%d.%d", sc, elem), OpTypePointer, sc, elem)
}

// FuncType is the type of a function returning ret with the given
// parameter types.
func (m *Module) FuncType(ret ID, params ...ID) ID {
	key := fmt.Sprint("fn", ret, params)
	return m.typeOf(key, OpTypeFunction, append([]uint32{ret}, params...)...)
}

// Struct makes a new struct type of the given members: never shared, so
// that its decorations (Block, Offset) are its own.
func (m *Module) Struct(members ...ID) ID {
	id := m.ID()
	inst(&m.globals, OpTypeStruct, append([]uint32{id}, members...)...)
	return id
}

// ArrayOf is an array of n elements of elem (n a constant made here).
func (m *Module) ArrayOf(elem ID, n int) ID {
	length := m.ConstInt(32, uint64(n))
	return m.typeOf(fmt.Sprintf("a%d.%d", elem, length), OpTypeArray, elem, length)
}

// Const is a scalar constant of type t with the given value words (one
// for 8- to 32-bit types, two, low word first, for 64-bit ones).
func (m *Module) Const(t ID, words ...uint32) ID {
	key := fmt.Sprint("c", t, words)
	return m.constOf(key, OpConstant, t, words...)
}

// ConstInt is the integer constant v of bits bits (its low bits).
func (m *Module) ConstInt(bits int, v uint64) ID {
	t := m.Int(bits)
	switch bits {
	case 64:
		return m.Const(t, uint32(v), uint32(v>>32))
	case 32:
		return m.Const(t, uint32(v))
	}
	// Narrow types take their value in the low bits of the word,
	// zero-extended: the types carry no signedness.
	return m.Const(t, uint32(v)&(1<<bits-1))
}

// ConstFloat is the floating constant of bits bits with the given bit
// pattern (a float32's in the low 32 bits).
func (m *Module) ConstFloat(bits int, pattern uint64) ID {
	t := m.Float(bits)
	if bits == 64 {
		return m.Const(t, uint32(pattern), uint32(pattern>>32))
	}
	return m.Const(t, uint32(pattern))
}

// ConstF64 is the float64 constant x.
func (m *Module) ConstF64(x float64) ID { return m.ConstFloat(64, math.Float64bits(x)) }

// ConstBool is true or false.
func (m *Module) ConstBool(b bool) ID {
	t := m.Bool()
	if b {
		return m.constOf("true", OpConstantTrue, t)
	}
	return m.constOf("false", OpConstantFalse, t)
}

// ConstComposite is a composite constant of type t.
func (m *Module) ConstComposite(t ID, parts ...ID) ID {
	key := fmt.Sprint("cc", t, parts)
	return m.constOf(key, OpConstantComposite, t, parts...)
}

// Global is a module-level variable of pointer type ptr in storage class
// sc.
func (m *Module) Global(ptr ID, sc uint32) ID {
	id := m.ID()
	inst(&m.globals, OpVariable, ptr, id, sc)
	return id
}

// AddFunction appends a finished function's words.
func (m *Module) AddFunction(f *Function) {
	m.functions = append(m.functions, f.words()...)
}

// Words is the module's binary: the header, then every section in order.
func (m *Module) Words() []uint32 {
	w := []uint32{magic, Version, 0, m.bound, 0}
	for _, c := range m.caps {
		inst(&w, OpCapability, c)
	}
	for _, e := range m.exts {
		inst(&w, OpExtension, String(e)...)
	}
	if m.glsl != 0 {
		inst(&w, OpExtInstImport, append([]uint32{m.glsl}, String("GLSL.std.450")...)...)
	}
	inst(&w, OpMemoryModel, m.addressing, m.memory)
	for _, sec := range [][]uint32{m.entries, m.modes, m.names, m.decorations, m.globals, m.functions} {
		w = append(w, sec...)
	}
	return w
}

// Bytes is Words in little-endian bytes, as spirv-val and files take it.
func Bytes(words []uint32) []byte {
	b := make([]byte, 4*len(words))
	for i, x := range words {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
	}
	return b
}

// Function is one function being written: its local variables, which
// SPIR-V requires at the top of the first block, and its body.
type Function struct {
	m      *Module
	header []uint32 // OpFunction and its parameters
	first  ID       // the first block's label
	vars   []uint32
	body   []uint32
	// Terminated: the current block has ended (a branch, a return); what
	// is written next needs a new block.
	Terminated bool
}

// NewFunction starts a function of type fnType returning ret; id is its
// result id (made by the caller, so that an entry point can name it
// first). params are the parameter types; Params returns their ids.
func (m *Module) NewFunction(id, ret, fnType ID) *Function {
	f := &Function{m: m, first: m.ID()}
	inst(&f.header, OpFunction, ret, id, FunctionControlNone, fnType)
	return f
}

// Param adds a parameter of type t and returns its id. Parameters come
// before anything else is written.
func (f *Function) Param(t ID) ID {
	id := f.m.ID()
	inst(&f.header, OpFunctionParameter, t, id)
	return id
}

// Var makes a Function-storage local of type t (its pointer type is
// made here) and returns the variable's id.
func (f *Function) Var(t ID) ID {
	id := f.m.ID()
	inst(&f.vars, OpVariable, f.m.Pointer(StorageClassFunction, t), id, StorageClassFunction)
	return id
}

// VarInit makes a Function-storage local of type t that starts at the
// constant init.
func (f *Function) VarInit(t, init ID) ID {
	id := f.m.ID()
	inst(&f.vars, OpVariable, f.m.Pointer(StorageClassFunction, t), id, StorageClassFunction, init)
	return id
}

// Op writes an instruction with a result: op resultType result operands.
func (f *Function) Op(op uint32, resultType ID, operands ...uint32) ID {
	id := f.m.ID()
	inst(&f.body, op, append([]uint32{resultType, id}, operands...)...)
	return id
}

// Void writes an instruction without a result.
func (f *Function) Void(op uint32, operands ...uint32) { inst(&f.body, op, operands...) }

// Ext writes a GLSL.std.450 extended instruction.
func (f *Function) Ext(resultType ID, ext uint32, args ...ID) ID {
	return f.Op(OpExtInst, resultType, append([]uint32{f.m.GLSL(), ext}, args...)...)
}

// Label starts block id; the previous block must have ended.
func (f *Function) Label(id ID) {
	inst(&f.body, OpLabel, id)
	f.Terminated = false
}

// Branch ends the current block with a branch to target.
func (f *Function) Branch(target ID) {
	inst(&f.body, OpBranch, target)
	f.Terminated = true
}

// BranchIf ends the current block with a conditional branch.
func (f *Function) BranchIf(cond, then, els ID) {
	inst(&f.body, OpBranchConditional, cond, then, els)
	f.Terminated = true
}

// Return ends the current block with a return.
func (f *Function) Return() {
	inst(&f.body, OpReturn)
	f.Terminated = true
}

func (f *Function) words() []uint32 {
	w := append([]uint32{}, f.header...)
	inst(&w, OpLabel, f.first)
	w = append(w, f.vars...)
	w = append(w, f.body...)
	inst(&w, OpFunctionEnd)
	return w
}

// Describe lists a module's capabilities and extensions, for messages.
func (m *Module) Describe() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d ids, %d capabilities", m.bound, len(m.caps))
	if len(m.exts) > 0 {
		fmt.Fprintf(&sb, ", extensions %s", strings.Join(m.exts, " "))
	}
	return sb.String()
}
