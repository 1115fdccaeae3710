package comm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

type member struct {
	g *Group
	m *Mesh
}

// joinAll starts size members of one group in this process.
func joinAll(t *testing.T, size int, tweak func(*Config)) []member {
	t.Helper()
	addr := freeAddr(t)
	out := make([]member, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Go(func() {
			cfg := Config{Rank: r, Size: size, Addr: addr, Token: "test", JoinTimeout: 20 * time.Second, Heartbeat: 50 * time.Millisecond, PeerTimeout: 2 * time.Second, OpTimeout: 20 * time.Second}
			if tweak != nil {
				tweak(&cfg)
			}
			ln, port, err := Listen()
			if err != nil {
				errs[r] = err
				return
			}
			g, err := Join(context.Background(), cfg, JoinSpec{Transport: "tcp", DataPort: port})
			if err != nil {
				ln.Close()
				errs[r] = err
				return
			}
			m, err := NewMesh(context.Background(), g, ln)
			if err != nil {
				errs[r] = err
				return
			}
			out[r] = member{g, m}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, mb := range out {
			mb.m.Close()
			mb.g.Close()
		}
	})
	return out
}

func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// onAll runs f on every member at once.
func onAll(ms []member, f func(r int, m *Mesh) error) error {
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for r, mb := range ms {
		wg.Go(func() { errs[r] = f(r, mb.m) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func TestCollectivesFloat64(t *testing.T) {
	for _, size := range []int{1, 2, 3, 4} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			ms := joinAll(t, size, nil)
			const count = 1001 // not a multiple of any size: uneven ring parts
			in := func(r, i int) float64 { return float64((r+2)*(i%17+1)) * 0.5 }
			for _, op := range []Op{Sum, Prod, Max, Min, Avg} {
				for _, inPlace := range []bool{false, true} {
					outs := make([][]float64, size)
					err := onAll(ms, func(r int, m *Mesh) error {
						src := make([]float64, count)
						for i := range src {
							src[i] = in(r, i)
						}
						dst := make([]float64, count)
						if inPlace {
							dst = src
						}
						outs[r] = dst
						return m.Exec([]HostCall{{Call: Call{Kind: AllReduce, Count: count, DType: Float64, Op: op, Name: "AllReduceOn"}, SendBytes: bytesOf(src), RecvBytes: bytesOf(dst)}})
					})
					if err != nil {
						t.Fatal(err)
					}
					for i := range count {
						want := in(0, i)
						for r := 1; r < size; r++ {
							switch op {
							case Sum, Avg:
								want += in(r, i)
							case Prod:
								want *= in(r, i)
							case Max:
								want = max(want, in(r, i))
							case Min:
								want = min(want, in(r, i))
							}
						}
						if op == Avg {
							want /= float64(size)
						}
						for r := range size {
							if got := outs[r][i]; math.Abs(got-want) > 1e-9*math.Abs(want) || math.Float64bits(got) != math.Float64bits(outs[0][i]) {
								t.Fatalf("%v in place %v: rank %d element %d = %v, want %v (rank 0 %v)", op, inPlace, r, i, got, want, outs[0][i])
							}
						}
					}
				}
			}
		})
	}
}

func TestCollectivesInt(t *testing.T) {
	const size, count = 3, 10
	ms := joinAll(t, size, nil)
	// int8 wraps, Avg truncates toward zero.
	outs := make([][]int8, size)
	err := onAll(ms, func(r int, m *Mesh) error {
		src := make([]int8, count)
		for i := range src {
			src[i] = int8(100 - 50*r - i)
		}
		outs[r] = make([]int8, count)
		return m.Exec([]HostCall{{Call: Call{Kind: AllReduce, Count: count, DType: Int8, Op: Sum}, SendBytes: bytesOf(src), RecvBytes: bytesOf(outs[r])}})
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range count {
		want := int8(0)
		for r := range size {
			want += int8(100 - 50*r - i)
		}
		for r := range size {
			if outs[r][i] != want {
				t.Fatalf("int8 Sum: rank %d element %d = %d, want %d", r, i, outs[r][i], want)
			}
		}
	}
	avg := make([][]int32, size)
	err = onAll(ms, func(r int, m *Mesh) error {
		src := []int32{int32(-1 - r), int32(r), 7}
		avg[r] = make([]int32, 3)
		return m.Exec([]HostCall{{Call: Call{Kind: AllReduce, Count: 3, DType: Int32, Op: Avg}, SendBytes: bytesOf(src), RecvBytes: bytesOf(avg[r])}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{-6 / 3, 3 / 3, 7}; fmt.Sprint(avg[1]) != fmt.Sprint(want) {
		t.Fatalf("int32 Avg = %v, want %v", avg[1], want)
	}
}

func TestRootedAndGathers(t *testing.T) {
	const size, count = 4, 6
	ms := joinAll(t, size, nil)
	val := func(r, i int) float32 { return float32(10*r + i) }
	for root := range size {
		bc := make([][]float32, size)
		red := make([][]float32, size)
		err := onAll(ms, func(r int, m *Mesh) error {
			src := make([]float32, count)
			for i := range src {
				src[i] = val(r, i)
			}
			bc[r] = make([]float32, count)
			red[r] = make([]float32, count)
			return m.Exec([]HostCall{
				{Call: Call{Kind: Broadcast, Count: count * 4, DType: Uint8, Peer: root}, SendBytes: bytesOf(src), RecvBytes: bytesOf(bc[r])},
				{Call: Call{Kind: Reduce, Count: count, DType: Float32, Op: Sum, Peer: root}, SendBytes: bytesOf(src), RecvBytes: bytesOf(red[r])},
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range count {
			var sum float32
			for r := range size {
				sum += val(r, i)
			}
			if red[root][i] != sum {
				t.Fatalf("Reduce to %d: element %d = %v, want %v", root, i, red[root][i], sum)
			}
			for r := range size {
				if bc[r][i] != val(root, i) {
					t.Fatalf("Broadcast from %d: rank %d element %d = %v, want %v", root, r, i, bc[r][i], val(root, i))
				}
				if r != root && red[r][i] != 0 {
					t.Fatalf("Reduce to %d wrote rank %d's buffer", root, r)
				}
			}
		}
	}
	ag := make([][]float32, size)
	rs := make([][]float32, size)
	err := onAll(ms, func(r int, m *Mesh) error {
		mine := make([]float32, count)
		all := make([]float32, count*size)
		for i := range mine {
			mine[i] = val(r, i)
		}
		for i := range all {
			all[i] = val(r, i)
		}
		ag[r] = make([]float32, count*size)
		rs[r] = make([]float32, count)
		if err := m.Exec([]HostCall{{Call: Call{Kind: AllGather, Count: count * 4, DType: Uint8}, SendBytes: bytesOf(mine), RecvBytes: bytesOf(ag[r])}}); err != nil {
			return err
		}
		return m.Exec([]HostCall{{Call: Call{Kind: ReduceScatter, Count: count, DType: Float32, Op: Max}, SendBytes: bytesOf(all), RecvBytes: bytesOf(rs[r])}})
	})
	if err != nil {
		t.Fatal(err)
	}
	for r := range size {
		for p := range size {
			for i := range count {
				if ag[r][p*count+i] != val(p, i) {
					t.Fatalf("AllGather: rank %d part %d element %d = %v, want %v", r, p, i, ag[r][p*count+i], val(p, i))
				}
			}
		}
		for i := range count {
			if want := val(size-1, r*count+i); rs[r][i] != want {
				t.Fatalf("ReduceScatter Max: rank %d element %d = %v, want %v", r, i, rs[r][i], want)
			}
		}
	}
}

// TestSendRecvBothWays is a halo exchange: every rank sends to both
// neighbours before it receives, with messages far over the sockets'
// buffers, in one group and in separate calls.
func TestSendRecvBothWays(t *testing.T) {
	const size, count = 3, 4 << 20
	ms := joinAll(t, size, nil)
	for _, grouped := range []bool{true, false} {
		got := make([][2][]int32, size)
		err := onAll(ms, func(r int, m *Mesh) error {
			l, rt := (r+size-1)%size, (r+1)%size
			out := make([]int32, count)
			for i := range out {
				out[i] = int32(r*count + i)
			}
			got[r] = [2][]int32{make([]int32, count), make([]int32, count)}
			calls := []HostCall{
				{Call: Call{Kind: Send, Count: count * 4, DType: Uint8, Peer: l}, SendBytes: bytesOf(out)},
				{Call: Call{Kind: Send, Count: count * 4, DType: Uint8, Peer: rt}, SendBytes: bytesOf(out)},
				{Call: Call{Kind: Recv, Count: count * 4, DType: Uint8, Peer: l}, RecvBytes: bytesOf(got[r][0])},
				{Call: Call{Kind: Recv, Count: count * 4, DType: Uint8, Peer: rt}, RecvBytes: bytesOf(got[r][1])},
			}
			if grouped {
				return m.Exec(calls)
			}
			for _, c := range calls {
				if err := m.Exec([]HostCall{c}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for r := range size {
			l, rt := (r+size-1)%size, (r+1)%size
			for i := 0; i < count; i += 4099 {
				if got[r][0][i] != int32(l*count+i) || got[r][1][i] != int32(rt*count+i) {
					t.Fatalf("grouped %v: rank %d element %d: from left %d, from right %d", grouped, r, i, got[r][0][i], got[r][1][i])
				}
			}
		}
	}
}

func TestSendToSelf(t *testing.T) {
	ms := joinAll(t, 2, nil)
	err := onAll(ms, func(r int, m *Mesh) error {
		src, dst := []int64{int64(r + 40)}, []int64{0}
		if err := m.Exec([]HostCall{
			{Call: Call{Kind: Send, Count: 8, DType: Uint8, Peer: r}, SendBytes: bytesOf(src)},
			{Call: Call{Kind: Recv, Count: 8, DType: Uint8, Peer: r}, RecvBytes: bytesOf(dst)},
		}); err != nil {
			return err
		}
		if dst[0] != int64(r+40) {
			return fmt.Errorf("rank %d got %d from itself", r, dst[0])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestMismatchedCalls(t *testing.T) {
	ms := joinAll(t, 2, nil)
	err := onAll(ms, func(r int, m *Mesh) error {
		buf := make([]float32, 8)
		kind := AllReduce
		if r == 1 {
			kind = Broadcast
		}
		return m.Exec([]HostCall{{Call: Call{Kind: kind, Count: 8, DType: Float32, Name: kind.String() + "On"}, SendBytes: bytesOf(buf), RecvBytes: bytesOf(buf)}})
	})
	if err == nil || !errors.Is(err, ErrBroken) || !strings.Contains(err.Error(), "calls out of step") {
		t.Fatalf("mismatched calls: %v, want an ErrBroken saying the calls are out of step", err)
	}
	// The group is broken for everyone: later calls fail at once.
	if err := ms[0].m.Exec([]HostCall{{Call: Call{Kind: AllReduce, Count: 1, DType: Float32}, SendBytes: make([]byte, 4), RecvBytes: make([]byte, 4)}}); !errors.Is(err, ErrBroken) {
		t.Fatalf("a call after the break: %v, want ErrBroken", err)
	}
}

// kill ends member mb as a killed process would: its connections close,
// with no goodbye.
func kill(mb member) {
	mb.g.mu.Lock()
	mb.g.closed = true
	mb.g.mu.Unlock()
	for _, l := range mb.g.links {
		if l != nil {
			l.c.Close()
		}
	}
	mb.m.closeConns()
}

func TestMemberDiesMidCollective(t *testing.T) {
	for _, victim := range []int{0, 2} {
		t.Run("rank"+strconv.Itoa(victim), func(t *testing.T) {
			ms := joinAll(t, 3, nil)
			start := time.Now()
			err := onAll(ms, func(r int, m *Mesh) error {
				if r == victim {
					time.Sleep(100 * time.Millisecond)
					kill(ms[r])
					return nil
				}
				buf := make([]float32, 1<<10)
				return m.Exec([]HostCall{{Call: Call{Kind: AllReduce, Count: len(buf), DType: Float32, Name: "AllReduceOn"}, SendBytes: bytesOf(buf), RecvBytes: bytesOf(buf)}})
			})
			if err == nil || !errors.Is(err, ErrBroken) {
				t.Fatalf("survivors' error: %v, want ErrBroken", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("the survivors took %v to notice", d)
			}
			for r, mb := range ms {
				if r == victim {
					continue
				}
				select {
				case <-mb.g.Broken():
				case <-time.After(3 * time.Second):
					t.Fatalf("rank %d's group did not break", r)
				}
				if !strings.Contains(mb.g.Cause().Error(), "rank") {
					t.Fatalf("rank %d's cause does not name a rank: %v", r, mb.g.Cause())
				}
			}
		})
	}
}

func TestJoinTimeoutNamesMissingRanks(t *testing.T) {
	addr := freeAddr(t)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for _, r := range []int{0, 2} {
		wg.Go(func() {
			g, err := Join(context.Background(), Config{Rank: r, Size: 4, Addr: addr, JoinTimeout: 700 * time.Millisecond}, JoinSpec{Transport: "tcp"})
			if g != nil {
				g.Close()
			}
			errs[r/2] = err
		})
	}
	wg.Wait()
	if err := errs[0]; err == nil || !strings.Contains(err.Error(), "rank(s) 1, 3 did not") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("rank 0: %v, want a timeout naming ranks 1 and 3", err)
	}
	if err := errs[1]; err == nil || !strings.Contains(err.Error(), "before the group was complete") && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("rank 2: %v, want a timeout or rank 0's giving up", err)
	}
}

func TestJoinRefusals(t *testing.T) {
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Join(ctx, Config{Rank: 0, Size: 2, Addr: addr, Token: "a"}, JoinSpec{Transport: "tcp"})
		done <- err
	}()
	cases := []struct {
		cfg       Config
		transport string
		want      string
	}{
		{Config{Rank: 1, Size: 2, Addr: addr, Token: "b"}, "tcp", "another run"},
		{Config{Rank: 1, Size: 3, Addr: addr, Token: "a"}, "tcp", "the group has 3 ranks"},
		{Config{Rank: 1, Size: 2, Addr: addr, Token: "a"}, "nccl", "same backend kind"},
	}
	for _, c := range cases {
		_, err := Join(context.Background(), c.cfg, JoinSpec{Transport: c.transport})
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a refusal saying %q", c.cfg, err, c.want)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("rank 0 after cancel: %v, want context.Canceled", err)
	}
}

func TestCleanCloseBreaksNothing(t *testing.T) {
	ms := joinAll(t, 3, nil)
	for _, mb := range ms[1:] {
		mb.m.Close()
		mb.g.Close()
	}
	time.Sleep(200 * time.Millisecond)
	if err := ms[0].g.Cause(); err != nil {
		t.Fatalf("rank 0 after the others closed: %v", err)
	}
}

func TestHeartbeatTimeout(t *testing.T) {
	ms := joinAll(t, 2, func(c *Config) { c.PeerTimeout = 300 * time.Millisecond })
	// Rank 1 stops beating but keeps its connection: a hung host.
	ms[1].g.stopped.Do(func() { close(ms[1].g.stop) })
	select {
	case <-ms[0].g.Broken():
		if !strings.Contains(ms[0].g.Cause().Error(), "not been heard from") {
			t.Fatalf("cause: %v", ms[0].g.Cause())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("rank 0 did not notice a silent member")
	}
}

func TestFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	c, err := FromEnv(env())
	if err != nil || c.Size != 1 || c.Rank != 0 {
		t.Fatalf("no environment: %+v %v, want a group of one", c, err)
	}
	c, err = FromEnv(env("RANK", "2", "WORLD_SIZE", "4", "MASTER_ADDR", "10.0.0.1", "MASTER_PORT", "29500", "LOCAL_RANK", "0", "QD_COMM_TOKEN", "t"))
	if err != nil || c.Rank != 2 || c.Size != 4 || c.LocalRank != 0 || c.Addr != "10.0.0.1:29500" || c.Token != "t" {
		t.Fatalf("full environment: %+v %v", c, err)
	}
	c, err = FromEnv(env("RANK", "1", "WORLD_SIZE", "2", "MASTER_ADDR", "h", "MASTER_PORT", "1"))
	if err != nil || c.LocalRank != 1 {
		t.Fatalf("LOCAL_RANK defaults to RANK: %+v %v", c, err)
	}
	for _, bad := range []struct {
		env  []string
		want string
	}{
		{[]string{"RANK", "1", "WORLD_SIZE", "2"}, "but not MASTER_ADDR, MASTER_PORT"},
		{[]string{"RANK", "x", "WORLD_SIZE", "2", "MASTER_ADDR", "h", "MASTER_PORT", "1"}, `RANK="x" is not a number`},
		{[]string{"RANK", "2", "WORLD_SIZE", "2", "MASTER_ADDR", "h", "MASTER_PORT", "1"}, "outside a group of 2"},
		{[]string{"RANK", "0", "WORLD_SIZE", "2", "MASTER_ADDR", "h", "MASTER_PORT", "70000"}, "not a TCP port"},
	} {
		if _, err := FromEnv(env(bad.env...)); err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: %v, want %q", bad.env, err, bad.want)
		}
	}
}

// TestIssueOrderNotRunOrder: calls are paired by the order they were
// numbered (issued), whatever order their executions start in: rank 1
// runs its second call first, as a stream that reached it sooner would.
func TestIssueOrderNotRunOrder(t *testing.T) {
	ms := joinAll(t, 2, nil)
	err := onAll(ms, func(r int, m *Mesh) error {
		a, b := []int32{1}, []int32{100}
		ca := []HostCall{{Call: Call{Kind: AllReduce, Count: 1, DType: Int32, Op: Sum}, SendBytes: bytesOf(a), RecvBytes: bytesOf(a)}}
		cb := []HostCall{{Call: Call{Kind: AllReduce, Count: 1, DType: Int32, Op: Sum}, SendBytes: bytesOf(b), RecvBytes: bytesOf(b)}}
		sa, sb := m.Number(ca), m.Number(cb)
		first, second := func() error { return m.ExecNumbered(ca, sa, 0) }, func() error { return m.ExecNumbered(cb, sb, 0) }
		if r == 1 {
			first, second = second, first
		}
		errc := make(chan error, 1)
		go func() { errc <- first() }()
		time.Sleep(20 * time.Millisecond)
		err := errors.Join(second(), <-errc)
		if err == nil && (a[0] != 2 || b[0] != 200) {
			err = fmt.Errorf("rank %d: a = %d, b = %d, want 2 and 200", r, a[0], b[0])
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReplayGenerations: the same numbered call run again (a graph's
// replay) pairs with the peers' same replay, however far apart.
func TestReplayGenerations(t *testing.T) {
	ms := joinAll(t, 3, nil)
	err := onAll(ms, func(r int, m *Mesh) error {
		x := make([]float64, 33)
		c := []HostCall{{Call: Call{Kind: AllReduce, Count: len(x), DType: Float64, Op: Sum}, SendBytes: bytesOf(x), RecvBytes: bytesOf(x)}}
		seqs := m.Number(c)
		for g := range uint32(20) {
			for i := range x {
				x[i] = float64(r + int(g))
			}
			if err := m.ExecNumbered(c, seqs, g); err != nil {
				return err
			}
			if want := float64(3*int(g) + 3); x[7] != want {
				return fmt.Errorf("replay %d: %v, want %v", g, x[7], want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLeftMemberBreaksLaterCollectives: a member that closes cleanly
// after its first collective breaks the group for members that make a
// second one (which would wait for it forever on NCCL), saying so.
func TestLeftMemberBreaksLaterCollectives(t *testing.T) {
	ms := joinAll(t, 3, nil)
	var counts [3]atomic.Uint64
	for r := range ms {
		ms[r].g.SetCount(counts[r].Load)
	}
	for r := range ms {
		counts[r].Store(1)
	}
	counts[0].Store(2) // rank 0 has issued a second collective
	ms[2].m.Close()
	ms[2].g.Close()
	for _, r := range []int{0, 1} {
		if r == 1 { // the news comes through rank 0
			var err error
			for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
				if err = ms[1].g.CheckLeft(2); err != nil {
					break
				}
			}
			if err == nil || !strings.Contains(err.Error(), "closed its Comm after 1 collectives") {
				t.Fatalf("rank 1's second collective: %v", err)
			}
			continue
		}
		select {
		case <-ms[r].g.Broken():
			if !strings.Contains(ms[r].g.Cause().Error(), "closed its Comm after 1 collectives") {
				t.Fatalf("rank %d: %v", r, ms[r].g.Cause())
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("rank %d, with a collective more than the member that left, did not break", r)
		}
	}
}

// TestMeshOutlivesItsHandshake: a collective long after the group formed
// works: no deadline of the connections' handshake stays on them.
func TestMeshOutlivesItsHandshake(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 11 s")
	}
	ms := joinAll(t, 2, nil)
	time.Sleep(11 * time.Second) // past the 10 s of the mesh hello's read
	err := onAll(ms, func(r int, m *Mesh) error {
		x := []int64{int64(r + 1)}
		if err := m.Exec([]HostCall{{Call: Call{Kind: AllReduce, Count: 1, DType: Int64, Op: Sum}, SendBytes: bytesOf(x), RecvBytes: bytesOf(x)}}); err != nil {
			return err
		}
		if x[0] != 3 {
			return fmt.Errorf("rank %d: %d", r, x[0])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Exec numbers calls and runs them as one group: Number then
// ExecNumbered, as HostTransport does across its enqueue and its task.
func (m *Mesh) Exec(calls []HostCall) error { return m.ExecNumbered(calls, m.Number(calls), 0) }
