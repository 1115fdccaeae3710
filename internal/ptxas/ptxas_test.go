package ptxas

import (
	"strings"
	"testing"
)

func TestAssembleRejectsBadPTX(t *testing.T) {
	tool, err := Find()
	if err != nil {
		t.Skip(err)
	}
	bad := ".version 6.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tfrob.f32;\n\tret;\n}\n"
	if err := tool.Assemble(t.TempDir(), "bad", tool.Archs[0], bad); err == nil || !strings.Contains(err.Error(), "frob") {
		t.Fatalf("ptxas accepted an unknown instruction: %v", err)
	}
	good := ".version 6.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"
	for _, sm := range tool.Archs {
		if err := tool.Assemble(t.TempDir(), "good", sm, Retarget(good, "7.8", sm)); err != nil {
			t.Error(err)
		}
	}
}

func TestRetarget(t *testing.T) {
	got := Retarget("//\n.version 6.0\n.target sm_70\n.address_size 64\n", "7.8", 90)
	if want := "//\n.version 7.8\n.target sm_90\n.address_size 64\n"; got != want {
		t.Fatalf("Retarget = %q, want %q", got, want)
	}
}
