#!/usr/bin/env bash
# install-amd-tools.sh [DIR] — make the AMD GPU tools available without an
# AMD GPU, so that the C source the tests emit is compiled for AMD targets
# (SPEC §8; docs/amd.md):
#
#   clang-19 + lld-19   compiles the source offline, header-free, for gfx90a,
#                       gfx942 and gfx1100 (and its CUDA flavour to PTX);
#   libamdhip64-5       Debian's ROCm 5.2 HIP runtime, whose hiprtc the HIP
#                       backend calls (the real compile path), and which
#                       answers "no device" on a machine without one.
#
# The packages and every dependency the machine lacks are downloaded from
# the machine's own apt sources and unpacked with dpkg -x into DIR
# (default: $QD_AMD_TOOLS_DIR, else $HOME/.cache/qd-amd-tools). Nothing is
# installed system-wide and the system's apt configuration is left as it
# was: the package lists and the apt cache live in a temporary folder given
# to apt through -o options, as in install-ptxas.sh.
#
# It prints, as its LAST line, the line that makes the tools found:
#     export PATH="DIR/usr/lib/llvm-19/bin:$PATH" LD_LIBRARY_PATH="DIR/usr/lib/x86_64-linux-gnu:..." QD_AMD_TOOLS="DIR"
# (LD_LIBRARY_PATH only reaches libraries the system lacks: only those are
# unpacked). With the tools already unpacked in DIR it only prints that line.
#
# Usage from another script:   eval "$(.ci/install-amd-tools.sh | tail -n 1)"
set -euo pipefail

dir=${1:-${QD_AMD_TOOLS_DIR:-$HOME/.cache/qd-amd-tools}}
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
bin=$dir/usr/lib/llvm-19/bin
lib=$dir/usr/lib/$multiarch
roots=(clang-19 lld-19 libamdhip64-5 libhiprtc-builtins5)

announce() {
	echo "export PATH=\"$bin:\$PATH\" LD_LIBRARY_PATH=\"$lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\" QD_AMD_TOOLS=\"$dir\""
}

# ready: a clang 19 (unpacked here, or the system's) that runs, and a
# libamdhip64 (unpacked here, or the system's).
ready() {
	local clang=$bin/clang
	[[ -x $clang ]] || clang=$(command -v clang-19) || return 1
	[[ -e $lib/libamdhip64.so.5 || -e /usr/lib/$multiarch/libamdhip64.so.5 ]] &&
		LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$clang" --version >/dev/null 2>&1
}

if ready; then
	announce
	exit 0
fi

command -v apt-get >/dev/null || { echo "install-amd-tools: apt-get not found (Debian or Ubuntu needed)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial"

apt=(apt-get -q
	-o "Dir::State::Lists=$tmp/lists"
	-o "Dir::Cache=$tmp/cache"
	-o "APT::Sandbox::User=root")
cache=(apt-cache
	-o "Dir::State::Lists=$tmp/lists"
	-o "Dir::Cache=$tmp/cache")

echo "install-amd-tools: apt-get update (private lists)" >&2
"${apt[@]}" update >&2

# The dependency closure of the roots, less what the machine has installed.
mapfile -t closure < <("${cache[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
	--no-breaks --no-replaces --no-enhances "${roots[@]}" | grep -v '^[ <]' | sort -u)
need=()
for p in "${closure[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		need+=("$p")
	fi
done
mkdir -p "$dir"
if ((${#need[@]})); then
	echo "install-amd-tools: downloading ${need[*]}" >&2
	(cd "$tmp" && "${apt[@]}" download "${need[@]}" >&2)
	for deb in "$tmp"/*.deb; do
		dpkg -x "$deb" "$dir"
	done
fi
if ! ready; then
	echo "install-amd-tools: no clang 19 that runs, or no libamdhip64.so.5 (looked in $dir and the system)" >&2
	exit 1
fi
announce
