package comm

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/backend"
)

// DType is the element type of a call's buffers. Byte moves (Broadcast,
// AllGather, Send, Recv of any element type) use Uint8 and count bytes.
type DType uint8

const (
	Int8 DType = iota
	Uint8
	Int16
	Uint16
	Int32
	Uint32
	Int64
	Uint64
	Float32
	Float64
	numDTypes
)

var dtypeNames = [numDTypes]string{"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"}
var dtypeSizes = [numDTypes]int{1, 1, 2, 2, 4, 4, 8, 8, 4, 8}

// Size is the bytes of one element.
func (d DType) Size() int {
	if d >= numDTypes {
		return 0
	}
	return dtypeSizes[d]
}

func (d DType) String() string {
	if d >= numDTypes {
		return fmt.Sprintf("DType(%d)", uint8(d))
	}
	return dtypeNames[d]
}

// Op is a reduction.
type Op uint8

const (
	Sum Op = iota
	Prod
	Max
	Min
	Avg // the sum divided by the group's size (integers: truncated)
	numOps
)

var opNames = [numOps]string{"Sum", "Prod", "Max", "Min", "Avg"}

func (o Op) String() string {
	if o >= numOps {
		return fmt.Sprintf("Op(%d)", uint8(o))
	}
	return opNames[o]
}

// Kind is what a Call does.
type Kind uint8

const (
	AllReduce     Kind = iota + 1 // Recv = op over every rank's Send
	Broadcast                     // Recv = root's Send (Send is read on root only)
	Reduce                        // root's Recv = op over every rank's Send
	AllGather                     // Recv = every rank's Send, in rank order
	ReduceScatter                 // Recv = rank's part of op over every rank's Send
	Send                          // Send's elements to Peer
	Recv                          // Recv's elements from Peer
)

var kindNames = [...]string{"", "AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter", "Send", "Recv"}

func (k Kind) String() string {
	if int(k) >= len(kindNames) || k == 0 {
		return fmt.Sprintf("Kind(%d)", uint8(k))
	}
	return kindNames[k]
}

// Call is one operation of a batch. Count is in elements of DType:
//   - AllReduce, Broadcast, Reduce: the elements of Send and of Recv;
//   - AllGather: the elements each rank sends (Recv holds Size × Count);
//   - ReduceScatter: the elements each rank receives (Send holds
//     Size × Count);
//   - Send, Recv: the elements moved.
//
// Send and Recv may be the same buffer (in place) where the kind allows
// it: AllReduce, Broadcast, Reduce. Buffers are the backend's; the
// transport reaches their memory its own way (a host pointer on the CPU, a
// device address on a GPU).
type Call struct {
	Kind       Kind
	Send, Recv backend.Buffer
	Count      int
	DType      DType
	Op         Op
	Peer       int    // the root of Broadcast and Reduce; the peer of Send and Recv
	Name       string // the user's name of the call ("AllReduceOn"), for messages
}

// Transport runs the collectives of one group member on the streams of
// its backend device.
type Transport interface {
	// Run enqueues calls on s, in the order of s, as one group: they may
	// progress together, so a Send and a Recv between two ranks in one
	// batch do not wait for each other (NCCL's group calls). Every member
	// of the group must run the same collectives in the same order; point
	// to point calls pair in the order each pair of ranks issues them.
	// Errors found before the work is enqueued are returned; errors of the
	// work itself are reported by s (the next Synchronize) or, where the
	// backend cannot (a GPU kernel aborted), by Err.
	Run(s backend.Stream, calls []Call) error
	// Err is the error that broke the transport (a member left, a remote
	// fault, Abort), or nil while it works.
	Err() error
	// Abort breaks the transport with cause: work in flight ends (with an
	// error where the backend can report one) and later Runs fail. It is
	// idempotent; the first cause is kept.
	Abort(cause error)
	// Close releases the transport once the work enqueued on it is done
	// (the caller has waited for its streams). It is idempotent.
	Close() error
}
