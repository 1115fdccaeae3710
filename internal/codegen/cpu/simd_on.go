//go:build amd64 && !purego && !race

package cpu

import "github.com/quadrants-go/qd/internal/ir"

var (
	simd32 = &floatLoops[float32]{
		vv:     map[ir.BinOp]func(d, a, b []float32){ir.Add: addVV32, ir.Sub: subVV32, ir.Mul: mulVV32, ir.Div: divVV32},
		vs:     map[ir.BinOp]func(d, a []float32, s float32){ir.Add: addVS32, ir.Sub: subVS32, ir.Mul: mulVS32, ir.Div: divVS32},
		sv:     map[ir.BinOp]func(d []float32, s float32, b []float32){ir.Sub: subSV32, ir.Div: divSV32},
		mulAdd: mulAddVSV32,
		cmpVV: map[ir.BinOp]func(d []bool, a, b []float32){ir.Eq: eqVV32, ir.Ne: neVV32, ir.Lt: ltVV32,
			ir.Le: leVV32, ir.Gt: gtVV32, ir.Ge: geVV32},
		cmpVS: map[ir.BinOp]func(d []bool, a []float32, s float32){ir.Eq: eqVS32, ir.Ne: neVS32, ir.Lt: ltVS32,
			ir.Le: leVS32, ir.Gt: gtVS32, ir.Ge: geVS32},
	}
	simd64 = &floatLoops[float64]{
		vv:     map[ir.BinOp]func(d, a, b []float64){ir.Add: addVV64, ir.Sub: subVV64, ir.Mul: mulVV64, ir.Div: divVV64},
		vs:     map[ir.BinOp]func(d, a []float64, s float64){ir.Add: addVS64, ir.Sub: subVS64, ir.Mul: mulVS64, ir.Div: divVS64},
		sv:     map[ir.BinOp]func(d []float64, s float64, b []float64){ir.Sub: subSV64, ir.Div: divSV64},
		mulAdd: mulAddVSV64,
		cmpVV: map[ir.BinOp]func(d []bool, a, b []float64){ir.Eq: eqVV64, ir.Ne: neVV64, ir.Lt: ltVV64,
			ir.Le: leVV64, ir.Gt: gtVV64, ir.Ge: geVV64},
		cmpVS: map[ir.BinOp]func(d []bool, a []float64, s float64){ir.Eq: eqVS64, ir.Ne: neVS64, ir.Lt: ltVS64,
			ir.Le: leVS64, ir.Gt: gtVS64, ir.Ge: geVS64},
	}
)

var (
	simdSel32 = selVV32
	simdSel64 = selVV64
)
