package ir

// Verify's checks of block loops (blocks.go): the shapes of Blocks,
// Threads, BlockReduce and BlockScan, their variables' scopes, and the
// shared arrays. Which statements may sit at a block's level and which
// locals a thread loop may assign are lowering's rules, as the placement
// of parallel loops is.

// blockState is what the verifier knows of the Blocks loop being walked.
type blockState struct {
	in      *Blocks // the enclosing Blocks, nil outside one
	threads bool    // inside one of its Threads loops
	shared  map[int]*Param
}

func (v *verifier) blocks(s *Blocks) {
	if v.blk.in != nil {
		v.errorf(s.Pos, "block loop inside a block loop: blocks do not nest; use one qd.Blocks loop and thread loops inside it")
		return
	}
	v.index(s.Count, "block count")
	if t := v.index(s.Size, "block size"); t != Invalid {
		v.blockSize(s.Size)
	}
	if v.blk.shared == nil {
		v.blk.shared = map[int]*Param{}
	}
	for i, a := range s.Shared {
		if a == nil {
			v.errorf(s.Pos, "shared array %d is nil", i)
			continue
		}
		v.sharedArray(a)
		v.params[a] = true
	}
	if bytes := s.SharedBytes(); bytes > MaxSharedBytes {
		v.errorf(s.Pos, "the block's shared arrays take %d bytes; a block has at most %d (48 KiB) of shared memory: make the arrays smaller, or use fewer of them", bytes, MaxSharedBytes)
	}
	v.push()
	if s.Var != nil && s.Var.Type != I64 {
		v.errorf(s.Pos, "block index %s has type %s; it must be i64", varName(s.Var), s.Var.Type)
	}
	v.declare(s.Var, s.Pos)
	if s.Var != nil {
		v.pvars[s.Var] = true
	}
	saved := v.base
	v.base = len(v.loops)
	v.blk.in = s
	v.block(s.Body)
	v.blk.in = nil
	v.base = saved
	v.pop()
	for _, a := range s.Shared {
		delete(v.params, a)
	}
	for _, x := range s.PerThread {
		if _, ok := v.allDecl[x]; x == nil || !ok {
			v.errorf(s.Pos, "per-thread variable %s is not declared in the block loop", varName(x))
		}
	}
}

// index checks a Blocks count or size: an i64 with no atomic in it.
func (v *verifier) index(e Expr, what string) Type {
	t := v.operand(e, what)
	if t != Invalid && t != I64 {
		v.errorf(v.pos, "%s has type %s; it must be i64 (Go's int)", what, t)
		return Invalid
	}
	InspectExpr(e, func(n Node) bool {
		switch n.(type) {
		case *Atomic:
			v.errorf(v.pos, "%s holds an atomic operation; compute it in a variable before the loop", what)
			return false
		}
		return true
	})
	return t
}

// blockSize checks that a block size is known when the kernel is launched:
// a constant in 1..MaxBlockDim, or arithmetic on scalar parameters and
// constants.
func (v *verifier) blockSize(e Expr) {
	if c, ok := e.(*Const); ok {
		if n := c.Int(); n < 1 || n > MaxBlockDim {
			v.errorf(v.pos, "block size %d is outside 1..%d: GPUs run at most %d threads per block", n, MaxBlockDim, MaxBlockDim)
		}
		return
	}
	if !LaunchScalar(e) {
		v.errorf(v.pos, "block size must be a constant or computed from scalar parameters, so that a launch knows it")
	}
}

// sharedArray checks a shared array's declaration.
func (v *verifier) sharedArray(a *Param) {
	switch {
	case !a.IsShared():
		v.errorf(a.Pos, "shared array %q has no shape", a.Name)
		return
	case a.Index >= 0:
		v.errorf(a.Pos, "shared array %q has Index %d; shared arrays have negative indices", a.Name, a.Index)
	case v.blk.shared[a.Index] != nil && v.blk.shared[a.Index] != a:
		v.errorf(a.Pos, "shared arrays %q and %q share Index %d", v.blk.shared[a.Index].Name, a.Name, a.Index)
	}
	v.blk.shared[a.Index] = a
	if a.Dims != len(a.Shared) || a.Dims < 1 || a.Dims > MaxDims {
		v.errorf(a.Pos, "shared array %q has %d dimensions and %d extents; it needs 1 to %d of each, as many of one as of the other", a.Name, a.Dims, len(a.Shared), MaxDims)
	}
	total := 1
	for _, n := range a.Shared {
		if n < 1 || n > MaxSharedBytes {
			v.errorf(a.Pos, "shared array %q has an extent of %d", a.Name, n)
			return
		}
		total *= n
		if total > MaxSharedBytes {
			v.errorf(a.Pos, "shared array %q has %d or more elements; a block has %d bytes of shared memory", a.Name, total, MaxSharedBytes)
			return
		}
	}
	switch {
	case a.Rec != nil:
		v.record(a)
	case !a.Elem.Valid():
		v.errorf(a.Pos, "shared array %q has invalid type %s", a.Name, a.Elem)
	}
}

func (v *verifier) threads(s *Threads) {
	switch {
	case v.blk.in == nil:
		v.errorf(s.Pos, "thread loop outside a block loop: b.Threads() ranges over the threads of a qd.Blocks block")
		return
	case v.blk.threads:
		v.errorf(s.Pos, "thread loop inside a thread loop: each thread runs a thread loop's body once; write the inner loop as a serial for loop")
		return
	}
	v.push()
	if s.Var != nil && s.Var.Type != I64 {
		v.errorf(s.Pos, "thread index %s has type %s; it must be i64", varName(s.Var), s.Var.Type)
	}
	v.declare(s.Var, s.Pos)
	if s.Var != nil {
		v.pvars[s.Var] = true
	}
	saved := v.base
	v.base = len(v.loops)
	v.blk.threads = true
	v.block(s.Body)
	v.blk.threads = false
	v.base = saved
	v.pop()
}

// collective checks a BlockReduce or BlockScan.
func (v *verifier) collective(pos Pos, what string, x, result *Var) Type {
	switch {
	case v.blk.in == nil:
		v.errorf(pos, "%s outside a block loop", what)
		return Invalid
	case v.blk.threads:
		v.errorf(pos, "%s inside a thread loop: it combines the values of every thread of the block, so it is a statement of the block, between thread loops", what)
		return Invalid
	}
	xt, rt := v.use(x), v.use(result)
	switch {
	case xt == Invalid || rt == Invalid:
		return Invalid
	case xt == Bool:
		v.errorf(pos, "%s of bool %s; it takes numbers", what, varName(x))
		return Invalid
	case xt != rt:
		v.errorf(pos, "%s of %s %s into %s %s; the result has the operand's type", what, xt, varName(x), rt, varName(result))
		return Invalid
	case v.pvars[result]:
		v.errorf(pos, "%s into loop variable %s", what, varName(result))
	}
	return xt
}
