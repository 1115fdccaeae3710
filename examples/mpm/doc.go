// Mpm simulates a 2-D fluid with the MLS-MPM method, in the shape of the
// 88-line demonstration of Hu et al. (SIGGRAPH 2018): a block of particles
// falls under gravity into a box and splashes. The kernels (kernels.go) are
// written with qd's value types, as a user would: particles and grid cells
// are structs of qd.Vec2[float32] and qd.Mat2[float32], the kernels take a
// []Particle and a [][]Cell, and the scatter to the grid uses atomics on
// the cells' fields. The program compiles them with qd, captures one frame's
// substeps as a graph and replays it on a stream per frame, checks the first
// frame against the same kernels run as plain Go, prints the time of a
// substep each way, and writes the particles as an animated GIF.
//
//	go run ./examples/mpm               # through qd; -arch cpu|cuda|amdgpu
//	go run ./examples/mpm -native       # the kernels as plain Go only
//	go run ./examples/mpm -n 65536 -png frame.png
//
// testdata/mpm.cu is the same substep in CUDA C++, the reference of the
// benchmark bar; README.md says how to build and run it.
package main
