#!/usr/bin/env bash
# Prepares .gpu/ports/ for one run on the GPU machine (run.sh there): the
# originals' sources, copied from local git mirrors at pinned commits into
# .gpu/ports/ref/ (they are not ours, so they are never committed: .gpu/
# is git-ignored), our drivers and scripts, and a qd binary built for
# linux/amd64.
#
#   bash internal/benchsuite/testdata/ports/prepare.sh
#   then on the GPU machine, from the repository root (carry .gpu):
#   bash .gpu/ports/run.sh
#
# Run it after ../shared/gpu/build-tests.sh, which deletes .gpu/ as it
# starts; this script replaces only .gpu/ports/. The mirrors are git
# directories (what the fetch tool leaves under /work/.mirror); set
# CUDA_SAMPLES_GIT and RODINIA_GIT to use others.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
samples=${CUDA_SAMPLES_GIT:-/work/.mirror/NVIDIA+cuda-samples/repo}
rodinia=${RODINIA_GIT:-/work/.mirror/yuhc+gpu-rodinia/repo}
# The commits the ports were written from (NVIDIA/cuda-samples of
# 2025-09-05, yuhc/gpu-rodinia of 2023-04-13).
samples_commit=c94ff366aed18c797b8a85dfaac7817b0228b420
rodinia_commit=9c10d3ea16ddba2ba057cc3951a9efc4c2cc18a4

out=$root/.gpu/ports
rm -rf "$out"
mkdir -p "$out/ref"

# take GITDIR COMMIT PATH DEST: one file of a mirror into ref/DEST.
take() {
	mkdir -p "$(dirname "$out/ref/$4")"
	git --git-dir="$1" show "$2:$3" >"$out/ref/$4"
}
s() { take "$samples" "$samples_commit" "Samples/$1" "$2"; }
r() { take "$rodinia" "$rodinia_commit" "cuda/$1" "$2"; }

for f in helper_cuda.h helper_functions.h helper_string.h helper_timer.h helper_image.h exception.h; do
	take "$samples" "$samples_commit" "Common/$f" "common/$f"
done
s 0_Introduction/matrixMul/matrixMul.cu matrixMul/matrixMul.cu
s 6_Performance/transpose/transpose.cu transpose/transpose.cu
for f in histogram256.cu histogram64.cu histogram_common.h histogram_gold.cpp main.cpp; do
	s 2_Concepts_and_Techniques/histogram/$f histogram/$f
done
for f in scan.cu scan_common.h scan_gold.cpp main.cpp; do
	s 2_Concepts_and_Techniques/scan/$f scan/$f
done
for f in bitonicSort.cu oddEvenMergeSort.cu sortingNetworks_common.cuh sortingNetworks_common.h sortingNetworks_validate.cpp main.cpp; do
	s 2_Concepts_and_Techniques/sortingNetworks/$f sortingNetworks/$f
done
r hotspot/hotspot.cu hotspot/hotspot.cu
r nw/needle_kernel.cu nw/needle_kernel.cu
r nw/needle.h nw/needle.h
printf 'cuda-samples %s\nrodinia %s\n' "$samples_commit" "$rodinia_commit" >"$out/ref/COMMITS"

cp "$here"/*.cu "$here"/common.h "$here"/run.sh "$out/"
(cd "$root" && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -ldflags='-s -w' -o "$out/qd" ./cmd/qd)
echo "prepared $out ($(du -sh "$out" | cut -f1)); on the GPU machine: bash .gpu/ports/run.sh"
