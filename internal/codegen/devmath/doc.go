// Package devmath is the device math library of qd's GPU code generators:
// the transcendental intrinsics of package ir (exp, log, sin, pow, ...),
// with the meaning of Go's math functions of the same name, special cases
// included, each described once as a list of PTX-like instructions and
// rendered for every generator that needs it: as PTX device functions for
// package codegen/ptx (Func) and as C functions for package codegen/csrc
// (CFunc, c.go). A further generator (SPIR-V for Vulkan) adds a renderer of
// the same lists, not a second library. It depends on package ir only.
//
// PTX API: Func(fn, t) returns the name (Name(fn, t), e.g. "__qd_sin_f64")
// and the text of
//
//	.func (.reg .f64 %ret) __qd_sin_f64(.reg .f64 %a)
//
// (two parameters %a, %b for Atan2, Pow, Mod and Hypot). Each definition
// uses only plain PTX instructions — no .approx, no calls, no module-level
// tables or other definitions — so no helper is ever shared or duplicated:
// emit each (fn, t) once per module. Sqrt, Abs, Floor, Ceil, Trunc and Round
// are single exact instructions that the code generator writes inline; Func
// returns an error for them.
//
// # One description, two executions
//
// Every function is built once, as a list of PTX instructions, by the Go
// code in exp.go, log.go, trig.go, atan.go and mod.go (the builder of
// dsl.go). render prints the list as PTX, and c.go as C, one statement per
// instruction; the tests run the very same list through an interpreter
// (interp_test.go) that performs one IEEE operation per instruction
// (math.FMA for fma.rn, PTX's rules for cvt, shifts, setp's
// ordered/unordered compares), and check the C rendering against the
// interpreter bit for bit on the host (c_test.go). The measured accuracy is
// therefore the accuracy of the PTX and of the C. All floating add/sub/mul
// carry .rn, which forbids ptxas from contracting them into fmas behind
// our back.
//
// # Algorithms (details and error bounds next to each)
//
//   - exp, exp2, sinh, cosh, tanh: Cody–Waite reduction by ln 2 (42-bit
//     high part, exact k·hi), Taylor expm1 of degree 13 on |t| ≤ ln2/2,
//     scaling by 2^k in two exact steps (one rounding on underflow).
//     tanh = E/(E+2), E = expm1(2|x|), with an fma-corrected quotient.
//   - log, log2, log10: fdlibm's bit split to m in [√½, √2), then
//     log m = 2 atanh(f/(2+f)) evaluated entirely in double-double
//     (≈2^-64 relative); the base change multiplies by a double-double
//     constant and adds the exponent exactly.
//   - pow: exp of y·log|x| with both log and product in double-double, so
//     the exp argument is right to ~2^-62 absolute; Go's full special-case
//     table, including Pow(x, ±½) = Sqrt(x), 1/Sqrt(x) as Go does.
//   - sin, cos, tan: three-part Cody–Waite (π/2 to 160 bits, double-double
//     remainder) for |x| < 2^27; Payne–Hanek with 64-bit integer products
//     against a 1280-bit table of 2/π (immediates picked by selp) beyond.
//     Taylor kernels in double-double; tan = sin/cos with fma correction.
//   - atan, atan2, asin, acos: reduction to y in [0, 1], then
//     atan y = atan(j/8) + atan(v) with |v| ≤ 1/16 (table of 9
//     double-doubles) and a degree-15 odd Taylor polynomial; asin/acos via
//     atan(a/√(1−a²)) or atan(√(1−a²)/a), whichever argument is ≤ 1, with
//     √(1−a²) in double-double, so acos near ±1 does not cancel.
//   - mod: exact, by integer long division of the mantissas with rem.u64
//     (at most 187 iterations of 11 bits).
//   - hypot: scaling by a power of two, a²+b² from exact fma products,
//     sqrt.rn plus one Newton correction.
//
// Constants (π to 1600 bits, 2/π, ln 2, ln 10, atan(j/8), 1/n!) are
// computed with math/big at first use; nothing is copied from other code.
//
// f32 functions convert the arguments to f64, run the f64 algorithm and
// round once (cvt.rn.f32.f64): the result is within 0.5 ulp + 2^-28 ulp of
// the exact value (measured max 0.500). That is fast on data-centre GPUs
// (H100/H200: f64 at half the f32 rate) but slow on consumer parts with
// 1/64-rate f64; native f32 kernels are future work.
//
// # Tests
//
// go test runs, on the model: random inputs per range against Go's math and
// against a math/big reference (TestAccuracy, table in the log;
// QD_DEVMATH_SAMPLES=n for more samples, QD_DEVMATH_TABLE=file to write the
// markdown table), edge cases against Go's special values (TestEdgeCases),
// and, if ptxas is found ($QD_PTXAS, PATH, ~/.cache/qd-ptxas/usr/bin), the
// assembly of every function for sm_80 and sm_90 (TestPtxas).
package devmath
