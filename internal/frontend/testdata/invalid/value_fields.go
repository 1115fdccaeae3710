package kernels

import "github.com/quadrants-go/qd"

var _ = qd.Sqrt[float32]

type withSlice struct{ S []float32 }
type withString struct{ Name string }
type withPointer struct{ Next *withPointer }
type withMap struct{ M map[int]int }
type withIface struct{ V any }
type withFunc struct{ F func() }
type withChan struct{ C chan int }
type withComplex struct{ Z complex64 }
type nested struct{ In withString }

//qd:kernel
func k(x []float32) {
	var a /* ERROR "variable a has type withSlice, whose field S has type []float32: slices are not supported inside values: use a fixed-size array [N]T, or an array parameter" */ withSlice
	var b /* ERROR "variable b has type withString, whose field Name has type string: strings are not supported in kernels" */ withString
	var c /* ERROR "variable c has type withPointer, whose field Next has type *withPointer: pointers are not supported in kernels: store an index into an array parameter instead" */ withPointer
	var d /* ERROR "whose field M has type map[int]int: maps are not supported in kernels" */ withMap
	var e /* ERROR "whose field V has type any: interfaces are not supported in kernels: use a concrete type" */ withIface
	var f /* ERROR "whose field F has type func(): function values are not supported in kernels" */ withFunc
	var g /* ERROR "whose field C has type chan int: channels are not supported in kernels" */ withChan
	var h /* ERROR "whose field Z has type complex64: complex numbers are not supported in kernels" */ withComplex
	var n /* ERROR "variable n has type nested, whose field In has type withString, whose field Name has type string" */ nested
	_, _, _, _, _, _, _, _, _ = a, b, c, d, e, f, g, h, n
}
