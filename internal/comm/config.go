package comm

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config says how a process joins its group.
type Config struct {
	Rank, Size int
	LocalRank  int    // the process's number on its host: which GPU it takes
	Addr       string // host:port of rank 0's rendezvous (MASTER_ADDR:MASTER_PORT)
	// Token must be the same in every member (QD_COMM_TOKEN; qd run sets
	// a fresh one per run), so that a process of another run that reaches
	// the same address is refused rather than joined.
	Token string
	// JoinTimeout bounds the rendezvous: every rank must arrive within it.
	JoinTimeout time.Duration
	// Heartbeat is how often members tell rank 0 (and rank 0 tells them)
	// that they are alive; a member silent for PeerTimeout is taken for
	// dead and the group breaks. A process that exits or is killed closes
	// its connections, which breaks the group at once.
	Heartbeat, PeerTimeout time.Duration
	// OpTimeout bounds each wait for a peer's data in the CPU transport
	// (a peer alive but never making the matching call); 0 is
	// DefaultOpTimeout, a negative one no bound.
	OpTimeout time.Duration
}

// Defaults of Config's durations.
const (
	DefaultJoinTimeout = 5 * time.Minute
	DefaultHeartbeat   = time.Second
	DefaultPeerTimeout = 30 * time.Second
	DefaultOpTimeout   = 10 * time.Minute
)

// Environment variables read by FromEnv: torchrun's names, plus qd's token.
const (
	EnvRank       = "RANK"
	EnvWorldSize  = "WORLD_SIZE"
	EnvLocalRank  = "LOCAL_RANK"
	EnvMasterAddr = "MASTER_ADDR"
	EnvMasterPort = "MASTER_PORT"
	EnvToken      = "QD_COMM_TOKEN"
)

// ErrConfig is matched by every error about a group's configuration.
var ErrConfig = errors.New("bad process-group configuration")

// FromEnv reads a Config from the environment (lookup is os.LookupEnv in
// use, a map in tests). With none of RANK, WORLD_SIZE, MASTER_ADDR and
// MASTER_PORT set, the process is a group of one on its own: a program
// run without a launcher works unchanged. Some set and others not is an
// error naming the missing ones.
func FromEnv(lookup func(string) (string, bool)) (Config, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	c := Config{Size: 1}
	names := []string{EnvRank, EnvWorldSize, EnvMasterAddr, EnvMasterPort}
	vals := map[string]string{}
	var missing []string
	for _, n := range names {
		if v, ok := lookup(n); ok && v != "" {
			vals[n] = v
		} else {
			missing = append(missing, n)
		}
	}
	if tok, ok := lookup(EnvToken); ok {
		c.Token = tok
	}
	if len(missing) == len(names) {
		if v, ok := lookup(EnvLocalRank); ok && v != "" {
			if _, err := strconv.Atoi(v); err != nil {
				return c, fmt.Errorf("%w: %s=%q is not a number", ErrConfig, EnvLocalRank, v)
			}
		}
		return c, nil
	}
	if len(missing) > 0 {
		return c, fmt.Errorf("%w: the environment sets %s but not %s (a launcher such as `qd run -n N` or torchrun sets all of them)", ErrConfig, strings.Join(setOf(names, missing), ", "), strings.Join(missing, ", "))
	}
	var err error
	num := func(name string) int {
		v := vals[name]
		if name == EnvLocalRank {
			v, _ = lookup(name)
		}
		n, e := strconv.Atoi(strings.TrimSpace(v))
		if e != nil && err == nil {
			err = fmt.Errorf("%w: %s=%q is not a number", ErrConfig, name, v)
		}
		return n
	}
	c.Rank, c.Size = num(EnvRank), num(EnvWorldSize)
	if v, ok := lookup(EnvLocalRank); ok && v != "" {
		c.LocalRank = num(EnvLocalRank)
	} else {
		c.LocalRank = c.Rank
	}
	port := num(EnvMasterPort)
	if err != nil {
		return c, err
	}
	if port < 1 || port > 65535 {
		return c, fmt.Errorf("%w: %s=%d is not a TCP port (1 to 65535)", ErrConfig, EnvMasterPort, port)
	}
	c.Addr = net.JoinHostPort(vals[EnvMasterAddr], strconv.Itoa(port))
	return c, c.Check()
}

func setOf(all, missing []string) []string {
	var out []string
	for _, n := range all {
		found := false
		for _, m := range missing {
			found = found || m == n
		}
		if !found {
			out = append(out, n)
		}
	}
	return out
}

// Check reports what is wrong with c, in the environment's terms.
func (c Config) Check() error {
	switch {
	case c.Size < 1:
		return fmt.Errorf("%w: the group's size (%s) is %d; it must be at least 1", ErrConfig, EnvWorldSize, c.Size)
	case c.Rank < 0 || c.Rank >= c.Size:
		return fmt.Errorf("%w: rank %d (%s) is outside a group of %d (ranks 0 to %d)", ErrConfig, c.Rank, EnvRank, c.Size, c.Size-1)
	case c.LocalRank < 0:
		return fmt.Errorf("%w: local rank %d (%s) is negative", ErrConfig, c.LocalRank, EnvLocalRank)
	case c.Size > 1 && c.Addr == "":
		return fmt.Errorf("%w: a group of %d needs the address of rank 0's rendezvous (%s and %s)", ErrConfig, c.Size, EnvMasterAddr, EnvMasterPort)
	}
	return nil
}

// withDefaults fills c's zero durations.
func (c Config) withDefaults() Config {
	if c.JoinTimeout <= 0 {
		c.JoinTimeout = DefaultJoinTimeout
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	if c.PeerTimeout <= 0 {
		c.PeerTimeout = DefaultPeerTimeout
	}
	if c.PeerTimeout < 2*c.Heartbeat {
		c.PeerTimeout = 2 * c.Heartbeat
	}
	return c
}
