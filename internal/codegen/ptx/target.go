package ptx

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Target is what the PTX is written for.
type Target struct {
	SM      int    // compute capability ×10, e.g. 90 for sm_90
	Version string // PTX ISA version, e.g. "7.8"
	// MaxVersion is the newest PTX ISA the driver accepts ("" means
	// Version): a module that uses an instruction newer than Version
	// (vecred.go's vector atomics) heads itself with the version that
	// instruction needs, only when MaxVersion allows it. TargetFor sets
	// it; a Target written by hand without it gets only what Version has.
	MaxVersion string
}

// minSM is the oldest compute capability qd generates code for: atom.add.f64
// needs sm_60, and the driver still JITs for it (driver branch 580 is the
// last that supports anything below 7.5).
const minSM = 60

// featureISA is the PTX ISA the emitted instructions need: shfl.sync (the
// warp step of reductions) since ISA 6.0; everything else the generator
// writes (atom.add.f64, min/max on 64-bit integers, .reg function
// parameters, cvt.rzi/.rmi/.rpi between floats) since ISA 5.0.
const featureISA = 60

// targetISA is the minimum PTX ISA (×10) that knows each .target, from the
// PTX ISA release notes (and LLVM's NVPTX.td, which encodes the same table).
var targetISA = map[int]int{
	60: 50, 61: 50, 62: 50,
	70: 60, 72: 61, 75: 63,
	80: 70, 86: 71, 87: 74, 89: 78,
	90:  78,
	100: 86, 101: 86, 103: 88,
	110: 90,
	120: 87, 121: 88,
}

// cudaISA maps a CUDA release (cuDriverGetVersion: 1000×major + 10×minor) to
// the newest PTX ISA its driver accepts.
var cudaISA = []struct{ cuda, isa int }{
	{9000, 60}, {9010, 61}, {9020, 62},
	{10000, 63}, {10010, 64}, {10020, 65},
	{11000, 70}, {11010, 71}, {11020, 72}, {11030, 73}, {11040, 74},
	{11050, 75}, {11060, 76}, {11070, 77}, {11080, 78},
	{12000, 80}, {12010, 81}, {12020, 82}, {12030, 83}, {12040, 84},
	{12050, 85}, {12060, 85}, {12070, 86}, {12080, 87}, {12090, 88},
	{13000, 90}, {13010, 91},
}

// driverISA is the newest PTX ISA (×10) a driver of the given
// cuDriverGetVersion value accepts, or 0 if it is older than CUDA 9.0. A
// driver newer than the table accepts at least the table's newest ISA.
func driverISA(driverVersion int) int {
	isa := 0
	for _, e := range cudaISA {
		if driverVersion >= e.cuda {
			isa = e.isa
		}
	}
	return isa
}

// minISAForSM is the minimum PTX ISA (×10) that knows .target sm_<sm>. For a
// compute capability missing from the table it takes the entry of the
// closest older one, or, past the table's end, maxISA (the newest the driver
// takes: a driver that knows a new GPU knows its target).
func minISAForSM(sm, maxISA int) int {
	if isa, ok := targetISA[sm]; ok {
		return isa
	}
	best, bestSM := 0, 0
	newest := 0
	for s, isa := range targetISA {
		newest = max(newest, s)
		if s < sm && s > bestSM {
			best, bestSM = isa, s
		}
	}
	if sm > newest {
		return max(best, maxISA)
	}
	return best
}

// maxSM bounds the compute capabilities TargetFor takes: a major version
// of two digits at most. Past the table, a newer GPU's target is taken on
// trust (minISAForSM), but not a number no GPU can report.
const maxSM = 999

// SMs are the compute capabilities (×10, oldest first) whose .target the
// generator knows the PTX ISA of. TargetFor also takes others, between
// them and up to maxSM, as a device reports them.
func SMs() []int { return slices.Sorted(maps.Keys(targetISA)) }

// TargetFor picks .target sm_XY equal to the device's compute capability sm
// and the lowest .version that knows that target and every instruction qd
// emits. driverVersion is cuDriverGetVersion's value (13000 for CUDA 13.0).
// It fails when the driver cannot take any PTX for that SM.
func TargetFor(sm, driverVersion int) (Target, error) {
	switch {
	case sm < 0 || sm > maxSM:
		return Target{}, fmt.Errorf("ptx: %d is not a compute capability ×10 (sm_90 is 90)", sm)
	case sm < minSM:
		return Target{}, fmt.Errorf("ptx: compute capability %d.%d is older than %d.%d, the oldest qd supports", sm/10, sm%10, minSM/10, minSM%10)
	}
	maxISA := driverISA(driverVersion)
	if maxISA == 0 {
		return Target{}, fmt.Errorf("ptx: CUDA driver version %d is older than CUDA 9.0, the oldest qd supports", driverVersion)
	}
	need := max(minISAForSM(sm, maxISA), featureISA)
	if need > maxISA {
		return Target{}, fmt.Errorf("ptx: sm_%d needs PTX ISA %s but the CUDA %d.%d driver accepts at most %s; update the driver",
			sm, isaString(need), driverVersion/1000, driverVersion%1000/10, isaString(maxISA))
	}
	return Target{SM: sm, Version: isaString(need), MaxVersion: isaString(maxISA)}, nil
}

func isaString(isa int) string { return fmt.Sprintf("%d.%d", isa/10, isa%10) }

// check reports whether t can head a module.
func (t Target) check() error {
	if _, ok := t.isa(); !ok {
		return fmt.Errorf("ptx: target version %q is not of the form MAJOR.MINOR", t.Version)
	}
	if t.SM < minSM {
		return fmt.Errorf("ptx: target sm_%d is older than sm_%d, the oldest qd supports", t.SM, minSM)
	}
	return nil
}

func (t Target) header() string { return t.headerFor(0) }

// headerFor is the module header of a module whose instructions need PTX
// ISA need (×10; 0 for what Version has).
func (t Target) headerFor(need int) string {
	v := t.Version
	if isa, _ := t.isa(); need > isa {
		v = isaString(need)
	}
	return fmt.Sprintf(".version %s\n.target sm_%d\n.address_size 64\n", v, t.SM)
}

// allows reports whether a module for t may use an instruction of PTX
// ISA isa (×10): Version has it, or MaxVersion does and the module's
// version is raised (headerFor).
func (t Target) allows(isa int) bool {
	have, _ := t.isa()
	if have >= isa {
		return true
	}
	maxISA, ok := Target{Version: t.MaxVersion}.isa()
	return ok && maxISA >= isa
}

// awaitsPredecessors reports whether entries for t begin with
// griddepcontrol.wait and griddepcontrol.launch_dependents (sm_90 and
// later, PTX ISA 7.8). The wait holds each thread until the grids its
// launch depends on have completed and their memory is visible, so every
// entry may be launched as a programmatic dependent launch, started while
// its predecessor still runs (kabi.Module.AwaitsPredecessors); launched
// plainly, the wait returns at once. launch_dependents, after the wait,
// lets the next grid start once this one's blocks are all running: only
// its launch overlaps this grid, never its memory accesses.
func (t Target) awaitsPredecessors() bool { return t.SM >= 90 }

// l2Prefetch reports whether loads may carry the .L2::256B qualifier
// (sm_80 and PTX ISA 7.4 on), which has L2 fetch the 256-byte block
// around the accessed sector. The early loads of a row chunk use it
// (chunkloads.go): measured on the 5-point stencil of 16384² float32, the
// H100's 0.857 ms became 0.811 and the H200's 0.661 ms 0.638; .L2::128B
// gave 0.814 and 0.640, and hints on the stores (.cs, .L1::no_allocate)
// or .L1::no_allocate on the loads made it slower.
func (t Target) l2Prefetch() bool {
	isa, _ := t.isa()
	return t.SM >= 80 && isa >= 74
}

// isa is t.Version ×10 (7.8: 78), and whether it is of the form
// MAJOR.MINOR with a one-digit minor.
func (t Target) isa() (int, bool) {
	major, minor, ok := strings.Cut(t.Version, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if !ok || err1 != nil || err2 != nil || len(minor) != 1 {
		return 0, false
	}
	return ma*10 + mi, true
}
