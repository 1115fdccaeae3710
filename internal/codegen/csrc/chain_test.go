package csrc

import (
	"bytes"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// chainOffset is the second value of ifChain's two-value cases.
const chainOffset = 1 << 20

// ifChain is what the front end makes of a switch of n cases on v := x[i]
// (case c: y[i] = 7c+1; default: y[i] = -1): an if/else chain n deep. Its
// conditions take three forms, so that the flat chain meets each: v == c;
// v == keys[c], a load, which takes statements before its if; and, for c
// a multiple of 5, v == c || v == c+chainOffset, whose || is an if of its
// own. Case 7's arm holds a chain of its own, on i.
func ifChain(n int) *ir.Kernel {
	b := ir.NewBuilder("chain")
	x := b.Array("x", ir.I32, 1)
	y := b.Array("y", ir.I32, 1)
	keys := b.Array("keys", ir.I32, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		v := b.Decl("v", ir.Ld(x, ir.Ref(i)))
		is := func(e ir.Expr) ir.Expr { return ir.Op(ir.Eq, ir.Ref(v), e) }
		var arm func(c int)
		arm = func(c int) {
			if c == n {
				b.Store(y, ir.I32c(-1), ir.Ref(i))
				return
			}
			cond := is(ir.I32c(int32(c)))
			switch {
			case c%5 == 0:
				cond = ir.Op(ir.LOr, cond, is(ir.I32c(int32(c+chainOffset))))
			case c%2 == 1:
				cond = is(ir.Ld(keys, ir.I64c(int64(c))))
			}
			b.If(cond, func() {
				if c != 7 {
					b.Store(y, ir.I32c(int32(7*c+1)), ir.Ref(i))
					return
				}
				rem := func(m int64) ir.Expr { return ir.Op(ir.Eq, ir.Op(ir.Rem, ir.Ref(i), ir.I64c(m)), ir.I64c(0)) }
				b.If(rem(2), func() { b.Store(y, ir.I32c(70), ir.Ref(i)) }, func() {
					b.If(rem(3), func() { b.Store(y, ir.I32c(71), ir.Ref(i)) }, func() { b.Store(y, ir.I32c(72), ir.Ref(i)) })
				})
			}, func() { arm(c + 1) })
		}
		arm(0)
	})
	return b.Kernel()
}

// chainWant is what ifChain(n) stores for element i holding v.
func chainWant(n, i int, v int32) int32 {
	if v >= chainOffset && (v-chainOffset)%5 == 0 {
		v -= chainOffset
	}
	switch {
	case v < 0 || int(v) >= n:
		return -1
	case v != 7:
		return 7*v + 1
	case i%2 == 0:
		return 70
	case i%3 == 0:
		return 71
	}
	return 72
}

// chainSource writes ifChain(n) for target arch and returns the whole
// source, the entry alone and the entry's slots.
func chainSource(t *testing.T, n int, arch string) (src, entry string, slots []kabi.Slot) {
	t.Helper()
	plan, err := lower.Lower(ifChain(n))
	if err != nil {
		t.Fatal(err)
	}
	layout, err := kabi.Layout(plan)
	if err != nil {
		t.Fatal(err)
	}
	u, err := NewUnit(mustTarget(t, arch))
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Add(plan, layout); err != nil {
		t.Fatal(err)
	}
	if len(u.entries) != 1 {
		t.Fatalf("%d entries, want 1", len(u.entries))
	}
	return u.Source(), u.entries[0], layout.Tasks[0].Slots
}

// braceDepth is the deepest nesting of braces in src.
func braceDepth(src string) int {
	depth, deepest := 0, 0
	for _, c := range src {
		switch c {
		case '{':
			depth++
			deepest = max(deepest, depth)
		case '}':
			depth--
		}
	}
	return deepest
}

// An if/else chain is written on one level, whatever its length: the
// entry's size grows linearly with the cases and its braces do not nest
// deeper. Nested, 2,000 cases made 10 MB of C (quadratic), and clang
// refuses braces nested past 256.
func TestIfChainIsFlat(t *testing.T) {
	_, small, _ := chainSource(t, 10, "gfx90a")
	_, big, _ := chainSource(t, 2000, "gfx90a")
	if d, want := braceDepth(big), braceDepth(small); d != want {
		t.Errorf("braces nest %d deep for 2,000 cases, %d for 10: the chain is not flat", d, want)
	}
	// About 80 bytes a case, measured; the bound leaves room for changes
	// in what a case is written as, not for growth with the depth.
	if perCase := len(big) / 2000; perCase > 250 {
		t.Errorf("%d bytes of C a case for 2,000 cases, want at most 250", perCase)
	}
	for _, want := range []string{"goto L1;\n", "\nL1:;\n"} {
		if !strings.Contains(big, want) {
			t.Errorf("the chain lacks %q", want)
		}
	}
}

// hostKernel stands in for the vendor primitives an entry uses, so that
// the entry compiles and runs on the host as one thread of a one-block
// grid.
const hostKernel = `typedef unsigned char qd_u8;
#define QD_KERNEL extern "C"
#define QD_BOUNDS(block)
static qd_u32 qd_tid(void) { return 0; }
static qd_u32 qd_bid(void) { return 0; }
static qd_u32 qd_bdim(void) { return 1; }
static qd_u32 qd_gdim(void) { return 1; }
`

// The flat chain means what the nested one does: ifChain's entry,
// compiled for the host, gives each element what Go's switch gives, for
// every case value, both values of the two-value cases, values that no
// case matches, and case 7's inner chain.
func TestIfChainOnHost(t *testing.T) {
	cxx, err := exec.LookPath("c++")
	if err != nil {
		t.Skipf("no host C++ compiler (c++): the if/else chain is NOT run: %v", err)
	}
	const n = 300
	_, entry, slots := chainSource(t, n, "gfx90a")
	var x []int32
	for v := int32(-2); v <= n+1; v++ {
		x = append(x, v, v+chainOffset)
	}
	for i := range 6 {
		x = append(x, 7, int32(i))
	}
	var src strings.Builder
	src.WriteString("#include <stdio.h>\n" + hostVendor + hostKernel + commonHelpers() + entry)
	fmt.Fprintf(&src, "int main(void) {\n\tstatic qd_i32 x[%d], y[%d], keys[%d];\n", len(x), len(x), n)
	fmt.Fprintf(&src, "\tfor (int i = 0; i < %d; i++) keys[i] = i;\n", n)
	fmt.Fprintf(&src, "\tfor (int i = 0; i < %d; i++) if (scanf(\"%%d\", &x[i]) != 1) return 1;\n", len(x))
	arrays := []string{"x", "y", "keys"}
	lens := []int{len(x), len(x), n}
	var args []string
	for _, s := range slots {
		switch s.Kind {
		case kabi.ArraySlot:
			args = append(args, arrays[s.Param])
		case kabi.DimSlot:
			args = append(args, strconv.Itoa(lens[s.Param]))
		default:
			t.Fatalf("unexpected slot %v", s.Kind)
		}
	}
	fmt.Fprintf(&src, "\tchain_t0(%s);\n", strings.Join(args, ", "))
	fmt.Fprintf(&src, "\tfor (int i = 0; i < %d; i++) printf(\"%%d\\n\", y[i]);\n\treturn 0;\n}\n", len(x))

	var stdin bytes.Buffer
	for _, v := range x {
		fmt.Fprintln(&stdin, v)
	}
	got := runOnHost(t, cxx, "chain.cc", src.String(), &stdin, "-std=c++17", "-O1")
	if len(got) != len(x) {
		t.Fatalf("the program printed %d results for %d elements", len(got), len(x))
	}
	bad := 0
	for i, v := range x {
		if want := strconv.Itoa(int(chainWant(n, i, v))); got[i] != want {
			if bad++; bad <= 10 {
				t.Errorf("element %d holding %d: y = %s, Go's switch gives %s", i, v, got[i], want)
			}
		}
	}
}
