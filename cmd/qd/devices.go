package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/quadrants-go/qd"
)

const devicesUsage = `usage: qd devices [-json]

List the backends qd finds: the CPU (always), each CUDA device with its
name, compute capability, multiprocessors, memory and driver version, and
AMD GPUs; for a backend that is unavailable, the reason. Where a backend has
several devices, which of them reach each other's memory directly (peer
access: copies between their arrays go device to device; between others the
driver stages them through host memory). Select a device with
qd.WithDevice(n). Exits 0 whether or not there is a GPU.

flags:
`

// devicesCmd is the devices verb. Usage errors exit 2; listing never fails.
func devicesCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("devices", stderr)
	asJSON := fs.Bool("json", false, "print a JSON array, one object per device or unavailable backend")
	if code, ok := parseFlags(fs, args, devicesUsage, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(fs, devicesUsage, stderr, fmt.Sprintf("qd devices: unexpected argument %q", fs.Arg(0)))
	}
	infos := qd.Devices()
	if *asJSON {
		return writeDevicesJSON(infos, stdout, stderr)
	}
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "BACKEND\t#\tDEVICE\tCOMPUTE\tCORES\tMEMORY\tDRIVER")
	for _, in := range infos {
		if in.Err != nil {
			fmt.Fprintf(w, "%s\t-\tunavailable: %s\n", in.Arch, unavailableReason(in))
			continue
		}
		cc, cores := "-", fmt.Sprint(in.Cores)
		switch in.Arch {
		case qd.CPU:
			cores += " threads"
		case qd.CUDA:
			cc = "sm_" + strings.ReplaceAll(in.ComputeCapability, ".", "")
			cores += " SMs"
		case qd.AMDGPU:
			cc = in.Target
			cores += " CUs"
		case qd.Vulkan:
			cc, cores = in.Target, "-"
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", in.Arch, in.Ordinal, in.Name, cc, cores, gib(in.MemoryBytes), in.Driver)
	}
	w.Flush()
	writeDetails(stdout, infos)
	writePeers(stdout, infos)
	fmt.Fprintf(stdout, "\nqd.Auto picks: %s\n", autoPick(infos))
	return 0
}

// writeDetails prints the further lines a backend gives about its devices
// (Vulkan: queue families, features, limits).
func writeDetails(w io.Writer, infos []qd.DeviceInfo) {
	for _, in := range infos {
		if in.Err != nil || len(in.Details) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s %d (%s):\n", in.Arch, in.Ordinal, in.Name)
		for _, d := range in.Details {
			fmt.Fprintf(w, "  %s\n", d)
		}
	}
}

// writePeers says, for each backend with several devices, which devices
// reach each other's memory directly.
func writePeers(w io.Writer, infos []qd.DeviceInfo) {
	count := map[qd.Arch]int{}
	for _, in := range infos {
		if in.Err == nil {
			count[in.Arch]++
		}
	}
	header := false
	for _, in := range infos {
		if in.Err != nil || count[in.Arch] < 2 {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\npeer access (copies between devices go directly; otherwise staged through host memory):")
			header = true
		}
		peers := "none"
		if len(in.Peers) > 0 {
			peers = strings.Trim(strings.ReplaceAll(fmt.Sprint(in.Peers), " ", ", "), "[]")
		}
		fmt.Fprintf(w, "  %s %d reaches: %s\n", in.Arch, in.Ordinal, peers)
	}
}

// autoPick names the backend qd.Init(qd.WithArch(qd.Auto)) takes: the
// first available GPU, else the CPU.
func autoPick(infos []qd.DeviceInfo) string {
	for _, a := range []qd.Arch{qd.CUDA, qd.AMDGPU, qd.Vulkan} {
		for _, in := range infos {
			if in.Arch == a && in.Err == nil && !in.Software {
				return fmt.Sprintf("%s (device %d: %s)", a, in.Ordinal, in.Name)
			}
		}
	}
	return "cpu (no GPU backend is available)"
}

// unavailableReason is the cause of in.Err without qd's own prefix.
func unavailableReason(in qd.DeviceInfo) string {
	msg := in.Err.Error()
	for _, p := range []string{"qd: the " + in.Arch.String() + " backend is unavailable: ", "qd: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}

func gib(b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
}

// deviceJSON is one entry of qd devices -json.
type deviceJSON struct {
	Backend           string `json:"backend"`
	Available         bool   `json:"available"`
	Ordinal           int    `json:"ordinal"`
	Name              string `json:"name,omitempty"`
	ComputeCapability string `json:"compute_capability,omitempty"`
	Target            string `json:"target,omitempty"`
	Cores             int    `json:"cores,omitempty"`
	MemoryBytes       uint64 `json:"memory_bytes,omitempty"`
	Driver            string `json:"driver,omitempty"`
	Peers             []int  `json:"peers,omitempty"` // devices of the backend it reaches directly
	Reason            string `json:"reason,omitempty"`
}

func writeDevicesJSON(infos []qd.DeviceInfo, stdout, stderr io.Writer) int {
	out := make([]deviceJSON, len(infos))
	for i, in := range infos {
		out[i] = deviceJSON{
			Backend: in.Arch.String(), Available: in.Err == nil, Ordinal: in.Ordinal,
			Name: in.Name, ComputeCapability: in.ComputeCapability, Target: in.Target, Cores: in.Cores,
			MemoryBytes: in.MemoryBytes, Driver: in.Driver, Peers: in.Peers,
		}
		if in.Err != nil {
			out[i].Reason = unavailableReason(in)
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(stderr, "qd devices:", err)
		return 1
	}
	return 0
}

// parseFlags parses args with fs. Help (-h, --help) prints the verb's usage
// to stdout and exits 0; a bad flag prints the error and the usage to
// stderr and exits 2. ok is true when the verb should go on.
func parseFlags(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (code int, ok bool) {
	fs.Usage = func() {} // the flag package's own call; printing is decided here
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, usage, stdout, stderr)
			return 0, false
		}
		fmt.Fprintln(stderr)
		printUsage(fs, usage, stderr, stderr)
		return 2, false
	}
	return 0, true
}

// usageError prints msg and the verb's usage to stderr and returns 2.
func usageError(fs *flag.FlagSet, usage string, stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "%s\n\n", msg)
	printUsage(fs, usage, stderr, stderr)
	return 2
}

func printUsage(fs *flag.FlagSet, usage string, w, stderr io.Writer) {
	fmt.Fprint(w, usage)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(stderr)
}
