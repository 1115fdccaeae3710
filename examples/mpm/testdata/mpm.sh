#!/usr/bin/env bash
# Builds testdata/mpm.cu, the CUDA C++ reference of examples/mpm, and runs it.
#
#   bash mpm.sh [FRAMES [OUTDIR]]   on a GPU machine with the CUDA toolkit:
#                                   nvcc -O3 for the GPU's own sm (sm_90 on an
#                                   H100 or H200), once as nvcc compiles by
#                                   default (FMA contraction) and once with
#                                   -fmad=false (qd's default float semantics);
#                                   runs each over FRAMES frames (default 100)
#                                   and leaves ptxas -v's report and the SASS of
#                                   each in OUTDIR (default /tmp)
#   bash mpm.sh -host               anywhere with g++: compiles mpm.cu against the
#                                   stand-in runtime in stub/ and runs its kernels
#                                   serially on the host over 2 frames, which
#                                   checks the C++ and the physics (not the speed)
#
# Each configuration prints one line of key=value pairs (mpm.cu's header
# says what each key means); build=NAME says which build ran it. The exit
# status is non-zero if a build fails or a check does.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" = -host ]; then
	sed -E 's/<<<[^>]*>>>/ /g' "$here/mpm.cu" > "$tmp/mpm.cpp"
	${CXX:-g++} -std=c++17 -O2 -Wall -Wextra -Wno-unknown-pragmas -Wno-unused-parameter -Wno-unused-function \
		-I"$here/stub" -D__CUDA_ARCH__=900 -o "$tmp/mpm" "$tmp/mpm.cpp" || exit 1
	"$tmp/mpm" 2 | sed 's/^mpm /mpm build=host /'
	exit
fi

frames=${1:-100}
out=${2:-/tmp}
sm=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
status=0
for v in "default:" "fmad_false:-fmad=false"; do
	name=${v%%:*}
	flags=${v#*:}
	echo "# nvcc -O3 -arch=sm_$sm $flags"
	if ! nvcc -O3 -arch=sm_$sm $flags -Xptxas -v -o "$tmp/mpm_$name" "$here/mpm.cu" 2> "$out/mpm_nvcc_$name.ptxas"; then
		cat "$out/mpm_nvcc_$name.ptxas" >&2
		status=1
		continue
	fi
	"$tmp/mpm_$name" "$frames" | sed "s/^mpm /mpm build=$name /" || status=1
	cuobjdump -sass "$tmp/mpm_$name" > "$out/mpm_nvcc_$name.sass" 2>&1
done
exit $status
