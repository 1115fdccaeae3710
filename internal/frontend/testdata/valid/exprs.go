package kernels

import (
	"math"

	"github.com/quadrants-go/qd"
)

const (
	N       = 16
	Mask    = 0xff
	Half    = 0.5
	Big     = math.MaxInt32
	Enabled = true
)

type Real = float32

//qd:kernel
func exprs(b bool, i32 int32, i64 int64, u uint, u32 uint32, u64 uint64, f float32, d float64, out []float64, bits []uint32) {
	for i := range N {
		var acc float64
		x := int64(i) << 2 >> 1
		y := x &^ Mask
		z := ^y | x&3 ^ 5
		w := -x + +x
		acc += float64(x+y+z+w) * Half
		if !b && Enabled || i32 > Big/2 {
			acc -= 1
		}
		acc += float64(u%3) + float64(u32/2) + float64(u64*2) + float64(i64-1)
		var r Real = Real(f) * 2
		acc += float64(r) + d
		acc += math.Max(acc, 1) + math.Min(acc, -1)
		if math.IsNaN(acc) || math.IsInf(acc, 0) || math.IsInf(acc, -1) {
			acc = math.NaN()
		}
		acc += float64(qd.Exp(float32(1))) + qd.Pow(d, 2) + math.Atan2(1, d) + math.Floor(d) + math.Mod(d, 3)
		s := uint32(i) << u32
		bits[i] = s >> 1
		bits[i] |= 1
		bits[i] <<= 2
		bits[i]--
		out[i] = acc
		q := qd.AtomicMax(&bits[0], s)
		qd.AtomicXor(&bits[1], q)
		qd.AtomicExchange(&bits[2], 7)
		_ = qd.AtomicMin(&bits[3], 1)
		qd.AtomicSub(&out[4], 1.5)
		qd.AtomicOr(&bits[5], 2)
		qd.AtomicAnd(&bits[6], 2)
	}
}
