package qd

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// Messages in the user's Go terms: each error a user can meet names things
// as the user wrote them, never in qd's internal notation.

// scalarSrc has a kernel with one scalar parameter of every kind.
const scalarSrc = `package k

//qd:kernel
func scalars(x []float32, f32 float32, f64 float64, i int, i32 int32, i64 int64, u32 uint32, u uint, b bool) {
	for j := range x {
		x[j] = f32 + float32(f64) + float32(i) + float32(i32) + float32(i64) + float32(u32) + float32(u)
		if b {
			x[j] = 0
		}
	}
}
`

// TestScalarArgumentRule: a typed scalar argument must have the parameter's
// exact Go type; an untyped constant (which Go passes as an int or a
// float64) is converted as Go converts it at a call of the native function,
// so it must fit. The rule is the same for every parameter type, and the
// error says it.
func TestScalarArgumentRule(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		m := compileModule(t, p, scalarSrc)
		k := kernelOf(t, m, "scalars")
		x := make([]float32, 1)
		good := []any{x, float32(1), float64(2), int(3), int32(4), int64(5), uint32(6), uint(7), false}
		check(t, k.Launch(good...))
		if x[0] != 28 {
			t.Fatalf("x = %v, want 28", x)
		}
		cases := []struct {
			name  string
			param int
			arg   any
			want  string // "" when accepted
		}{
			{"2 for float32", 1, 2, ""},
			{"0.5 for float32", 1, 0.5, ""},
			{"0.1 for float32", 1, 0.1, ""},
			{"2 for float64", 2, 2, ""},
			{"2.0 for int", 3, 2.0, ""},
			{"2 for int32", 4, 2, ""},
			{"2 for uint32", 6, 2, ""},
			{"2 for uint", 7, 2, ""},
			{"int32 for float32", 1, int32(2), "want float32, got int32"},
			{"float64 var for float32 overflows", 1, 1e300, "overflows float32"},
			{"1e-4 for float32", 1, 1e-4, ""},
			{"float64 1/3 for float32", 1, 1.0 / 3, "a float64 value is not a float32"},
			{"math.Pi for float32", 1, math.Pi, "needs float32(...)"},
			{"int32 for int", 3, int32(2), "want int, got int32"},
			{"int64 for int", 3, int64(2), "want int, got int64"},
			{"int for int64", 5, 2, ""},
			{"int32 for int64", 5, int32(2), "want int64, got int32"},
			{"int64 for int32", 4, int64(2), "want int32, got int64"},
			{"too big for int32", 4, 1 << 40, "overflows int32"},
			{"negative for uint32", 6, -1, "overflows uint32"},
			{"2.5 for int", 3, 2.5, "truncated"},
			{"uint64 for uint", 7, uint64(2), "want uint, got uint64"},
			{"1 for bool", 8, 1, "want bool, got int"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				args := append([]any(nil), good...)
				args[c.param] = c.arg
				err := k.Launch(args...)
				if c.want == "" {
					check(t, err)
					return
				}
				var ae *ArgumentError
				if !errors.As(err, &ae) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "untyped constant") {
					t.Fatalf("got %v, want an *ArgumentError saying %q and the rule", err, c.want)
				}
			})
		}
	})
}

// TestMessagesInGoTerms: the argument count error spells the signature in
// Go; a bad arch, StopTrace on a closed Program, and Compile of a source
// without kernels say what is wrong once, in Go terms.
func TestMessagesInGoTerms(t *testing.T) {
	_, err := Init(WithArch(Arch(99)))
	wantErr(t, err, ErrInvalidArgument)
	if strings.Count(err.Error(), "qd:") != 1 || !strings.Contains(err.Error(), "WithArch") {
		t.Errorf("Init(WithArch(99)) = %q: want one qd: prefix, naming WithArch", err)
	}
	p := initProgram(t, WithArch(CPU))
	m := compileModule(t, p, scalarSrc)
	k := kernelOf(t, m, "scalars")
	err = k.Launch(make([]float32, 1))
	want := "(x []float32, f32 float32, f64 float64, i int, i32 int32, i64 int64, u32 uint32, u uint, b bool)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("count error %q: want the signature %s", err, want)
	}
	_, err = Compile(p, "package k\n\nfunc helper() {}\n", WithFilename("helpers.go"))
	wantErr(t, err, ErrInvalidArgument)
	if !strings.Contains(err.Error(), "helpers.go") || !strings.Contains(err.Error(), "//qd:kernel") {
		t.Errorf("Compile without kernels = %q: want the file and the marker named", err)
	}
	check(t, p.Close())
	wantErr(t, p.StopTrace(nil), ErrClosed)
}
