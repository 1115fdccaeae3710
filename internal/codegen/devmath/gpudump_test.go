package devmath

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// TestGPUDump (QD_DEVMATH_DUMP=dir) writes, for a run on a real GPU, a PTX
// module with one element-wise kernel per function, and per function the
// inputs and the model's outputs; gpu_check.py (written alongside) runs the
// kernels through the CUDA driver and compares bit for bit (NaNs as a class).
func TestGPUDump(t *testing.T) {
	dir := os.Getenv("QD_DEVMATH_DUMP")
	if dir == "" {
		t.Skip("set QD_DEVMATH_DUMP=dir to write GPU check data")
	}
	const n = 1 << 16
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var mod strings.Builder
	mod.WriteString(".version 7.8\n.target sm_80\n.address_size 64\n\n")
	var list []string
	for _, sp := range specs {
		for _, ty := range []ir.Type{ir.F64, ir.F32} {
			f32 := ty == ir.F32
			name, def, err := Func(sp.fn, ty)
			if err != nil {
				t.Fatal(err)
			}
			mod.WriteString(def + "\n")
			mod.WriteString(entry(name, ty, sp.fn.Arity()))
			p, _ := build(sp.fn, ty)
			cp := compile(p)
			var m machine
			r := rand.New(rand.NewPCG(7, uint64(sp.fn)))
			ranges := sp.r64
			if f32 {
				ranges = sp.r32
			}
			edges := edgeValues(f32)
			var in, want []byte
			put := func(buf []byte, u uint64) []byte {
				if f32 {
					return binary.LittleEndian.AppendUint32(buf, uint32(u))
				}
				return binary.LittleEndian.AppendUint64(buf, u)
			}
			for i := 0; i < n; i++ {
				var x, y float64
				if i < len(edges)*len(edges) {
					x, y = edges[i%len(edges)], edges[i/len(edges)]
				} else {
					rg := ranges[r.IntN(len(ranges))]
					x = rg[0].g(r)
					if rg[1].g != nil {
						y = rg[1].g(r)
					}
				}
				var ux, uy uint64
				if f32 {
					ux, uy = uint64(math.Float32bits(float32(x))), uint64(math.Float32bits(float32(y)))
				} else {
					ux, uy = fb(x), fb(y)
				}
				in = put(put(in, ux), uy)
				want = put(want, cp.run(&m, ux, uy))
			}
			for suffix, data := range map[string][]byte{".in": in, ".want": want} {
				if err := os.WriteFile(filepath.Join(dir, name+suffix), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			list = append(list, fmt.Sprintf("%s %d", name, map[bool]int{true: 4, false: 8}[f32]))
		}
	}
	files := map[string]string{"module.ptx": mod.String(), "list.txt": strings.Join(list, "\n") + "\n", "gpu_check.py": gpuCheckPy}
	for f, s := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// entry is an element-wise kernel: out[i] = NAME(in[2i], in[2i+1]).
func entry(name string, ty ir.Type, arity int) string {
	t, sz := "f64", 8
	if ty == ir.F32 {
		t, sz = "f32", 4
	}
	args := "%x0"
	if arity == 2 {
		args = "%x0, %x1"
	}
	return fmt.Sprintf(`.visible .entry k%s(.param .u64 pin, .param .u64 pout, .param .u32 n)
{
	.reg .pred %%pp;
	.reg .b32 %%i<4>;
	.reg .b64 %%q<8>;
	.reg .%s %%x<3>;
	ld.param.u64 %%q0, [pin];
	ld.param.u64 %%q1, [pout];
	ld.param.u32 %%i0, [n];
	mov.u32 %%i1, %%ctaid.x;
	mov.u32 %%i2, %%ntid.x;
	mov.u32 %%i3, %%tid.x;
	mad.lo.s32 %%i1, %%i1, %%i2, %%i3;
	setp.ge.u32 %%pp, %%i1, %%i0;
	@%%pp bra DONE;
	cvta.to.global.u64 %%q0, %%q0;
	cvta.to.global.u64 %%q1, %%q1;
	mul.wide.u32 %%q2, %%i1, %d;
	add.s64 %%q3, %%q0, %%q2;
	add.s64 %%q3, %%q3, %%q2;
	ld.global.%s %%x0, [%%q3];
	ld.global.%s %%x1, [%%q3+%d];
	call (%%x2), %s, (%s);
	add.s64 %%q4, %%q1, %%q2;
	st.global.%s [%%q4], %%x2;
DONE:
	ret;
}

`, name, t, sz, t, t, sz, name, args, t)
}

const gpuCheckPy = `import ctypes, sys, os, array
d = os.path.dirname(os.path.abspath(__file__))
cu = ctypes.CDLL("libcuda.so.1")
def ck(r, what):
    if r != 0:
        raise SystemExit("%s failed: %d" % (what, r))
ck(cu.cuInit(0), "cuInit")
dev = ctypes.c_int(); ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p(); ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "retain"); ck(cu.cuCtxSetCurrent(ctx), "setcurrent")
src = open(os.path.join(d, "module.ptx"), "rb").read() + b"\0"
logbuf = ctypes.create_string_buffer(1 << 16)
opts = (ctypes.c_int * 2)(5, 6)
vals = (ctypes.c_void_p * 2)(ctypes.cast(logbuf, ctypes.c_void_p), ctypes.c_void_p(1 << 16))
mod = ctypes.c_void_p()
r = cu.cuModuleLoadDataEx(ctypes.byref(mod), src, 2, opts, vals)
if r != 0:
    raise SystemExit("load failed %d: %s" % (r, logbuf.value.decode()))
total_bad = 0
for line in open(os.path.join(d, "list.txt")):
    name, sz = line.split(); sz = int(sz)
    fn = ctypes.c_void_p(); ck(cu.cuModuleGetFunction(ctypes.byref(fn), mod, ("k" + name).encode()), "getfn " + name)
    inb = open(os.path.join(d, name + ".in"), "rb").read()
    want = open(os.path.join(d, name + ".want"), "rb").read()
    n = len(want) // sz
    pin = ctypes.c_uint64(); pout = ctypes.c_uint64()
    ck(cu.cuMemAlloc_v2(ctypes.byref(pin), len(inb)), "alloc"); ck(cu.cuMemAlloc_v2(ctypes.byref(pout), len(want)), "alloc")
    ck(cu.cuMemcpyHtoD_v2(pin, inb, len(inb)), "h2d")
    cn = ctypes.c_uint32(n)
    params = (ctypes.c_void_p * 3)(ctypes.cast(ctypes.byref(pin), ctypes.c_void_p), ctypes.cast(ctypes.byref(pout), ctypes.c_void_p), ctypes.cast(ctypes.byref(cn), ctypes.c_void_p))
    ck(cu.cuLaunchKernel(fn, (n + 127) // 128, 1, 1, 128, 1, 1, 0, None, params, None), "launch " + name)
    ck(cu.cuCtxSynchronize(), "sync " + name)
    out = ctypes.create_string_buffer(len(want))
    ck(cu.cuMemcpyDtoH_v2(out, pout, len(want)), "d2h")
    cu.cuMemFree_v2(pin); cu.cuMemFree_v2(pout)
    code = "Q" if sz == 8 else "I"
    a = array.array(code, out.raw); b = array.array(code, want)
    expm, fracm = (0x7FF0000000000000, 0xFFFFFFFFFFFFF) if sz == 8 else (0x7F800000, 0x7FFFFF)
    isnan = lambda u: (u & expm) == expm and (u & fracm) != 0
    bad = [i for i in range(n) if a[i] != b[i] and not (isnan(a[i]) and isnan(b[i]))]
    total_bad += len(bad)
    print("%-20s %d elements, %d differ from the model%s" % (name, n, len(bad), (": first at %d got %x want %x" % (bad[0], a[bad[0]], b[bad[0]])) if bad else ""))
print("TOTAL mismatches:", total_bad)
`
