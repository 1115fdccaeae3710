package kernels

import "github.com/quadrants-go/qd"

// Meters is a defined scalar type; its methods are inlined like helpers.
type Meters float32

const g Meters = 9.75

func (m Meters) Feet() float32 { return float32(m) * 3.28084 }

func (m *Meters) Double() { *m *= 2 }

type inner struct {
	A [2]float32
	B int32
}

type outer struct {
	In  inner
	V   qd.Vec2[float32]
	Hit bool
}

func (o *outer) Bump(d float32) {
	o.In.A[1] += d
	o.In.B++
}

func (o outer) Total() float32 { return o.In.A[0] + o.In.A[1] + o.V.Sum() }

func swap(a, b qd.Vec2[float32]) (qd.Vec2[float32], qd.Vec2[float32]) { return b, a }

// literals: keyed, positional, partial and elided composite literals,
// zero values and copies.
//
//qd:kernel
func literals(x []float32) {
	for i := range len(x) {
		o := outer{In: inner{A: [2]float32{x[i]}}, Hit: true}
		p := o
		p.V = qd.Vec2[float32]{1, 2}
		var z outer
		grid := [2]qd.Vec2[float32]{{1, 2}, {3, 4}}
		arr := [4]int32{2: 7, 9}
		x[i] = p.Total() + o.In.A[0] + z.V[1] + grid[1][0] + float32(arr[3])
	}
}

// methods: value and pointer receivers on locals, fields and defined
// scalar types, and chains on temporaries.
//
//qd:kernel
func methods(x []float32) {
	for i := range len(x) {
		var o outer
		o.Bump(x[i])
		o.Bump(1)
		m := g
		m.Double()
		v := qd.Vec2[float32]{x[i], 1}.Add(o.V).Scale(2)
		x[i] = o.Total() + m.Feet() + v.Normalized().Dot(v)
	}
}

// assignments: tuple assignment of values, element op-assignments and
// comparisons.
//
//qd:kernel
func assignments(x []float32, out []bool) {
	for i := range len(x) {
		a, b := qd.Vec2[float32]{x[i], 1}, qd.Vec2[float32]{2, 3}
		a, b = swap(a, b)
		a, b = b, a.Neg()
		m := qd.Mat2[float32]{{1, 2}, {3, 4}}
		m[1][0] *= a[0]
		m[0] = b
		x[i] = m[0][0] + m[1][0]
		out[i] = a == b || m != qd.Mat2[float32]{}
	}
}

// dynamic: indices that stay dynamic read through selects and write under
// conditions; loops over constants that index local arrays are unrolled.
//
//qd:kernel
func dynamic(x []float32, k []int32) {
	for i := range len(x) {
		var a [3]float32
		a[k[i]] = x[i]
		a[(k[i]+1)%3] += 1
		s := float32(0)
		for j := range 3 {
			s += a[j] * float32(j+1)
		}
		for j := 2; j >= 0; j-- {
			s -= a[j]
		}
		for j, v := range a {
			s += v * float32(j)
		}
		x[i] = s + a[k[i]]
	}
}
