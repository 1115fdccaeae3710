package cuda

import (
	"os"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// gpuRequired reports whether GPU tests must run: with QD_GPU_RUN=1 a
// missing or broken device fails them instead of skipping them.
func gpuRequired() bool { return os.Getenv("QD_GPU_RUN") == "1" }

// requireGPU skips the test (fails it under QD_GPU_RUN=1) when CUDA is
// unavailable.
func requireGPU(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		if gpuRequired() {
			t.Fatalf("QD_GPU_RUN=1 but CUDA is unavailable: %v", err)
		}
		t.Skipf("no CUDA driver: %v", err)
	}
}

// openGPU opens device 0 for a test and closes it when the test ends.
func openGPU(t testing.TB) *device {
	t.Helper()
	requireGPU(t)
	d, err := open(0)
	if err != nil {
		t.Fatalf("Open(0): %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Device.Close: %v", err)
		}
	})
	return d
}

// testPTX holds hand-written kernels for the GPU tests, independent of
// package ptx. .target sm_70 is JIT-compiled forward for newer GPUs.
const testPTX = `
.version 7.0
.target sm_70
.address_size 64

.visible .entry empty()
{
	ret;
}

.visible .entry nop4(.param .u64 a, .param .u64 b, .param .u32 c, .param .u64 d)
{
	ret;
}

// fill(p, n, v): p[i] = v for i in [0, n), grid-stride.
.visible .entry fill(.param .u64 p, .param .u64 n, .param .u32 v)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [p];
	ld.param.u64 %rd2, [n];
	ld.param.u32 %r1, [v];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.u32 %r5, %r2, %r3, %r4;
	cvt.u64.u32 %rd3, %r5;
	mov.u32 %r2, %nctaid.x;
	mul.wide.u32 %rd4, %r2, %r3;
LOOP:
	setp.ge.u64 %p1, %rd3, %rd2;
	@%p1 bra DONE;
	shl.b64 %rd5, %rd3, 2;
	add.s64 %rd6, %rd1, %rd5;
	st.global.u32 [%rd6], %r1;
	add.s64 %rd3, %rd3, %rd4;
	bra LOOP;
DONE:
	ret;
}

// add1(src, dst, n): dst[i] = src[i] + 1, grid-stride.
.visible .entry add1(.param .u64 src, .param .u64 dst, .param .u64 n)
{
	.reg .pred %p<2>;
	.reg .b32 %r<7>;
	.reg .b64 %rd<10>;
	ld.param.u64 %rd1, [src];
	ld.param.u64 %rd7, [dst];
	ld.param.u64 %rd2, [n];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd7, %rd7;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.u32 %r5, %r2, %r3, %r4;
	cvt.u64.u32 %rd3, %r5;
	mov.u32 %r2, %nctaid.x;
	mul.wide.u32 %rd4, %r2, %r3;
LOOP:
	setp.ge.u64 %p1, %rd3, %rd2;
	@%p1 bra DONE;
	shl.b64 %rd5, %rd3, 2;
	add.s64 %rd6, %rd1, %rd5;
	ld.global.u32 %r6, [%rd6];
	add.u32 %r6, %r6, 1;
	add.s64 %rd8, %rd7, %rd5;
	st.global.u32 [%rd8], %r6;
	add.s64 %rd3, %rd3, %rd4;
	bra LOOP;
DONE:
	ret;
}

// delay_fill(p, n, v, ns): one thread waits ns nanoseconds, then sets
// p[0..n) to v. It makes "the earlier work is still running" likely.
.visible .entry delay_fill(.param .u64 p, .param .u64 n, .param .u32 v, .param .u64 ns)
{
	.reg .pred %p<3>;
	.reg .b32 %r<2>;
	.reg .b64 %rd<10>;
	ld.param.u64 %rd1, [p];
	ld.param.u64 %rd2, [n];
	ld.param.u32 %r1, [v];
	ld.param.u64 %rd7, [ns];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u64 %rd3, %globaltimer;
DELAY:
	mov.u64 %rd4, %globaltimer;
	sub.s64 %rd5, %rd4, %rd3;
	setp.lt.u64 %p1, %rd5, %rd7;
	@%p1 bra DELAY;
	mov.u64 %rd6, 0;
LOOP:
	setp.ge.u64 %p2, %rd6, %rd2;
	@%p2 bra DONE;
	shl.b64 %rd8, %rd6, 2;
	add.s64 %rd9, %rd1, %rd8;
	st.global.u32 [%rd9], %r1;
	add.s64 %rd6, %rd6, 1;
	bra LOOP;
DONE:
	ret;
}

// spin(flag, out): one thread waits (at most 5 s) for *flag != 0, then
// writes 1 to *out, or 2 on timeout.
.visible .entry spin(.param .u64 flag, .param .u64 out)
{
	.reg .pred %p<3>;
	.reg .b32 %r<3>;
	.reg .b64 %rd<6>;
	ld.param.u64 %rd1, [flag];
	ld.param.u64 %rd2, [out];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	mov.u64 %rd3, %globaltimer;
WAIT:
	ld.volatile.global.u32 %r1, [%rd1];
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SEEN;
	mov.u64 %rd4, %globaltimer;
	sub.s64 %rd5, %rd4, %rd3;
	setp.lt.u64 %p2, %rd5, 5000000000;
	@%p2 bra WAIT;
	mov.u32 %r2, 2;
	st.global.u32 [%rd2], %r2;
	ret;
SEEN:
	mov.u32 %r2, 1;
	st.global.u32 [%rd2], %r2;
	ret;
}

// temps_rw(temps, out, v): writes v to temps[0] (u64), reads it back and
// stores it to *out: checks the per-launch temporaries are real memory.
.visible .entry temps_rw(.param .u64 temps, .param .u64 out, .param .u64 v)
{
	.reg .b64 %rd<5>;
	ld.param.u64 %rd1, [temps];
	ld.param.u64 %rd2, [out];
	ld.param.u64 %rd3, [v];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	st.volatile.global.u64 [%rd1], %rd3;
	ld.volatile.global.u64 %rd4, [%rd1];
	st.global.u64 [%rd2], %rd4;
	ret;
}

// poke(p): stores to address p; the poison test passes a bad one.
.visible .entry poke(.param .u64 p)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [p];
	mov.u32 %r1, 7;
	st.global.u32 [%rd1], %r1;
	ret;
}
`

// kernelSpec describes one hand-written kernel as a single-task module.
type kernelSpec struct {
	entry    string
	kind     lower.TaskKind
	blockDim int
	nparams  int
	params   []kabi.Slot
	temps    int
	total    func(scalars []uint64, shapes [][3]int) int64
}

var testKernels = map[string]kernelSpec{
	"empty": {entry: "empty", kind: lower.Serial},
	"nop4": {entry: "nop4", kind: lower.Serial, nparams: 4, params: []kabi.Slot{
		{Kind: kabi.ArraySlot, Param: 0, Size: 8}, {Kind: kabi.ArraySlot, Param: 1, Size: 8},
		{Kind: kabi.ScalarSlot, Param: 2, Size: 4}, {Kind: kabi.ScalarSlot, Param: 3, Size: 8}}},
	"fill": {entry: "fill", kind: lower.Parallel, blockDim: 256, nparams: 2, params: []kabi.Slot{
		{Kind: kabi.ArraySlot, Param: 0, Size: 8}, {Kind: kabi.DimSlot, Param: 0, Dim: 0, Size: 8},
		{Kind: kabi.ScalarSlot, Param: 1, Size: 4}},
		total: func(_ []uint64, sh [][3]int) int64 { return int64(sh[0][0]) }},
	"add1": {entry: "add1", kind: lower.Parallel, blockDim: 128, nparams: 2, params: []kabi.Slot{
		{Kind: kabi.ArraySlot, Param: 0, Size: 8}, {Kind: kabi.ArraySlot, Param: 1, Size: 8},
		{Kind: kabi.DimSlot, Param: 1, Dim: 0, Size: 8}}},
	"delay_fill": {entry: "delay_fill", kind: lower.Serial, nparams: 3, params: []kabi.Slot{
		{Kind: kabi.ArraySlot, Param: 0, Size: 8}, {Kind: kabi.DimSlot, Param: 0, Dim: 0, Size: 8},
		{Kind: kabi.ScalarSlot, Param: 1, Size: 4}, {Kind: kabi.ScalarSlot, Param: 2, Size: 8}}},
	"spin": {entry: "spin", kind: lower.Serial, nparams: 2, params: []kabi.Slot{
		{Kind: kabi.ArraySlot, Param: 0, Size: 8}, {Kind: kabi.ArraySlot, Param: 1, Size: 8}}},
	"temps_rw": {entry: "temps_rw", kind: lower.Serial, nparams: 2, temps: 1, params: []kabi.Slot{
		{Kind: kabi.TempsSlot, Size: 8}, {Kind: kabi.ArraySlot, Param: 0, Size: 8}, {Kind: kabi.ScalarSlot, Param: 1, Size: 8}}},
	"poke": {entry: "poke", kind: lower.Serial, nparams: 1, params: []kabi.Slot{{Kind: kabi.ScalarSlot, Param: 0, Size: 8}}},
}

// testKernel loads one hand-written kernel through the same path as a
// compiled plan (load, layout, pooled launch blocks).
func testKernel(t testing.TB, d *device, name string) *moduleHandle {
	t.Helper()
	k, ok := testKernels[name]
	if !ok {
		t.Fatalf("no test kernel %q", name)
	}
	c := &compiled{ptx: testPTX, numTemps: k.temps, tasks: []task{{Task: kabi.Task{
		Entry: k.entry, Kind: k.kind, BlockDim: k.blockDim, Slots: k.params, HostTotal: k.total,
	}}}}
	m, err := d.load(c, k.nparams)
	if err != nil {
		t.Fatalf("loading test kernel %s: %v", name, err)
	}
	t.Cleanup(func() {
		if d.enter() == nil {
			m.unload()
			d.leave()
		}
	})
	return &moduleHandle{m: m}
}

// launch1 runs a single-task module on s.
func launch1(t testing.TB, h *moduleHandle, s backend.Stream, args *backend.Args) {
	t.Helper()
	l, err := h.Begin(s, args)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	err = l.Run(0, s)
	if endErr := l.End(s); err == nil {
		err = endErr
	}
	if err != nil {
		t.Fatalf("launch: %v", err)
	}
}

func arr(b backend.Buffer, n int) backend.ArrayArg {
	return backend.ArrayArg{Buf: b, Shape: [3]int{n, 1, 1}}
}

func mustStream(t testing.TB, d *device, prio int) backend.Stream {
	t.Helper()
	s, err := d.NewStream(prio)
	if err != nil {
		t.Fatalf("NewStream: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustAlloc(t testing.TB, d *device, bytes int) backend.Buffer {
	t.Helper()
	b, err := d.Alloc(bytes)
	if err != nil {
		t.Fatalf("Alloc(%d): %v", bytes, err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func readU32(t testing.TB, b backend.Buffer, s backend.Stream, n int) []uint32 {
	t.Helper()
	out := make([]uint32, n)
	if err := b.CopyToHost(s, unsafe.Pointer(&out[0]), 4*n); err != nil {
		t.Fatalf("CopyToHost: %v", err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatalf("Synchronize: %v", err)
	}
	return out
}

func writeU32(t testing.TB, b backend.Buffer, s backend.Stream, v []uint32) {
	t.Helper()
	if err := b.CopyFromHost(s, unsafe.Pointer(&v[0]), 4*len(v)); err != nil {
		t.Fatalf("CopyFromHost: %v", err)
	}
}

// view is a buffer that starts off bytes into another one.
type view struct {
	*buffer
	off uint64
}

func (v view) devPtrFor(d *device) (uint64, error) {
	p, err := v.buffer.devPtrFor(d)
	return p + v.off, err
}

func sub(b backend.Buffer, off int) backend.Buffer { return view{b.(*buffer), uint64(off)} }
