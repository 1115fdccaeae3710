package vk

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"
)

// allStructs are the structures of structs.go, each checked against the C
// compiler's layout of its Vk namesake.
var allStructs = []any{
	ApplicationInfo{}, InstanceCreateInfo{}, DeviceQueueCreateInfo{}, DeviceCreateInfo{},
	Extent3D{}, QueueFamilyProperties{}, MemoryType{}, MemoryHeap{}, PhysicalDeviceMemoryProperties{},
	BufferCreateInfo{}, MemoryRequirements{}, MemoryAllocateInfo{}, MemoryAllocateFlagsInfo{},
	BufferDeviceAddressInfo{}, ShaderModuleCreateInfo{}, PushConstantRange{}, PipelineLayoutCreateInfo{},
	PipelineShaderStageCreateInfo{}, ComputePipelineCreateInfo{}, CommandPoolCreateInfo{},
	CommandBufferAllocateInfo{}, CommandBufferBeginInfo{}, SemaphoreTypeCreateInfo{}, SemaphoreCreateInfo{},
	TimelineSemaphoreSubmitInfo{}, SubmitInfo{}, SemaphoreWaitInfo{}, SemaphoreSignalInfo{}, BufferCopy{},
	MemoryBarrier{}, PhysicalDeviceFeatures{}, PhysicalDeviceFeatures2{}, PhysicalDeviceVulkan11Features{},
	PhysicalDeviceVulkan12Features{}, PhysicalDeviceVulkan13Features{}, PhysicalDeviceShaderAtomicFloatFeaturesEXT{},
	PhysicalDeviceLimits{}, PhysicalDeviceSparseProperties{}, PhysicalDeviceProperties{}, PhysicalDeviceProperties2{},
	PhysicalDeviceSubgroupProperties{}, ExtensionProperties{}, QueryPoolCreateInfo{}, MappedMemoryRange{},
	ConformanceVersion{}, PhysicalDeviceDriverProperties{},
}

// TestLayoutMatchesC compiles a C program that prints the offset of every
// field and the size of every structure, and compares them with Go's. It
// needs a C compiler and Vulkan's headers (QD_VULKAN_HEADERS, the include
// folder .ci/install-vulkan.sh unpacks); QD_REQUIRE_VULKAN=1 makes their
// absence a failure.
func TestLayoutMatchesC(t *testing.T) {
	inc := os.Getenv("QD_VULKAN_HEADERS")
	cc, ccErr := exec.LookPath("cc")
	if inc == "" || ccErr != nil {
		if os.Getenv("QD_REQUIRE_VULKAN") == "1" {
			t.Fatalf("QD_REQUIRE_VULKAN=1 but no C compiler or no QD_VULKAN_HEADERS (%v)", ccErr)
		}
		t.Skip("no C compiler or QD_VULKAN_HEADERS unset: the layout is not compared with C's")
	}
	var src, want strings.Builder
	src.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include <vulkan/vulkan_core.h>\nint main(void){\n")
	for _, s := range allStructs {
		rt := reflect.TypeOf(s)
		cname := "Vk" + rt.Name()
		for i := range rt.NumField() {
			f := rt.Field(i)
			r := []rune(f.Name)
			r[0] = unicode.ToLower(r[0])
			fmt.Fprintf(&src, "printf(\"%s.%s %%zu\\n\", offsetof(%s, %s));\n", rt.Name(), f.Name, cname, string(r))
			fmt.Fprintf(&want, "%s.%s %d\n", rt.Name(), f.Name, f.Offset)
		}
		fmt.Fprintf(&src, "printf(\"%s %%zu\\n\", sizeof(%s));\n", rt.Name(), cname)
		fmt.Fprintf(&want, "%s %d\n", rt.Name(), rt.Size())
	}
	src.WriteString("return 0;}\n")
	dir := t.TempDir()
	c := filepath.Join(dir, "layout.c")
	if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "layout")
	if out, err := exec.Command(cc, "-I", inc, "-o", bin, c).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	got, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(want.String(), "\n")
	for i := range w {
		if i >= len(g) || g[i] != w[i] {
			t.Errorf("C says %q, Go %q", at(g, i), w[i])
		}
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}
