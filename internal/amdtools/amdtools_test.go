package amdtools

import (
	"os"
	"strings"
	"testing"
)

// elfHeader is a minimal 64-bit little-endian ELF header of the given
// machine, OS ABI and e_flags (debug/elf reads it with no sections).
func elfHeader(machine uint16, osabi byte, flags uint32) []byte {
	b := make([]byte, 64)
	copy(b, "\x7fELF")
	b[4], b[5], b[6], b[7] = 2, 1, 1, osabi // ELFCLASS64, little-endian, version 1
	b[16] = 3                               // ET_DYN
	b[18], b[19] = byte(machine), byte(machine>>8)
	b[20] = 1 // e_version
	b[0x30], b[0x31], b[0x32], b[0x33] = byte(flags), byte(flags>>8), byte(flags>>16), byte(flags>>24)
	b[0x34] = 64 // e_ehsize
	return b
}

func TestCheckCodeObject(t *testing.T) {
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		co   []byte
		arch string
		want string
	}{
		{"not ELF", []byte("hello"), "gfx90a", "not an ELF file"},
		{"this test binary", self, "gfx90a", "want EM_AMDGPU"},
		{"wrong OS ABI", elfHeader(224, 0, 0x3f), "gfx90a", "OS ABI 0"},
		{"another processor", elfHeader(224, 64, 0x4c), "gfx90a", "e_flags machine 0x4c, want 0x3f"},
		{"unknown processor", elfHeader(224, 64, 0x3f), "gfx9999", "no e_flags value known"},
		{"no symbols", elfHeader(224, 64, 0x541), "gfx1100", "symbols"},
	} {
		err := CheckCodeObject(c.co, c.arch, []string{"k_t0"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func TestFindClang(t *testing.T) {
	c, err := FindClang()
	if err != nil {
		if Required() {
			t.Fatalf("%s=1: %v", RequireEnv, err)
		}
		t.Skipf("no clang: %v", err)
	}
	if c.Version < minClang {
		t.Errorf("clang %d found, older than %d", c.Version, minClang)
	}
	// A compile error carries clang's message and the numbered source.
	_, err = c.CompileAMD(t.TempDir(), "bad", "gfx90a", "int x = undeclared_name;\n", nil)
	if err == nil || !strings.Contains(err.Error(), "undeclared_name") || !strings.Contains(err.Error(), "    1 ") {
		t.Errorf("a bad source: %v", err)
	}
}
