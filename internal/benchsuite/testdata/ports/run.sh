#!/usr/bin/env bash
# Issue 24's bar for the ports: the CUDA samples' matrixMul, transpose,
# histogram256, scan and sortingNetworks and Rodinia's hotspot and nw,
# each original built by nvcc and timed by our driver (*.cu here, which
# includes the original's source from ref/), beside its qd port timed by
# `qd bench -run ports`, with the same sizes and the same timing rule;
# then a table: nvcc ms, qd ms, qd/nvcc and the bar (<= 1.25).
#
#   bash .gpu/ports/run.sh      (on the GPU machine, after prepare.sh here)
#
# Environment: OUT (logs go to $OUT/ports, else /tmp/ports), NVCC, ARCH
# (sm_XY; else the GPU's), QD (the qd binary; else the one beside this
# script), ORIGINALS=0 to skip building and running the samples as they
# are (their own timing lines, printed last for comparison).
#
# Each program is built and run on its own: one that fails is reported
# and the others go on. matrixMul and hotspot are built twice: "PROG" is
# nvcc -fmad=false beside qd's default exact float semantics, and
# "PROG:fma" nvcc's default (contracted multiply-adds) beside
# qd.WithFastMath.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp}/ports
mkdir -p "$out"
work=$(mktemp -d)
qd=${QD:-$here/qd}
bar=1.25

nvcc=${NVCC:-$(command -v nvcc || true)}
if [ -z "$nvcc" ]; then
	for d in $(ls -d /usr/local/cuda*/bin 2>/dev/null | sort -V -r); do
		if [ -x "$d/nvcc" ]; then nvcc=$d/nvcc; break; fi
	done
fi
arch=${ARCH:-}
if [ -z "$arch" ]; then
	cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
	arch=sm_${cc:-90}
fi
echo "== GPU: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null | head -n 1)"
if [ -n "$nvcc" ]; then
	echo "== nvcc: $nvcc ($("$nvcc" --version | tail -n 1)), -O3 -arch=$arch"
else
	echo "== nvcc: not found (set NVCC); the originals are skipped"
fi

# name|driver|extra nvcc flags|label (the program name its lines carry)
builds=(
	"matrixMul|matrixMul.cu||matrixMul:fma"
	"matrixMul_nofma|matrixMul.cu|-fmad=false|matrixMul"
	"transpose|transpose.cu||"
	"histogram|histogram.cu||"
	"scan|scan.cu||"
	"sortingNetworks|sortingNetworks.cu||"
	"hotspot|hotspot.cu||hotspot:fma"
	"hotspot_nofma|hotspot.cu|-fmad=false|hotspot"
	"nw|nw.cu||"
)
: >"$out/nvcc.txt"
if [ -n "$nvcc" ]; then
	echo "== building the drivers (logs in $out/build-*.log)"
	for b in "${builds[@]}"; do
		IFS='|' read -r name src flags label <<<"$b"
		# shellcheck disable=SC2086 # flags is a word list
		"$nvcc" -O3 -arch="$arch" $flags -I"$here/ref" -I"$here/ref/common" -I"$here" \
			-o "$work/$name" "$here/$src" >"$out/build-$name.log" 2>&1 &
	done
	wait
	echo "== timing the originals"
	for b in "${builds[@]}"; do
		IFS='|' read -r name src flags label <<<"$b"
		if [ ! -x "$work/$name" ]; then
			echo "   $name: build failed:"
			grep -m 5 -i error "$out/build-$name.log" | sed 's/^/      /'
			continue
		fi
		# shellcheck disable=SC2086 # no label: the driver's default
		timeout 120 "$work/$name" $label >"$work/$name.out" 2>"$out/run-$name.log"
		rc=$?
		grep '^nvcc ' "$work/$name.out" | tee -a "$out/nvcc.txt" | sed 's/^/   /'
		if [ $rc -ne 0 ]; then
			echo "   $name: exit status $rc:"
			tail -n 5 "$out/run-$name.log" | sed 's/^/      /'
		fi
	done
fi

echo "== timing the qd ports: $qd bench -arch cuda -run '^ports' -json"
timeout 400 "$qd" bench -arch cuda -run '^ports' -json >"$out/qd.json" 2>"$out/qd.log"
echo "   exit status $? (1 when a row is a FAIL); log in $out/qd.log"
# The rows as lines: name, value (ms), status, note, tab-separated.
awk '
	/^      "name":/ { name = $0; sub(/^[^:]*: "/, "", name); sub(/",?$/, "", name) }
	/^      "value":/ { v = $2; sub(/,$/, "", v) }
	/^      "status":/ { st = $2; gsub(/[",]/, "", st) }
	/^      "note":/ { note = $0; sub(/^[^:]*: "/, "", note); sub(/",?$/, "", note) }
	/^    }/ { if (name ~ /^port /) print name "\t" v "\t" st "\t" note; name = ""; v = ""; st = ""; note = "" }
' "$out/qd.json" >"$out/qd.txt"
if [ ! -s "$out/qd.txt" ]; then
	echo "   no ports rows came back; the end of its output:"
	tail -n 20 "$out/qd.json" "$out/qd.log" | sed 's/^/      /'
fi

echo
echo "== ports against their originals (median of 15 trials; bar: qd/nvcc <= $bar)"
awk -v bar="$bar" -v qfile="$out/qd.txt" '
	function line(key, a, b, c, d) { split(key, k, " "); printf "%-16s %-16s %12s %12s %8s  %s\n", k[1], k[2], a, b, c, d }
	BEGIN { line("program config", "nvcc ms", "qd ms", "qd/nvcc", "status") }
	FILENAME == qfile { split($1, f, " "); key = f[2] " " f[3]; qv[key] = $2; qs[key] = $3; qn[key] = $4; order[++nq] = key; next }
	$1 == "nvcc" {
		key = $2 " " $3; seen[key] = 1; nv = $4
		if (nv == "FAIL") { line(key, "FAIL", "-", "-", "the original gave a wrong result: " $0); nbad++; next }
		if (!(key in qv)) { line(key, nv, "-", "-", "no qd row"); nbad++; next }
		if (qs[key] != "info") { line(key, nv, "FAIL", "-", qn[key]); nbad++; next }
		r = qv[key] / nv; ok = (r <= bar) ? "pass" : "FAIL"
		line(key, sprintf("%.4f", nv), sprintf("%.4f", qv[key]), sprintf("%.3f", r), ok)
		if (ok == "pass") np++; else nf++
	}
	END {
		for (i = 1; i <= nq; i++) if (!(order[i] in seen)) { line(order[i], "-", qs[order[i]] == "info" ? qv[order[i]] : "FAIL", "-", qs[order[i]] == "info" ? "no nvcc line" : qn[order[i]]); nbad++ }
		printf "%d pass, %d miss the bar, %d without a pair of figures\n", np, nf, nbad
	}
' FS='\t' "$out/qd.txt" FS=' ' "$out/nvcc.txt" | tee "$out/table.txt"
echo "(matrixMul, hotspot: nvcc -fmad=false vs qd exact; matrixMul:fma, hotspot:fma: nvcc default vs qd fast math)"

if [ "${ORIGINALS:-1}" != 0 ] && [ -n "$nvcc" ]; then
	echo
	echo "== the samples as they are, with their own timing (wall clock or events, their sizes), for comparison"
	ref=$here/ref
	build_orig() { # name files...: build a sample as is
		local name=$1
		shift
		(cd "$work" && timeout 180 "$nvcc" -O3 -arch="$arch" -I"$ref/common" -o "orig_$name" "$@" >"$out/build-orig-$name.log" 2>&1)
	}
	build_orig matrixMul "$ref/matrixMul/matrixMul.cu" &
	build_orig transpose "$ref/transpose/transpose.cu" &
	build_orig histogram "$ref/histogram/histogram256.cu" "$ref/histogram/histogram64.cu" "$ref/histogram/histogram_gold.cpp" "$ref/histogram/main.cpp" &
	build_orig scan "$ref/scan/scan.cu" "$ref/scan/scan_gold.cpp" "$ref/scan/main.cpp" &
	build_orig sortingNetworks "$ref/sortingNetworks/bitonicSort.cu" "$ref/sortingNetworks/oddEvenMergeSort.cu" \
		"$ref/sortingNetworks/sortingNetworks_validate.cpp" "$ref/sortingNetworks/main.cpp" &
	wait
	for p in "matrixMul|Performance=" "transpose|transpose (simple copy|optimized)" "histogram|histogram256\\(\\) time" \
		"scan|scan, Throughput" "sortingNetworks|sortingNetworks-bitonic"; do
		IFS='|' read -r name pat <<<"$p"
		if [ ! -x "$work/orig_$name" ]; then
			echo "   $name: build failed (see $out/build-orig-$name.log)"
			continue
		fi
		(cd "$work" && timeout 120 "./orig_$name" >"$out/orig-$name.log" 2>&1)
		echo "   $name (exit $?): $(grep -E "$pat" "$out/orig-$name.log" | tr -s ' ' | paste -sd ';' -)"
	done
fi
rm -rf "$work"
