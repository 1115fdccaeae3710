// Package amdtools finds and runs the tools that check qd's AMD GPU code
// without an AMD GPU (docs/semantics.md#testing, docs/amd.md): clang, which compiles the C
// source of package codegen/csrc offline for gfx90a, gfx942 and gfx1100
// (and its CUDA flavour to PTX), and the check of the code objects it
// makes with debug/elf. CI installs the tools with .ci/install-amd-tools.sh.
// Where they are absent, tests skip with a notice, or fail when
// QD_REQUIRE_AMD_TOOLS=1. Only tests import it.
package amdtools
