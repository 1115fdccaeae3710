package suitekernels

import "github.com/quadrants-go/qd/internal/ir"

// All returns every kernel built here, with each argument the suite
// passes, fresh on each call (the caller may change them). The code
// generator checks compile exactly these (and ReduceSource's kernels).
func All() []*ir.Kernel {
	ks := []*ir.Kernel{
		Fill(ir.F32), Fill(ir.I32), Copy(), Add(), Double(), Axpb(), Saxpy(), SaxpyN(), Poly(), OOB(),
		Alias(), Diff3(), Scale2(), Fill3(),
		SlowWrite(), SlowAdd(), Rendezvous(), RendezvousAll(), Relay(), WaitFlag(),
		TwoGroups(), LoopsInGroups(), CopyGroups(), Groups(3), Groups(4), ThreeGroups(), BadGroup(),
		RendezvousGroups(2), RendezvousGroups(4), RendezvousGroups(8),
		RecordUpdate(), Scatter2(), Scatter4(), RecordStats(), RecordGrid(), SmallInts(), Bitcasts(), Fill4(),
	}
	ks = append(ks, BlockTreeSum(), BlockCollectives(ir.I32), BlockCollectives(ir.F32), BlockCollectives(ir.F64),
		BlockCollectives(ir.I64), BlockCollectives(ir.U32), BlockTranspose(), BlockHistogram(), BlockRecords())
	for _, kind := range RunawayKinds {
		ks = append(ks, Runaway(kind))
	}
	return ks
}
