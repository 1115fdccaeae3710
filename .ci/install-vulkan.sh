#!/usr/bin/env bash
# install-vulkan.sh [DIR] — make a Vulkan device available without a GPU, so
# that the Vulkan backend's tests run in CI (SPEC §5, docs/vulkan.md):
#
#   libvulkan1            the Khronos loader (libvulkan.so.1), which qd opens
#                         through purego;
#   mesa-vulkan-drivers   Mesa's lavapipe, a Vulkan 1.3 device that runs on
#                         the CPU (libvulkan_lvp.so);
#   spirv-tools           spirv-val, which checks every SPIR-V module the
#                         tests emit, as ptxas checks PTX;
#   libvulkan-dev         the C headers, against which a test checks that the
#                         Go copies of Vulkan's structs have C's layout.
#
# The packages and every dependency the machine lacks are downloaded from
# the machine's own apt sources and unpacked with dpkg -x into DIR (default:
# $QD_VULKAN_DIR, else $HOME/.cache/qd-vulkan). Nothing is installed
# system-wide and the system's apt configuration is left as it was, as in
# install-amd-tools.sh. Only lavapipe's driver manifest is written anew, in
# DIR, because the packaged one names the library by its system path.
#
# It prints, as its LAST line, the line that makes them found:
#     export PATH="DIR/usr/bin:$PATH" LD_LIBRARY_PATH="DIR/usr/lib/x86_64-linux-gnu:..." VK_DRIVER_FILES="DIR/lvp_icd.json" VK_ICD_FILENAMES="DIR/lvp_icd.json" QD_VULKAN_HEADERS="DIR/usr/include"
# With everything already unpacked in DIR it only prints that line.
#
# Usage from another script:   eval "$(.ci/install-vulkan.sh | tail -n 1)"
set -euo pipefail

dir=${1:-${QD_VULKAN_DIR:-$HOME/.cache/qd-vulkan}}
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
bin=$dir/usr/bin
lib=$dir/usr/lib/$multiarch
icd=$dir/lvp_icd.json
roots=(libvulkan1 libvulkan-dev mesa-vulkan-drivers spirv-tools)
inc=$dir/usr/include

announce() {
	echo "export PATH=\"$bin:\$PATH\" LD_LIBRARY_PATH=\"$lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\" VK_DRIVER_FILES=\"$icd\" VK_ICD_FILENAMES=\"$icd\" QD_VULKAN_HEADERS=\"$inc\""
}

# write_icd: lavapipe's manifest, naming the unpacked library (or the
# system's, when mesa-vulkan-drivers was installed already).
write_icd() {
	local so=$lib/libvulkan_lvp.so
	[[ -e $so ]] || so=/usr/lib/$multiarch/libvulkan_lvp.so
	[[ -e $so ]] || return 1
	mkdir -p "$dir"
	cat >"$icd" <<JSON
{
    "file_format_version": "1.0.0",
    "ICD": {
        "library_path": "$so",
        "api_version": "1.3.230"
    }
}
JSON
}

# ready: a loader, lavapipe and a spirv-val that runs (unpacked here, or the
# system's).
ready() {
	local val=$bin/spirv-val
	[[ -x $val ]] || val=$(command -v spirv-val) || return 1
	"$val" --version >/dev/null 2>&1 || return 1
	[[ -e $lib/libvulkan.so.1 || -e /usr/lib/$multiarch/libvulkan.so.1 ]] || return 1
	[[ -e $inc/vulkan/vulkan_core.h ]] || { [[ -e /usr/include/vulkan/vulkan_core.h ]] && inc=/usr/include; } || return 1
	write_icd
}

if ready; then
	announce
	exit 0
fi

command -v apt-get >/dev/null || { echo "install-vulkan: apt-get not found (Debian or Ubuntu needed)" >&2; exit 1; }

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

echo "install-vulkan: apt-get update (private lists)" >&2
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
	echo "install-vulkan: downloading ${need[*]}" >&2
	(cd "$tmp" && "${apt[@]}" download "${need[@]}" >&2)
	for deb in "$tmp"/*.deb; do
		dpkg -x "$deb" "$dir"
	done
fi
if ! ready; then
	echo "install-vulkan: no spirv-val that runs, no libvulkan.so.1, no Vulkan headers or no libvulkan_lvp.so (looked in $dir and the system)" >&2
	exit 1
fi
announce
