package wasmproto

import (
	"encoding/binary"
	"math"
)

// A tiny WebAssembly assembler: enough to emit the code a code generator
// would emit for the IR of saxpy, the heat step and the 5-point stencil.

const (
	tI32 = 0x7f
	tF32 = 0x7d
)

type fn struct {
	name    string
	params  []byte
	results []byte
	locals  []byte // types of extra locals
	code    []byte
}

func uleb(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
		} else {
			return append(b, c)
		}
	}
}

func sleb(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func (f *fn) op(b ...byte) *fn { f.code = append(f.code, b...); return f }
func (f *fn) get(i int) *fn    { f.code = uleb(append(f.code, 0x20), uint64(i)); return f }
func (f *fn) set(i int) *fn    { f.code = uleb(append(f.code, 0x21), uint64(i)); return f }
func (f *fn) tee(i int) *fn    { f.code = uleb(append(f.code, 0x22), uint64(i)); return f }
func (f *fn) i32(v int32) *fn  { f.code = sleb(append(f.code, 0x41), int64(v)); return f }
func (f *fn) f32(v float32) *fn {
	f.code = append(f.code, 0x43)
	f.code = binary.LittleEndian.AppendUint32(f.code, math.Float32bits(v))
	return f
}
func (f *fn) block() *fn     { return f.op(0x02, 0x40) }
func (f *fn) loop() *fn      { return f.op(0x03, 0x40) }
func (f *fn) ifThen() *fn    { return f.op(0x04, 0x40) }
func (f *fn) elseOp() *fn    { return f.op(0x05) }
func (f *fn) end() *fn       { return f.op(0x0b) }
func (f *fn) br(l int) *fn   { f.code = uleb(append(f.code, 0x0c), uint64(l)); return f }
func (f *fn) brIf(l int) *fn { f.code = uleb(append(f.code, 0x0d), uint64(l)); return f }
func (f *fn) ret() *fn       { return f.op(0x0f) }
func (f *fn) f32load() *fn   { return f.op(0x2a, 2, 0) }
func (f *fn) f32store() *fn  { return f.op(0x38, 2, 0) }
func (f *fn) i32add() *fn    { return f.op(0x6a) }
func (f *fn) i32sub() *fn    { return f.op(0x6b) }
func (f *fn) i32mul() *fn    { return f.op(0x6c) }
func (f *fn) i32or() *fn     { return f.op(0x72) }
func (f *fn) i32eq() *fn     { return f.op(0x46) }
func (f *fn) i32geu() *fn    { return f.op(0x4f) }
func (f *fn) i32ges() *fn    { return f.op(0x4e) }
func (f *fn) i32shl() *fn    { return f.op(0x74) }
func (f *fn) f32add() *fn    { return f.op(0x92) }
func (f *fn) f32sub() *fn    { return f.op(0x93) }
func (f *fn) f32mul() *fn    { return f.op(0x94) }

func section(out []byte, id byte, body []byte) []byte {
	out = append(out, id)
	out = uleb(out, uint64(len(body)))
	return append(out, body...)
}

func name(b []byte, s string) []byte { return append(uleb(b, uint64(len(s))), s...) }

// module assembles functions into a module importing memory "env"."mem"
// (shared, maxPages) and exporting each function by name.
func module(maxPages uint32, fns ...*fn) []byte {
	out := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	var types, imports, funcs, exports, code []byte
	types = uleb(types, uint64(len(fns)))
	funcs = uleb(funcs, uint64(len(fns)))
	exports = uleb(exports, uint64(len(fns)))
	code = uleb(code, uint64(len(fns)))
	for i, f := range fns {
		types = append(types, 0x60)
		types = append(uleb(types, uint64(len(f.params))), f.params...)
		types = append(uleb(types, uint64(len(f.results))), f.results...)
		funcs = uleb(funcs, uint64(i))
		exports = name(exports, f.name)
		exports = append(exports, 0x00)
		exports = uleb(exports, uint64(i))
		var body []byte
		body = uleb(body, uint64(len(f.locals)))
		for _, t := range f.locals {
			body = append(uleb(body, 1), t)
		}
		body = append(body, f.code...)
		body = append(body, 0x0b)
		code = uleb(code, uint64(len(body)))
		code = append(code, body...)
	}
	imports = uleb(imports, 1)
	imports = name(imports, "env")
	imports = name(imports, "mem")
	imports = append(imports, 0x02, 0x03) // memory, shared with max
	imports = uleb(imports, 1)
	imports = uleb(imports, uint64(maxPages))
	out = section(out, 1, types)
	out = section(out, 2, imports)
	out = section(out, 3, funcs)
	out = section(out, 7, exports)
	out = section(out, 10, code)
	return out
}
