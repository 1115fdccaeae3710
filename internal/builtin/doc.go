// Package builtin builds, as IR, the kernels qd itself launches: the fills
// of Ndarray.FillOn. A fill writes bits, so there is one kernel per element
// size, over the array's memory seen as one dimension (every Ndarray, and
// every Rows view of one, is contiguous). The Program compiles them when it
// starts, so that no FillOn waits for a module to load (which a GPU driver
// may do only once the device's running work is done).
//
// internal/codegencheck compiles these kernels with every code generator,
// as it does the test corpus.
package builtin
