package csrc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sqrtHarness runs the AMD prelude's sqrt on the host, with v_rsq_f64
// modelled as 1/sqrt(x) cut to 20 significant bits (the hardware's
// estimate is better, about 2^-23), and checks every result against the
// host's correctly rounded sqrt: random bit patterns of every magnitude
// (subnormals included), the neighbourhood of exact squares and of the
// squares of midpoints between doubles (the hard cases of rounding), and
// the special values; then floats the same way. It prints the number of
// mismatches and the first few.
const sqrtHarness = `#include <stdio.h>
#include <string.h>
#include <math.h>
typedef unsigned long long qd_u64;
typedef unsigned int qd_u32;
#define QD_DEV static inline
static double coarse_rsq(double x) {
	double r = 1.0 / sqrt(x);
	qd_u64 u; memcpy(&u, &r, 8);
	if (r == r && r != 0 && r != INFINITY) u &= ~((1ULL << 32) - 1);
	memcpy(&r, &u, 8);
	return r;
}
#define __builtin_amdgcn_rsq(x) coarse_rsq(x)
SQRT
static qd_u64 state = 88172645463325252ULL;
static qd_u64 next(void) { state ^= state << 13; state ^= state >> 7; state ^= state << 17; return state; }
static double d(qd_u64 u) { double x; memcpy(&x, &u, 8); return x; }
static qd_u64 u(double x) { qd_u64 v; memcpy(&v, &x, 8); return v; }
static long bad = 0, n = 0;
static void check(double x) {
	double got = qd_sqrt_f64(x), want = sqrt(x);
	n++;
	if (u(got) != u(want) && !(got != got && want != want)) {
		if (bad++ < 5) printf("sqrt(%a) = %a, want %a\n", x, got, want);
	}
}
static void checkf(float x) {
	float got = qd_sqrt_f32(x), want = sqrtf(x);
	n++;
	if (memcmp(&got, &want, 4) != 0 && !(got != got && want != want)) {
		if (bad++ < 5) printf("sqrtf(%a) = %a, want %a\n", x, got, want);
	}
}
int main(void) {
	double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -1.0, 1.0, 4.0, 0x1p-1074, 0x1p-1022, 0x1p-767, 0x1.fffffffffffffp-768, 0x1.fffffffffffffp+1023, 2.0};
	for (int i = 0; i < (int)(sizeof special / sizeof special[0]); i++) { check(special[i]); checkf((float)special[i]); }
	for (int i = 0; i < ROUNDS; i++) {
		check(d(next() & 0x7FFFFFFFFFFFFFFFULL));
		double s = d((next() >> 2) + 0x1000000000000000ULL); /* 2^-767 .. 2^256 */
		double mid = s * (1 + 0x1p-53);                      /* a double near a midpoint's root */
		for (int k = -2; k <= 2; k++) {
			check(d(u(s * s) + k));
			check(d(u(mid * mid) + k));
		}
		qd_u32 f = (qd_u32)next() & 0x7FFFFFFFu; float xf; memcpy(&xf, &f, 4);
		checkf(xf);
	}
	printf("%ld %ld\n", bad, n);
	return 0;
}
`

func TestAMDSqrtIsCorrectlyRounded(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skipf("no host C compiler (cc): the AMD sqrt expansion is NOT checked: %v", err)
	}
	rounds := "200000"
	if testing.Short() {
		rounds = "20000"
	}
	src := strings.Replace(sqrtHarness, "SQRT", strings.ReplaceAll(amdSqrt, "bool", "int"), 1)
	src = strings.ReplaceAll(src, "__builtin_inf()", "INFINITY")
	src = strings.Replace(src, "ROUNDS", rounds, 1)
	dir := t.TempDir()
	file, exe := filepath.Join(dir, "sqrt.c"), filepath.Join(dir, "sqrt")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-O2", "-ffp-contract=off", "-fno-fast-math", "-o", exe, file, "-lm").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if counts := strings.Fields(lines[len(lines)-1]); len(counts) != 2 || counts[0] != "0" {
		t.Fatalf("the AMD sqrt expansion is not correctly rounded:\n%s", out)
	} else {
		t.Logf("%s inputs, all correctly rounded", counts[1])
	}
}
