package ir

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// Hash is the structural hash of a kernel (see HashKernel).
type Hash [32]byte

// String returns h in hexadecimal.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// Short returns the first 12 hex digits of h, enough to tell kernels apart in
// logs and cache file names.
func (h Hash) Short() string { return hex.EncodeToString(h[:6]) }

// hashVersion starts every encoding; bump it when the encoding changes so that
// stale cache entries miss.
const hashVersion = "qd-ir-hash-3"

// Node tags of the canonical encoding. Values are part of the encoding: append
// new ones, never renumber.
const (
	tagNil byte = iota
	tagKernel
	tagParam
	tagBlock
	tagDecl
	tagAssign
	tagStore
	tagExprStmt
	tagIf
	tagFor
	tagBreak
	tagContinue
	tagParallelFor
	tagStreamParallel
	tagConst
	tagParamRef
	tagVarRef
	tagLen
	tagUnary
	tagBinary
	tagConvert
	tagSelect
	tagCall
	tagLoad
	tagAtomic
	tagUnknown
	tagBitcast
	tagRecord
	tagBlocks
	tagThreads
	tagBlockReduce
	tagBlockScan
)

// HashKernel returns the structural hash of k: equal for kernels with the same
// structure, different whenever the structure, types, constants, names or
// stream-parallel grouping differ. Positions do not take part.
//
// It is a sha256 over a canonical prefix encoding written while walking k:
// every node is a tag followed by its fields, lists by their length, so
// distinct trees never share an encoding (moving a loop between groups, or
// splitting a group, changes the lists and so the hash). The kernel and
// parameter names take part because they are visible (symbol names, error
// messages); positions, Var IDs and Var names do not: locals are numbered in
// order of first appearance, which is declaration order in a verified kernel,
// and For loops likewise for Break/Continue targets. Codegens must therefore
// not bake positions or local names into what the cache keeps. HashKernel
// never panics, also on kernels that do not verify.
func HashKernel(k *Kernel) Hash {
	e := hashEncoder{vars: map[*Var]uint64{}, loops: map[*For]uint64{}}
	e.str(hashVersion)
	if k == nil {
		e.tag(tagNil)
		return sha256.Sum256(e.buf)
	}
	e.tag(tagKernel)
	e.str(k.Name)
	e.uint(uint64(len(k.Params)))
	for _, p := range k.Params {
		e.paramFields(p)
	}
	e.stmts(k.Body)
	return sha256.Sum256(e.buf)
}

type hashEncoder struct {
	buf   []byte
	vars  map[*Var]uint64
	loops map[*For]uint64
}

func (e *hashEncoder) tag(t byte)    { e.buf = append(e.buf, t) }
func (e *hashEncoder) uint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *hashEncoder) int(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }
func (e *hashEncoder) str(s string)  { e.uint(uint64(len(s))); e.buf = append(e.buf, s...) }
func (e *hashEncoder) bits(v uint64) { e.buf = binary.LittleEndian.AppendUint64(e.buf, v) }
func (e *hashEncoder) typ(t Type)    { e.uint(uint64(t)) }

// paramFields encodes a parameter's (or shared array's) own fields.
func (e *hashEncoder) paramFields(p *Param) {
	if p == nil {
		e.tag(tagNil)
		return
	}
	e.tag(tagParam)
	e.str(p.Name)
	e.uint(uint64(p.Elem))
	e.int(int64(p.Dims))
	e.int(int64(p.Index))
	if r := p.Rec; r != nil {
		e.tag(tagRecord)
		e.str(r.Name)
		e.int(int64(r.Size))
		e.int(int64(r.Align))
		e.uint(uint64(len(r.Leaves)))
		for _, l := range r.Leaves {
			e.str(l.Path)
			e.typ(l.Type)
			e.int(int64(l.Offset))
		}
	}
	e.uint(uint64(len(p.Shared)))
	for _, n := range p.Shared {
		e.int(int64(n))
	}
}

// param encodes a parameter reference by its position in Params plus one
// (a shared array by its negative Index); the parameter's own fields were
// encoded once in the header (a shared array's by its Blocks). A nil
// parameter encodes as 0, a foreign one with its name so the encoding
// stays total.
func (e *hashEncoder) param(p *Param) {
	switch {
	case p == nil:
		e.int(0)
		return
	case p.Index < 0:
		e.int(int64(p.Index))
	default:
		e.int(int64(p.Index) + 1)
	}
	e.str(p.Name)
}

// v encodes a local by its first-appearance number and its type.
func (e *hashEncoder) v(v *Var) {
	if v == nil {
		e.uint(0)
		return
	}
	n, ok := e.vars[v]
	if !ok {
		n = uint64(len(e.vars) + 1)
		e.vars[v] = n
	}
	e.uint(n)
	e.typ(v.Type)
}

func (e *hashEncoder) loop(f *For) {
	if f == nil {
		e.uint(0)
		return
	}
	n, ok := e.loops[f]
	if !ok {
		n = uint64(len(e.loops) + 1)
		e.loops[f] = n
	}
	e.uint(n)
}

func (e *hashEncoder) stmts(list []Stmt) {
	e.tag(tagBlock)
	e.uint(uint64(len(list)))
	for _, s := range list {
		e.stmt(s)
	}
}

func (e *hashEncoder) exprs(list []Expr) {
	e.uint(uint64(len(list)))
	for _, x := range list {
		e.expr(x)
	}
}

func (e *hashEncoder) stmt(s Stmt) {
	switch s := s.(type) {
	case nil:
		e.tag(tagNil)
	case *Decl:
		e.tag(tagDecl)
		e.v(s.Var)
		e.expr(s.Init)
	case *Assign:
		e.tag(tagAssign)
		e.v(s.Var)
		e.expr(s.Value)
	case *Store:
		e.tag(tagStore)
		e.param(s.Array)
		e.exprs(s.Index)
		e.int(int64(s.Leaf))
		e.expr(s.Value)
	case *ExprStmt:
		e.tag(tagExprStmt)
		e.expr(s.X)
	case *If:
		e.tag(tagIf)
		e.expr(s.Cond)
		e.stmts(s.Then)
		e.stmts(s.Else)
	case *For:
		e.tag(tagFor)
		e.loop(s)
		e.stmts(s.Init)
		e.expr(s.Cond)
		e.stmts(s.Post)
		e.stmts(s.Body)
	case *Break:
		e.tag(tagBreak)
		e.loop(s.Loop)
	case *Continue:
		e.tag(tagContinue)
		e.loop(s.Loop)
	case *ParallelFor:
		e.tag(tagParallelFor)
		e.int(int64(s.BlockDim))
		e.uint(uint64(len(s.Vars)))
		for _, v := range s.Vars {
			e.v(v)
		}
		e.exprs(s.Extents)
		e.stmts(s.Body)
	case *StreamParallel:
		e.tag(tagStreamParallel)
		e.stmts(s.Body)
	case *Blocks:
		e.tag(tagBlocks)
		e.v(s.Var)
		e.expr(s.Count)
		e.expr(s.Size)
		e.uint(uint64(len(s.Shared)))
		for _, p := range s.Shared {
			e.paramFields(p)
		}
		e.uint(uint64(len(s.PerThread)))
		for _, v := range s.PerThread {
			e.v(v)
		}
		e.stmts(s.Body)
	case *Threads:
		e.tag(tagThreads)
		e.v(s.Var)
		e.stmts(s.Body)
	case *BlockReduce:
		e.tag(tagBlockReduce)
		e.uint(uint64(s.Op))
		e.v(s.X)
		e.v(s.Result)
	case *BlockScan:
		e.tag(tagBlockScan)
		if s.Inclusive {
			e.uint(1)
		} else {
			e.uint(0)
		}
		e.v(s.X)
		e.v(s.Result)
	default:
		e.tag(tagUnknown)
	}
}

func (e *hashEncoder) expr(x Expr) {
	switch x := x.(type) {
	case nil:
		e.tag(tagNil)
	case *Const:
		e.tag(tagConst)
		e.typ(x.T)
		e.bits(x.Bits)
	case *ParamRef:
		e.tag(tagParamRef)
		e.param(x.Param)
	case *VarRef:
		e.tag(tagVarRef)
		e.v(x.Var)
	case *Len:
		e.tag(tagLen)
		e.param(x.Array)
		e.int(int64(x.Dim))
	case *Unary:
		e.tag(tagUnary)
		e.uint(uint64(x.Op))
		e.expr(x.X)
	case *Binary:
		e.tag(tagBinary)
		e.uint(uint64(x.Op))
		e.expr(x.X)
		e.expr(x.Y)
	case *Convert:
		e.tag(tagConvert)
		e.typ(x.To)
		e.expr(x.X)
	case *Select:
		e.tag(tagSelect)
		e.expr(x.Cond)
		e.expr(x.X)
		e.expr(x.Y)
	case *Call:
		e.tag(tagCall)
		e.uint(uint64(x.Fn))
		e.exprs(x.Args)
	case *Load:
		e.tag(tagLoad)
		e.param(x.Array)
		e.exprs(x.Index)
		e.int(int64(x.Leaf))
	case *Bitcast:
		e.tag(tagBitcast)
		e.typ(x.To)
		e.expr(x.X)
	case *Atomic:
		e.tag(tagAtomic)
		e.uint(uint64(x.Op))
		e.param(x.Array)
		e.exprs(x.Index)
		e.int(int64(x.Leaf))
		e.expr(x.Value)
		e.expr(x.Compare)
	default:
		e.tag(tagUnknown)
	}
}
