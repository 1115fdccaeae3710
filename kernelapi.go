package qd

// The kernel-side API: what kernel source calls. Every function here is real
// Go with a native implementation, so a kernel file compiles with the user's
// package and a kernel called directly from Go runs serially on the calling
// goroutine as a reference. When the same source goes through Compile, the
// front end recognises these functions by their declarations (not by name)
// and turns them into IR; their native bodies are not used there.
//
// This file is also the front end's source of truth for the declarations:
// internal/frontend embeds an identical copy (qdapi.go.txt, refreshed by
// go generate ./internal/frontend) and a test fails if the two differ.

import (
	"iter"
	"math"
	"reflect"
	"sync/atomic"
	"unsafe"
)

// StreamParallel runs body. In a kernel compiled by qd, each
// qd.StreamParallel block is a stream-parallel group: the statements of one
// block run in order on one stream, and different blocks run concurrently on
// different streams. Either every top-level statement of a kernel is a
// qd.StreamParallel call or none is; blocks do not nest, and they may appear
// only in a //qd:kernel function, never in a helper it calls. Natively the
// blocks simply run one after the other.
func StreamParallel(body func()) { body() }

// Serial runs body. In a kernel compiled by qd it marks serial work as
// meant: a range loop outside a parallel loop that is not at the top level
// of the kernel (or of a qd.StreamParallel block), under an if or inside a
// serial loop, would run its whole range on one thread, so qd refuses it
// unless it is inside a qd.Serial block. The block's statements run where
// it stands, its range loops as serial loops. Its argument is a function
// literal, and the call a statement; inside a parallel loop, where every
// loop is serial per iteration already, it changes nothing. Natively it
// simply calls body.
func Serial(body func()) { body() }

// LoopOption tunes the parallel loop that follows a [LoopConfig] call.
type LoopOption struct {
	blockDim int
}

// LoopConfig tunes the top-level parallel loop written immediately after it:
//
//	qd.LoopConfig(qd.BlockDim(128))
//	for i := range len(x) { ... }
//
// Natively it does nothing.
func LoopConfig(opts ...LoopOption) {}

// BlockDim sets the number of GPU threads per block of a parallel loop. In a
// kernel n must be a constant between 1 and 1024. The CPU backend ignores it.
func BlockDim(n int) LoopOption { return LoopOption{blockDim: n} }

// NDRange is the 2-dimensional range [0, n) × [0, m) for a range loop:
//
//	for i, j := range qd.NDRange(len(c), len(c[0])) { c[i][j] = 0 }
//
// At the top level of a kernel the loop is parallel over every (i, j) pair;
// natively, and inside another loop, it runs serially in row-major order.
func NDRange(n, m int) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for i := range n {
			for j := range m {
				if !yield(i, j) {
					return
				}
			}
		}
	}
}

// Index3 is a point of a 3-dimensional [NDRange3]: Go's range-over-func yields at
// most two values, so the three indices travel together.
type Index3 struct {
	I, J, K int
}

// NDRange3 is the 3-dimensional range [0, n) × [0, m) × [0, l) for a range
// loop; each point is an Index3:
//
//	for p := range qd.NDRange3(len(v), len(v[0]), len(v[0][0])) { v[p.I][p.J][p.K] = 0 }
//
// At the top level of a kernel the loop is parallel over every point; natively,
// and inside another loop, it runs serially in row-major order. In a kernel
// the index may only be used through its fields p.I, p.J and p.K.
func NDRange3(n, m, l int) iter.Seq[Index3] {
	return func(yield func(Index3) bool) {
		for i := range n {
			for j := range m {
				for k := range l {
					if !yield(Index3{i, j, k}) {
						return
					}
				}
			}
		}
	}
}

// AtomicElem is the set of element types the atomic operations accept.
type AtomicElem interface {
	int | int32 | int64 | uint | uint32 | uint64 | float32 | float64
}

// AtomicInt is the set of integer element types [AtomicAnd], [AtomicOr] and
// [AtomicXor] accept.
type AtomicInt interface {
	int | int32 | int64 | uint | uint32 | uint64
}

// Float is the set of types the qd math functions accept.
type Float interface {
	float32 | float64
}

// isFloat reports whether T is a floating-point type: integer additions can
// use the hardware's add, floats need a compare-and-swap loop.
func isFloat[T AtomicElem]() bool {
	var z T
	switch any(z).(type) {
	case float32, float64:
		return true
	}
	return false
}

// rmw atomically replaces *p by f(*p) and returns the old value. It works on
// the bits of the element (4 or 8 bytes) so that one loop serves integers and
// floats alike; the new value is not written when f leaves the bits unchanged.
func rmw[T AtomicElem](p *T, f func(old T) T) T {
	if unsafe.Sizeof(*p) == 4 {
		u := (*uint32)(unsafe.Pointer(p))
		for {
			ob := atomic.LoadUint32(u)
			old := *(*T)(unsafe.Pointer(&ob))
			nv := f(old)
			nb := *(*uint32)(unsafe.Pointer(&nv))
			if nb == ob || atomic.CompareAndSwapUint32(u, ob, nb) {
				return old
			}
		}
	}
	u := (*uint64)(unsafe.Pointer(p))
	for {
		ob := atomic.LoadUint64(u)
		old := *(*T)(unsafe.Pointer(&ob))
		nv := f(old)
		nb := *(*uint64)(unsafe.Pointer(&nv))
		if nb == ob || atomic.CompareAndSwapUint64(u, ob, nb) {
			return old
		}
	}
}

// addBits adds the bit pattern of v to *p with the hardware's atomic add
// (two's complement addition is the same for signed and unsigned integers)
// and returns the old value.
func addBits[T AtomicElem](p *T, v T) T {
	if unsafe.Sizeof(*p) == 4 {
		vb := *(*uint32)(unsafe.Pointer(&v))
		ob := atomic.AddUint32((*uint32)(unsafe.Pointer(p)), vb) - vb
		return *(*T)(unsafe.Pointer(&ob))
	}
	vb := *(*uint64)(unsafe.Pointer(&v))
	ob := atomic.AddUint64((*uint64)(unsafe.Pointer(p)), vb) - vb
	return *(*T)(unsafe.Pointer(&ob))
}

// AtomicAdd atomically adds v to *p and returns the old value. In a kernel p
// must be the address of an array element, &x[i].
func AtomicAdd[T AtomicElem](p *T, v T) T {
	switch any(v).(type) {
	case float32:
		// A compare-and-swap loop of its own, not rmw's: a scatter's
		// adds are the hot path of the kernels that make them.
		u := (*uint32)(unsafe.Pointer(p))
		for {
			ob := atomic.LoadUint32(u)
			nv := *(*T)(unsafe.Pointer(&ob)) + v
			if atomic.CompareAndSwapUint32(u, ob, *(*uint32)(unsafe.Pointer(&nv))) {
				return *(*T)(unsafe.Pointer(&ob))
			}
		}
	case float64:
		u := (*uint64)(unsafe.Pointer(p))
		for {
			ob := atomic.LoadUint64(u)
			nv := *(*T)(unsafe.Pointer(&ob)) + v
			if atomic.CompareAndSwapUint64(u, ob, *(*uint64)(unsafe.Pointer(&nv))) {
				return *(*T)(unsafe.Pointer(&ob))
			}
		}
	}
	return addBits(p, v)
}

// AtomicSub atomically subtracts v from *p and returns the old value.
func AtomicSub[T AtomicElem](p *T, v T) T {
	if isFloat[T]() {
		return rmw(p, func(old T) T { return old - v })
	}
	return addBits(p, -v)
}

// AtomicMin atomically sets *p to min(*p, v) and returns the old value.
func AtomicMin[T AtomicElem](p *T, v T) T {
	return rmw(p, func(old T) T { return min(old, v) })
}

// AtomicMax atomically sets *p to max(*p, v) and returns the old value.
func AtomicMax[T AtomicElem](p *T, v T) T {
	return rmw(p, func(old T) T { return max(old, v) })
}

// AtomicAnd atomically sets *p to *p & v and returns the old value.
func AtomicAnd[T AtomicInt](p *T, v T) T {
	return rmw(p, func(old T) T { return old & v })
}

// AtomicOr atomically sets *p to *p | v and returns the old value.
func AtomicOr[T AtomicInt](p *T, v T) T {
	return rmw(p, func(old T) T { return old | v })
}

// AtomicXor atomically sets *p to *p ^ v and returns the old value.
func AtomicXor[T AtomicInt](p *T, v T) T {
	return rmw(p, func(old T) T { return old ^ v })
}

// AtomicVec is the set of vector types [AtomicAddVec] accepts: arrays of
// 2, 3 or 4 components of an [AtomicElem] type and the types defined over
// them, such as Vec2[float32], Vec3[float64] or a [4]int32. The lengths are
// listed one by one because Go's generics have no length parameter.
type AtomicVec interface {
	~[2]int | ~[2]int32 | ~[2]int64 | ~[2]uint | ~[2]uint32 | ~[2]uint64 | ~[2]float32 | ~[2]float64 |
		~[3]int | ~[3]int32 | ~[3]int64 | ~[3]uint | ~[3]uint32 | ~[3]uint64 | ~[3]float32 | ~[3]float64 |
		~[4]int | ~[4]int32 | ~[4]int64 | ~[4]uint | ~[4]uint32 | ~[4]uint64 | ~[4]float32 | ~[4]float64
}

// AtomicAddVec adds v to *p component by component, each component's add
// atomic on its own: qd.AtomicAddVec(&grid[i][j].V, dv) is
// qd.AtomicAdd(&grid[i][j].V[0], dv[0]); qd.AtomicAdd(&grid[i][j].V[1], dv[1]).
// In a kernel p must be the address of an element of an array parameter,
// or of a field or constant-indexed array inside one (&vs[i], &grid[i][j].V).
//
// It is a function of its own rather than AtomicAdd over a wider constraint
// because it promises less: the vector is not added as a whole, so another
// thread can see one component added and not yet the next. For the same
// reason it has no result: the old components, read at different moments,
// would not be a value *p ever held. Without a result, the GPU can issue
// it as reductions, and on sm_90 as one vector reduction
// (red.global.add.v2.f32, .v4) when the components are float32 at an
// address aligned to 8 (16) bytes.
func AtomicAddVec[V AtomicVec](p *V, v V) {
	t := reflect.TypeFor[V]()
	size := t.Elem().Size()
	base, vs := unsafe.Pointer(p), unsafe.Pointer(&v)
	for k := range t.Len() {
		pk, vk := unsafe.Add(base, uintptr(k)*size), unsafe.Add(vs, uintptr(k)*size)
		switch t.Elem().Kind() {
		case reflect.Int:
			AtomicAdd((*int)(pk), *(*int)(vk))
		case reflect.Int32:
			AtomicAdd((*int32)(pk), *(*int32)(vk))
		case reflect.Int64:
			AtomicAdd((*int64)(pk), *(*int64)(vk))
		case reflect.Uint:
			AtomicAdd((*uint)(pk), *(*uint)(vk))
		case reflect.Uint32:
			AtomicAdd((*uint32)(pk), *(*uint32)(vk))
		case reflect.Uint64:
			AtomicAdd((*uint64)(pk), *(*uint64)(vk))
		case reflect.Float32:
			AtomicAdd((*float32)(pk), *(*float32)(vk))
		case reflect.Float64:
			AtomicAdd((*float64)(pk), *(*float64)(vk))
		}
	}
}

// AtomicExchange atomically stores v in *p and returns the old value.
func AtomicExchange[T AtomicElem](p *T, v T) T {
	return rmw(p, func(T) T { return v })
}

// AtomicCAS atomically stores new in *p if *p holds old, and returns the value
// *p held before: the swap happened exactly when the result equals old.
// Floats compare by their bits, as the hardware does, so a NaN can be matched.
func AtomicCAS[T AtomicElem](p *T, old, new T) T {
	if unsafe.Sizeof(*p) == 4 {
		u := (*uint32)(unsafe.Pointer(p))
		want := *(*uint32)(unsafe.Pointer(&old))
		nb := *(*uint32)(unsafe.Pointer(&new))
		for {
			cur := atomic.LoadUint32(u)
			if cur != want {
				return *(*T)(unsafe.Pointer(&cur))
			}
			if atomic.CompareAndSwapUint32(u, want, nb) {
				return old
			}
		}
	}
	u := (*uint64)(unsafe.Pointer(p))
	want := *(*uint64)(unsafe.Pointer(&old))
	nb := *(*uint64)(unsafe.Pointer(&new))
	for {
		cur := atomic.LoadUint64(u)
		if cur != want {
			return *(*T)(unsafe.Pointer(&cur))
		}
		if atomic.CompareAndSwapUint64(u, want, nb) {
			return old
		}
	}
}

// The math functions below are generic over float32 and float64 and mean what
// the function of the same name in package math means. For float32 they
// compute in float64 and round the result, as the GPU backends' float32
// instructions are expected to match within their documented error.

// Sqrt returns the square root of x.
func Sqrt[T Float](x T) T { return T(math.Sqrt(float64(x))) }

// Exp returns e**x.
func Exp[T Float](x T) T { return T(math.Exp(float64(x))) }

// Exp2 returns 2**x.
func Exp2[T Float](x T) T { return T(math.Exp2(float64(x))) }

// Log returns the natural logarithm of x.
func Log[T Float](x T) T { return T(math.Log(float64(x))) }

// Log2 returns the binary logarithm of x.
func Log2[T Float](x T) T { return T(math.Log2(float64(x))) }

// Log10 returns the decimal logarithm of x.
func Log10[T Float](x T) T { return T(math.Log10(float64(x))) }

// Sin returns the sine of the radian argument x.
func Sin[T Float](x T) T { return T(math.Sin(float64(x))) }

// Cos returns the cosine of the radian argument x.
func Cos[T Float](x T) T { return T(math.Cos(float64(x))) }

// Tan returns the tangent of the radian argument x.
func Tan[T Float](x T) T { return T(math.Tan(float64(x))) }

// Asin returns the arcsine of x, in radians.
func Asin[T Float](x T) T { return T(math.Asin(float64(x))) }

// Acos returns the arccosine of x, in radians.
func Acos[T Float](x T) T { return T(math.Acos(float64(x))) }

// Atan returns the arctangent of x, in radians.
func Atan[T Float](x T) T { return T(math.Atan(float64(x))) }

// Atan2 returns the arctangent of y/x, using the signs of both to pick the
// quadrant.
func Atan2[T Float](y, x T) T { return T(math.Atan2(float64(y), float64(x))) }

// Sinh returns the hyperbolic sine of x.
func Sinh[T Float](x T) T { return T(math.Sinh(float64(x))) }

// Cosh returns the hyperbolic cosine of x.
func Cosh[T Float](x T) T { return T(math.Cosh(float64(x))) }

// Tanh returns the hyperbolic tangent of x.
func Tanh[T Float](x T) T { return T(math.Tanh(float64(x))) }

// Pow returns x**y.
func Pow[T Float](x, y T) T { return T(math.Pow(float64(x), float64(y))) }

// Abs returns the absolute value of x.
func Abs[T Float](x T) T { return T(math.Abs(float64(x))) }

// Floor returns the greatest integer value less than or equal to x.
func Floor[T Float](x T) T { return T(math.Floor(float64(x))) }

// Ceil returns the least integer value greater than or equal to x.
func Ceil[T Float](x T) T { return T(math.Ceil(float64(x))) }

// Trunc returns the integer value of x, rounded toward zero.
func Trunc[T Float](x T) T { return T(math.Trunc(float64(x))) }

// Round returns the nearest integer to x, rounding half away from zero.
func Round[T Float](x T) T { return T(math.Round(float64(x))) }

// Mod returns the floating-point remainder of x/y; its sign is that of x.
func Mod[T Float](x, y T) T { return T(math.Mod(float64(x), float64(y))) }

// Hypot returns Sqrt(x*x + y*y), avoiding needless overflow and underflow.
func Hypot[T Float](x, y T) T { return T(math.Hypot(float64(x), float64(y))) }
