// Distributed solves the heat equation's steady state on a grid split
// across a group of processes, one device each: Jacobi sweeps on each
// process's slab of rows, the rows along the cuts exchanged with the
// neighbours by SendOn and RecvOn in one Comm.Group per sweep, and the
// residual summed over the group by AllReduceOn. The result is checked
// against the same sweeps run as plain Go on the whole grid.
//
//	qd run -n 2 ./examples/distributed                   # 2 processes: a GPU each where there are 2, else the CPU
//	qd run -n 4 ./examples/distributed -rows 8192 -cols 8192 -sweeps 200 -check=false
//	go run ./examples/distributed                        # one process: a group of one
//
// Every process holds its rows and one halo row above and one below,
// twice (a sweep reads one buffer and writes the other). A sweep on every
// process, all on one stream, with no host wait:
//
//	group: send first row to rank-1, last row to rank+1; receive the halos from them
//	res ← 0; jacobi(cur, next, res)
//	every -every sweeps: AllReduce(res, Sum), read it
//
// The first process's top halo and the last's bottom halo are the grid's
// fixed boundary rows (the top one hot, at 1), which no one sends.
package main
