package codegencheck

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/spirv"
	"github.com/quadrants-go/qd/internal/lower"
)

// Every kernel the tests run (checkedKernels) is compiled to SPIR-V, with
// and without index checks and float atomics, and every module is
// validated by spirv-val for Vulkan 1.2, so SPIR-V that a driver could
// reject is caught without a Vulkan device (docs/vulkan.md). spirv-val
// comes from .ci/install-vulkan.sh; without it the test skips with a
// notice, and with QD_REQUIRE_VULKAN=1 (set by .ci/run) it fails.
// Constructs the generator does not compile yet are counted in the log,
// by what they are.

func TestSpirvValSuiteKernels(t *testing.T) {
	val, err := exec.LookPath("spirv-val")
	if err != nil {
		if os.Getenv("QD_REQUIRE_VULKAN") == "1" {
			t.Fatal("QD_REQUIRE_VULKAN=1 but spirv-val is not on PATH (.ci/install-vulkan.sh unpacks it)")
		}
		t.Skip("spirv-val not found (.ci/install-vulkan.sh unpacks it): SPIR-V is not validated")
	}
	dir := t.TempDir()
	// The check must be able to fail.
	bad := filepath.Join(dir, "bad.spv")
	if err := os.WriteFile(bad, spirv.Bytes([]uint32{0x07230203, spirv.Version, 0, 1, 0, 1<<16 | 9999}), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(val, "--target-env", "vulkan1.2", bad).CombinedOutput(); err == nil {
		t.Fatalf("spirv-val accepted an unknown instruction: %s", out)
	}

	type module struct {
		name  string
		words []uint32
	}
	var modules []module
	unsupported := map[string]int{}
	compiled := 0
	for _, k := range checkedKernels(t) {
		plan, err := lower.Lower(k)
		if err != nil {
			continue // rejected kernels: the suite's own business
		}
		// Block loops whose size the launch computes are generated for a
		// size: 48 in the first set (a partial last chunk of the
		// collectives), 256 in the second.
		for _, opts := range []spirv.Options{{BlockSize: 48}, {Bounds: true, AtomicFloatAdd32: true, AtomicFloatAdd64: true, SubgroupReduce: true, ExactFMA: true, BlockSize: 256}} {
			kern, err := spirv.Generate(plan, opts)
			if errors.Is(err, spirv.ErrUnsupported) {
				msg := err.Error()
				if i := strings.LastIndex(msg, ": "); i >= 0 {
					msg = msg[i+2:]
				}
				unsupported[msg]++
				break
			}
			if err != nil {
				t.Errorf("%s: %v", k.Name, err)
				break
			}
			compiled++
			for i, e := range kern.Entries {
				modules = append(modules, module{fmt.Sprintf("%s_t%d_b%v", k.Name, i, opts.Bounds), e.Words})
			}
		}
	}
	var keys []string
	for k := range unsupported {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("not compiled yet: %d kernels with %s", unsupported[k], k)
	}
	t.Logf("%d kernel compilations, %d modules to validate", compiled, len(modules))

	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan module)
	fails := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range work {
				path := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(m.name)+".spv")
				if err := os.WriteFile(path, spirv.Bytes(m.words), 0o644); err != nil {
					t.Error(err)
					continue
				}
				out, err := exec.Command(val, "--target-env", "vulkan1.2", path).CombinedOutput()
				if err != nil {
					mu.Lock()
					fails++
					if fails <= 10 {
						t.Errorf("spirv-val %s: %v\n%s", m.name, err, out)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, m := range modules {
		work <- m
	}
	close(work)
	wg.Wait()
	if fails > 10 {
		t.Errorf("... %d modules failed in all", fails)
	}
}
