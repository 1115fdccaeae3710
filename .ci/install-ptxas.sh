#!/usr/bin/env bash
# install-ptxas.sh [DIR] — make NVIDIA's ptxas available without a GPU, so
# that the PTX the tests emit can be assembled (SPEC §8).
#
# Debian ships ptxas in the non-free package nvidia-cuda-toolkit. This script
# takes the machine's existing apt source, adds "contrib non-free" to its
# Components, downloads that one .deb (about 84 MB) and unpacks it with
# dpkg -x into DIR (default: $QD_PTXAS_DIR, else $HOME/.cache/qd-ptxas).
# Nothing is installed system-wide and the system's apt configuration is left
# as it was: the amended source, the package lists and the apt cache all live
# in a temporary folder given to apt through -o options (so there is nothing
# to restore, even when the script is interrupted).
#
# It prints the line that puts ptxas on PATH,
#     export PATH="DIR/usr/bin:$PATH"
# and appends DIR/usr/bin to $GITHUB_PATH when that variable is set. With
# ptxas already unpacked in DIR it only prints that line.
#
# Usage from another script:   eval "$(.ci/install-ptxas.sh | tail -n 1)"
set -euo pipefail

dir=${1:-${QD_PTXAS_DIR:-$HOME/.cache/qd-ptxas}}
bin=$dir/usr/bin

announce() {
	if [[ -n ${GITHUB_PATH:-} ]]; then
		echo "$bin" >>"$GITHUB_PATH"
	fi
	echo "export PATH=\"$bin:\$PATH\""
}

if [[ -x $bin/ptxas ]] && "$bin/ptxas" --version >/dev/null 2>&1; then
	announce
	exit 0
fi

command -v apt-get >/dev/null || { echo "install-ptxas: apt-get not found (Debian or Ubuntu needed)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/parts" "$tmp/lists/partial" "$tmp/cache/archives/partial"
: >"$tmp/sources.list"

# The existing sources, with contrib and non-free added to the Components
# (deb822 .sources files) or to each "deb" line (one-line format).
found=0
for f in /etc/apt/sources.list.d/*.sources; do
	[[ -f $f ]] || continue
	sed -E '/^Components:/{/non-free([[:space:]]|$)/!s/$/ contrib non-free/}' "$f" >"$tmp/parts/$(basename "$f")"
	found=1
done
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
	[[ -f $f ]] || continue
	sed -E '/^[[:space:]]*deb[[:space:]]/{/[[:space:]]non-free([[:space:]]|$)/!s/[[:space:]]*$/ contrib non-free/}' "$f" >>"$tmp/sources.list"
	found=1
done
[[ $found == 1 ]] || { echo "install-ptxas: no apt source found under /etc/apt" >&2; exit 1; }

apt=(apt-get -q
	-o "Dir::Etc::SourceList=$tmp/sources.list"
	-o "Dir::Etc::SourceParts=$tmp/parts"
	-o "Dir::State::Lists=$tmp/lists"
	-o "Dir::Cache=$tmp/cache"
	-o "APT::Sandbox::User=root")

echo "install-ptxas: apt-get update (contrib non-free added, private lists)" >&2
"${apt[@]}" update >&2
echo "install-ptxas: downloading nvidia-cuda-toolkit" >&2
(cd "$tmp" && "${apt[@]}" download nvidia-cuda-toolkit >&2)

mkdir -p "$dir"
dpkg -x "$tmp"/nvidia-cuda-toolkit_*.deb "$dir"
if ! "$bin/ptxas" --version >&2; then
	echo "install-ptxas: $bin/ptxas does not run" >&2
	exit 1
fi
announce
