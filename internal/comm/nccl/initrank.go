package nccl

import (
	"encoding/binary"
	"runtime"
	"unsafe"
)

// The arguments of the communicator's init call.
//
// ncclCommInitRankScalable(ncclComm_t* comm, int nranks, int rank, int nId,
// ncclUniqueId* ids, ncclConfig_t* config) takes only pointers and ints,
// which purego.SyscallN passes as they are. It is the path taken wherever
// the library has it (NCCL 2.28 does), and the one tested.
//
// ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank)
// takes the 128-byte id by value, which SyscallN has no notion of; its
// argument list is laid out here by the platform's C calling convention:
//
//   - SysV x86-64 (Linux, the BSDs, macOS): an aggregate over 16 bytes is
//     of class MEMORY: it is copied into the stack argument area, in
//     argument order, and takes no register. The INTEGER arguments take
//     rdi, rsi, rdx, rcx, r8, r9 in order, skipping it. So comm → rdi,
//     nranks → rsi, rank → rdx, and the id is the first (and only) stack
//     argument, at the bottom of the argument area. SyscallN puts its
//     arguments 1–6 in rdi…r9 and arguments 7 on in the stack slots from
//     the bottom up (purego's sys_amd64.s), so the list is comm, nranks,
//     rank, three unused words for rcx, r8, r9, then the id's 16 words.
//   - AArch64 (AAPCS64), and Windows x64: an aggregate over 16 bytes is
//     copied by the caller and passed as a pointer to the copy, in the
//     next general register. So the list is comm, nranks, &copy, rank.
//
// The x86-64 layout was checked once by hand against a C function of
// ncclCommInitRank's signature compiled by gcc (the id's bytes, nranks and
// rank all arrived); the tests check it only through purego callbacks
// (comm_test.go), and no real NCCL without the scalable call has run it.
// The AArch64 layout is the convention applied, unverified.

// initRankArgs lays out ncclCommInitRank's arguments: commOut is the
// address NCCL writes the comm handle to, idCopy a copy of the id that
// stays alive (and unmoved: heap memory) across the call. ok is false on a
// platform whose convention is not laid out here.
func initRankArgs(commOut uintptr, nranks, rank int, idCopy *[128]byte) (args []uintptr, ok bool) {
	switch {
	case isSysVAMD64():
		args = make([]uintptr, 0, 6+16)
		args = append(args, commOut, uintptr(nranks), uintptr(rank), 0, 0, 0)
		for i := 0; i < 16; i++ {
			// x86-64 is little-endian: word i holds bytes 8i…8i+7 in
			// memory order, as the struct's bytes lie in the slot.
			args = append(args, uintptr(binary.LittleEndian.Uint64(idCopy[8*i:])))
		}
		return args, true
	case isAArch64(), runtime.GOARCH == "amd64" && runtime.GOOS == "windows":
		return []uintptr{commOut, uintptr(nranks), uintptr(unsafe.Pointer(idCopy)), uintptr(rank)}, true
	}
	return nil, false
}

// scalableArgs lays out ncclCommInitRankScalable's arguments for one id
// and the default config (NULL).
func scalableArgs(commOut uintptr, nranks, rank int, idCopy *[128]byte) []uintptr {
	return []uintptr{commOut, uintptr(nranks), uintptr(rank), 1, uintptr(unsafe.Pointer(idCopy)), 0}
}

func isSysVAMD64() bool { return runtime.GOARCH == "amd64" && runtime.GOOS != "windows" }

// isAArch64 is AAPCS64 (Linux); Apple's arm64 variant passes big
// aggregates by reference too.
func isAArch64() bool { return runtime.GOARCH == "arm64" }
