package frontend

import (
	"fmt"
	"go/types"
	"runtime"
	"strings"
	"testing"
)

// TestLibraryCompiles calls every exported function and method of qd's
// value library, for float32 and float64, in a kernel of its own, and
// checks that each translates (verifies and lowers), except those that need
// bit casts, which must be refused saying so. A function added to the
// library is checked here without a test of its own.
func TestLibraryCompiles(t *testing.T) {
	std := loadStd()
	qual := func(p *types.Package) string { return p.Name() }
	var calls []string // "name|declarations|call"
	for _, name := range std.qd.Scope().Names() {
		obj := std.qd.Scope().Lookup(name)
		if !obj.Exported() || !std.isLibPos(obj.Pos()) || std.decls == nil {
			continue
		}
		if _, isAPI := std.funcs[asFunc(obj)]; isAPI {
			continue
		}
		for _, ft := range []string{"float32", "float64"} {
			switch o := obj.(type) {
			case *types.Func:
				if std.decls[o] == nil {
					continue
				}
				sig := o.Type().(*types.Signature)
				inst := ""
				if sig.TypeParams().Len() > 0 {
					inst = "[" + ft + "]"
				}
				decls, args := libArgs(sig, ft, qual)
				calls = append(calls, fmt.Sprintf("%s|%s|qd.%s%s(%s)", name, decls, name, inst, args))
			case *types.TypeName:
				n, ok := o.Type().(*types.Named)
				if !ok {
					continue
				}
				recv := "qd." + name
				if n.TypeParams().Len() > 0 {
					recv += "[" + ft + "]"
				}
				for m := range n.Methods() {
					if _, isAPI := std.blockMethods[m]; !m.Exported() || isAPI {
						continue // qd.Block's methods are the kernel API's (blocks.go)
					}
					decls, args := libArgs(m.Type().(*types.Signature), ft, qual)
					calls = append(calls, fmt.Sprintf("%s.%s|var r %s\n%s|r.%s(%s)", name, m.Name(), recv, decls, m.Name(), args))
				}
			}
		}
	}
	if len(calls) < 100 {
		t.Fatalf("found %d calls of the library; the scan is broken", len(calls))
	}
	for i, c := range calls {
		parts := strings.SplitN(c, "|", 3)
		decls, call := parts[1], parts[2]
		// The call is a statement: Go lets a call's results go unused.
		src := fmt.Sprintf("package k\n\nimport \"github.com/quadrants-go/qd\"\n\n//qd:kernel\nfunc k%d(x []float32) {\n\tfor range len(x) {\n%s\n%s\n\t}\n}\n", i, decls, call)
		ks, err := Parse("lib.go", []byte(src))
		if err != nil {
			t.Errorf("%s: %v\n%s", call, err, src)
			continue
		}
		for _, k := range ks {
			checkKernel(t, k)
		}
	}
	t.Logf("%d calls of the library translated", len(calls))
}

func asFunc(obj types.Object) *types.Func {
	f, _ := obj.(*types.Func)
	return f
}

// libArgs declares one local per parameter of sig, with the type
// parameter T instantiated to ft, and returns the declarations and the
// argument list.
func libArgs(sig *types.Signature, ft string, qual types.Qualifier) (string, string) {
	var decls, args []string
	for i := range sig.Params().Len() {
		ts := types.TypeString(sig.Params().At(i).Type(), qual)
		ts = strings.ReplaceAll(ts, "[T]", "["+ft+"]")
		if ts == "T" {
			ts = ft
		}
		decls = append(decls, fmt.Sprintf("var a%d %s", i, ts))
		args = append(args, fmt.Sprintf("a%d", i))
	}
	return strings.Join(decls, "\n"), strings.Join(args, ", ")
}

// svdCalls is a kernel calling qd.SVD3 n times, each on the result of the
// last.
func svdCalls(n int) []byte {
	var b strings.Builder
	b.WriteString("package k\n\nimport \"github.com/quadrants-go/qd\"\n\n//qd:kernel\nfunc k(x []float32) {\n\tfor i := range len(x) {\n")
	b.WriteString("\t\tm := qd.Mat3[float32]{{x[i], 1, 0}, {0, 2, 1}, {1, 0, 3}}\n")
	for range n {
		b.WriteString("\t\t{\n\t\t\tu, s, v := qd.SVD3(m)\n\t\t\tm = u.Mul(qd.Diag3(s)).Mul(v.T())\n\t\t}\n")
	}
	b.WriteString("\t\tx[i] = m.Det()\n\t}\n}\n")
	return []byte(b.String())
}

// TestLibraryInliningLinear checks, without a clock, that inlining the
// library grows linearly with the calls: the bytes allocated for 8× the
// SVD3 calls must stay within 12× (each call inlines some 60 library
// functions; a translation that re-walked what it had translated would
// grow quadratically).
func TestLibraryInliningLinear(t *testing.T) {
	allocated := func(n int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := Parse("k.go", svdCalls(n)); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	allocated(1)
	small, large := allocated(4), allocated(32)
	if large > 12*small {
		t.Errorf("32 SVD3 calls allocated %d bytes, %.1f× the %d of 4: not linear", large, float64(large)/float64(small), small)
	}
}
