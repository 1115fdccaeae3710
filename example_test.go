package qd_test

// Examples of the host API. Each forces qd.WithArch(qd.CPU) so that its
// output is the same on every machine; a program would usually call
// qd.Init() (qd.Auto), which takes a GPU when there is one.

import (
	"errors"
	"fmt"
	"log"
	"slices"
	"time"

	"github.com/quadrants-go/qd"
)

// exampleKernels is kernel source as a program would embed it with
// //go:embed from a .go file of its own package.
const exampleKernels = `package kernels

//qd:kernel
func fill(x []float32, v float32) {
	for i := range len(x) {
		x[i] = v
	}
}

//qd:kernel
func axpy(a float32, x, y []float32) {
	for i := range len(x) {
		y[i] = a*x[i] + y[i]
	}
}
`

// exampleProgram starts a CPU Program and compiles exampleKernels.
func exampleProgram() (*qd.Program, *qd.Kernel, *qd.Kernel) {
	p, err := qd.Init(qd.WithArch(qd.CPU))
	if err != nil {
		log.Fatal(err)
	}
	mod, err := qd.Compile(p, exampleKernels)
	if err != nil {
		log.Fatal(err)
	}
	fill, err := mod.Kernel("fill")
	if err != nil {
		log.Fatal(err)
	}
	axpy, err := mod.Kernel("axpy")
	if err != nil {
		log.Fatal(err)
	}
	return p, fill, axpy
}

// The program of the package documentation: compile a kernel, launch it
// on a stream, wait, and read the result.
func Example() {
	p, err := qd.Init(qd.WithArch(qd.CPU)) // qd.Init(): CUDA if present, else AMDGPU, else the CPU
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	mod, err := qd.Compile(p, exampleKernels) // //qd:kernel functions, as Go source
	if err != nil {
		log.Fatal(err)
	}
	axpy, err := mod.Kernel("axpy")
	if err != nil {
		log.Fatal(err)
	}
	x, err := qd.NewNdarray[float32](p, 1024)
	if err != nil {
		log.Fatal(err)
	}
	y, err := qd.NewNdarray[float32](p, 1024)
	if err != nil {
		log.Fatal(err)
	}
	if err := x.CopyFromHost(slices.Repeat([]float32{1}, 1024)); err != nil {
		log.Fatal(err)
	}
	s, err := p.NewStream()
	if err != nil {
		log.Fatal(err)
	}
	if err := axpy.LaunchOn(s, float32(2), x, y); err != nil { // enqueued on s; returns at once
		log.Fatal(err)
	}
	if err := s.Synchronize(); err != nil { // waits for it
		log.Fatal(err)
	}
	out, err := y.ToSlice() // a copy of y's elements
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out[0], out[1023])
	// Output: 2 2
}

func ExampleInit() {
	// qd.Init() alone picks CUDA, else AMDGPU, else the CPU; the CPU
	// always works.
	p, err := qd.Init(qd.WithArch(qd.CPU))
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close() // releases every stream, event, array and kernel of p
	fmt.Println(p.Arch())
	// Output: cpu
}

func ExampleCompile() {
	p, err := qd.Init(qd.WithArch(qd.CPU))
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	mod, err := qd.Compile(p, exampleKernels, qd.WithFilename("kernels.go"))
	if err != nil {
		log.Fatal(err) // errors carry kernels.go:line:col
	}
	fmt.Println(mod.Kernels())

	// Unsupported Go is a positioned compile error, never a crash.
	_, err = qd.Compile(p, "package k\n\n//qd:kernel\nfunc bad(x []int32) {\n\tgo func() {}()\n}\n", qd.WithFilename("bad.go"))
	fmt.Println(err != nil)
	// Output:
	// [fill axpy]
	// true
}

func ExampleKernel_LaunchOn() {
	p, fill, axpy := exampleProgram()
	defer p.Close()
	x, _ := qd.NewNdarray[float32](p, 4)
	y, _ := qd.NewNdarray[float32](p, 4)
	s, err := p.NewStream()
	if err != nil {
		log.Fatal(err)
	}
	// Both launches are enqueued on s and return at once; on one stream
	// they run in order.
	if err := fill.LaunchOn(s, x, float32(3)); err != nil {
		log.Fatal(err)
	}
	if err := axpy.LaunchOn(s, float32(2), x, y); err != nil {
		log.Fatal(err)
	}
	out, _ := y.ToSlice() // waits for the work that writes y
	fmt.Println(out)

	// A wrong argument (an int32 for a float32 parameter) is an error
	// naming the kernel and the parameter. (An untyped constant such as
	// 2.0 would do: it is converted as in a Go call.)
	var argErr *qd.ArgumentError
	if err := axpy.LaunchOn(s, int32(2), x, y); errors.As(err, &argErr) {
		fmt.Println(argErr.Kernel, argErr.Param)
	}
	// Output:
	// [6 6 6 6]
	// axpy a
}

// Two streams ordered by an event: s2's kernel reads what s1's kernel
// writes, and only the device waits.
func ExampleEvent_Record() {
	p, fill, axpy := exampleProgram()
	defer p.Close()
	x, _ := qd.NewNdarray[float32](p, 3)
	y, _ := qd.NewNdarray[float32](p, 3)
	s1, _ := p.NewStream()
	s2, _ := p.NewStream()
	e, err := p.NewEvent()
	if err != nil {
		log.Fatal(err)
	}
	fill.LaunchOn(s1, x, float32(5))
	e.Record(s1)    // marks the work enqueued on s1 so far
	s2.WaitEvent(e) // later work on s2 waits for it; the host does not
	axpy.LaunchOn(s2, float32(1), x, y)
	out, _ := y.ToSlice()
	fmt.Println(out)
	// Output: [5 5 5]
}

func ExampleNdarray_ToSlice() {
	p, err := qd.Init(qd.WithArch(qd.CPU))
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	a, err := qd.NewNdarray[int32](p, 2, 3) // 2 rows, 3 columns, zero-filled
	if err != nil {
		log.Fatal(err)
	}
	if err := a.CopyFromHost([]int32{1, 2, 3, 4, 5, 6}); err != nil { // row-major
		log.Fatal(err)
	}
	v, err := a.ToSlice()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.Shape(), a.Len(), v)
	// Output: [2 3] 6 [1 2 3 4 5 6]
}

func ExampleElapsed() {
	p, fill, _ := exampleProgram()
	defer p.Close()
	x, _ := qd.NewNdarray[float32](p, 1<<16)
	s := p.DefaultStream()
	start, _ := p.NewEvent(qd.WithTiming())
	end, _ := p.NewEvent(qd.WithTiming())
	start.Record(s)
	for range 10 {
		fill.LaunchOn(s, x, float32(1))
	}
	end.Record(s)
	end.Synchronize() // wait for the work between the two events
	d, err := qd.Elapsed(start, end)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d >= 0 && d < time.Minute) // the device time of the 10 launches
	// Output: true
}

func ExampleProgram_NewStream() {
	p, fill, _ := exampleProgram()
	defer p.Close()
	s, err := p.NewStream(qd.WithPriority(-1)) // a higher priority than the default 0
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close() // waits for the stream's work, then destroys it
	x, _ := qd.NewNdarray[float32](p, 1024)
	if err := fill.LaunchOn(s, x, float32(7)); err != nil {
		log.Fatal(err)
	}
	if err := s.Synchronize(); err != nil { // the host waits for s only
		log.Fatal(err)
	}
	done, _ := s.Query()
	fmt.Println(done)
	// Output: true
}
