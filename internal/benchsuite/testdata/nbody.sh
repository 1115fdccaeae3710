#!/usr/bin/env bash
# Builds testdata/nbody.cu with nvcc three ways and times each (GPU machine
# with the CUDA toolkit). Usage: bash nbody.sh [OUTDIR for the SASS dumps]
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp}
tmp=$(mktemp -d)
sm=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
for v in "fmad_false:-fmad=false" "default:" "fast_math:--use_fast_math"; do
	name=${v%%:*}; flags=${v#*:}
	nvcc -O3 -arch=sm_$sm $flags -o "$tmp/nbody_$name" "$here/nbody.cu" || continue
	echo "nvcc $flags: $("$tmp/nbody_$name")"
	cuobjdump -sass "$tmp/nbody_$name" > "$out/nbody_nvcc_$name.sass" 2>&1
done
