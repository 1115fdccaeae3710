package qd_test

import (
	"fmt"

	"github.com/quadrants-go/qd"
)

// A process joins its group with NewComm (here a group of one, as a
// program run without a launcher is; `qd run -n 4` makes a group of
// four), and its collectives are stream operations like copies.
func ExampleNewComm() {
	p, err := qd.Init(qd.WithArch(qd.CPU))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	c, err := qd.NewComm(p, qd.CommRank(0, 1, "")) // qd.NewComm(p) reads the group from the environment
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close() // before p.Close: deferred calls run last-first

	s := p.DefaultStream()
	x, _ := qd.NewNdarray[float32](p, 3)
	x.CopyFromHost([]float32{1, 2, 3})
	if err := c.AllReduceOn(s, x, qd.Sum); err != nil { // enqueued on s; tracked like a copy
		fmt.Println(err)
		return
	}
	sum, _ := x.ToSlice() // waits for the all-reduce
	fmt.Println(c, sum)
	// Output: Comm(rank 0 of 1, cpu) [1 2 3]
}
