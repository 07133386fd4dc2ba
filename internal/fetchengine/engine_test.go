package fetchengine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
)

// fakeConn answers each fetch with every requested partition, records
// "x" each, after the test releases it through hold (nil: at once).
type fakeConn struct {
	mu     sync.Mutex
	reqs   []*protocol.FetchRequest
	hold   chan struct{}
	broken bool
	sent   chan *protocol.FetchRequest
}

func newFakeConn() *fakeConn { return &fakeConn{sent: make(chan *protocol.FetchRequest, 100)} }

func (c *fakeConn) Versions() (protocol.Versions, error) { return protocol.Versions{}, nil }
func (c *fakeConn) Broken() bool                         { c.mu.Lock(); defer c.mu.Unlock(); return c.broken }
func (c *fakeConn) Close() error                         { return nil }

func (c *fakeConn) Fetch(ctx context.Context, req *protocol.FetchRequest, _ time.Time) (*protocol.FetchResponse, error) {
	c.mu.Lock()
	c.reqs = append(c.reqs, req)
	hold := c.hold
	c.mu.Unlock()
	c.sent <- req
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	resp := &protocol.FetchResponse{}
	for _, t := range req.Topics {
		rt := protocol.FetchResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, protocol.FetchResponsePartition{PartitionIndex: p.Partition, HighWatermark: p.FetchOffset + 1, Records: []byte("x"), PreferredReadReplica: -1})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func partitions(req *protocol.FetchRequest) []int32 {
	var out []int32
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			out = append(out, p.Partition)
		}
	}
	return out
}

func testEngine(t *testing.T, conn *fakeConn, cfg Config) *Engine {
	cfg.Dial = func(context.Context, int) (Conn, error) { return conn, nil }
	cfg.MaxWait = func(Want) time.Duration { return time.Second }
	e := New(cfg)
	t.Cleanup(e.Close)
	return e
}

func want(p int32, off int64) Want {
	return Want{Topic: "t", Partition: p, Offset: off, MaxBytes: 1 << 20, Timeout: 5 * time.Second}
}

// fetchAsync runs Fetch in a goroutine.
func fetchAsync(e *Engine, broker int, w Want) chan Result {
	ch := make(chan Result, 1)
	go func() { ch <- e.Fetch(context.Background(), broker, w) }()
	return ch
}

func recv(t *testing.T, ch chan Result) Result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no result within 5 s")
		return Result{}
	}
}

// waitPending waits until n fetches wait at broker's loop.
func waitPending(t *testing.T, e *Engine, broker, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		l := e.loops[broker]
		return l != nil && len(l.pending) == n
	}, 5*time.Second, time.Millisecond)
}

func sent(t *testing.T, c *fakeConn) *protocol.FetchRequest {
	t.Helper()
	select {
	case r := <-c.sent:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no request sent within 5 s")
		return nil
	}
}

// Partitions that ask while a request is in flight go together in the next
// one, each with its own offset.
func TestEngineCoalescesPartitions(t *testing.T) {
	c := newFakeConn()
	c.hold = make(chan struct{})
	e := testEngine(t, c, Config{})
	first := fetchAsync(e, 1, want(0, 10))
	require.Equal(t, []int32{0}, partitions(sent(t, c)))
	second, third := fetchAsync(e, 1, want(1, 20)), fetchAsync(e, 1, want(2, 30))
	// Both are pending before the first answer frees the loop.
	waitPending(t, e, 1, 2)
	c.hold <- struct{}{}
	r := recv(t, first)
	require.NoError(t, r.Err)
	assert.Equal(t, int64(11), r.Partition.HighWatermark)
	// Partition 0 releases: the loop does not wait for it.
	e.Release(0, "t", 0)
	req := sent(t, c)
	assert.ElementsMatch(t, []int32{1, 2}, partitions(req))
	for _, p := range req.Topics[0].Partitions {
		assert.Equal(t, int64(p.Partition+1)*10, p.FetchOffset)
	}
	close(c.hold)
	assert.Equal(t, int64(21), recv(t, second).Partition.HighWatermark)
	assert.Equal(t, int64(31), recv(t, third).Partition.HighWatermark)
	assert.Equal(t, 1, e.Conns(), "one connection for the broker")
}

// After a response, the loop waits for its partitions to come back before
// the next request, so that none is left out of a long poll.
func TestEngineWaitsForPartitionsOfLastResponse(t *testing.T) {
	c := newFakeConn()
	e := testEngine(t, c, Config{Linger: time.Minute})
	require.NoError(t, recv(t, fetchAsync(e, 1, want(0, 0))).Err)
	assert.Equal(t, []int32{0}, partitions(sent(t, c)))
	b := fetchAsync(e, 1, want(1, 0))
	// Partition 0 has not come back: nothing is sent.
	select {
	case req := <-c.sent:
		t.Fatalf("request %v sent while partition 0 was out", partitions(req))
	case <-time.After(50 * time.Millisecond):
	}
	a := fetchAsync(e, 1, want(0, 1))
	assert.ElementsMatch(t, []int32{0, 1}, partitions(sent(t, c)))
	recv(t, a)
	recv(t, b)
}

// A partition held for its application (Hold) lets the loop go on without
// it, but with a short poll, so that its next fetch does not wait for a
// long poll of the others; once it asks again, long polls resume.
func TestEngineHeldPartitionShortensThePoll(t *testing.T) {
	c := newFakeConn()
	e := testEngine(t, c, Config{Linger: time.Minute, JoinSettle: -1})
	require.NoError(t, recv(t, fetchAsync(e, 1, want(0, 0))).Err)
	sent(t, c)
	b := fetchAsync(e, 1, want(1, 0))
	e.Hold(0, "t", 0)
	req := sent(t, c)
	assert.Equal(t, []int32{1}, partitions(req))
	assert.Equal(t, int32(HeldPoll/time.Millisecond), req.MaxWaitMs, "no long poll while partition 0 is held")
	recv(t, b)
	// Partition 1 is out (in the last response): the loop waits for it,
	// and partition 0 asks first.
	a := fetchAsync(e, 1, want(0, 1))
	waitPending(t, e, 1, 1)
	b = fetchAsync(e, 1, want(1, 1))
	req = sent(t, c)
	assert.ElementsMatch(t, []int32{0, 1}, partitions(req))
	assert.Equal(t, int32(1000), req.MaxWaitMs, "the hold ended: a long poll again (MaxWait 1 s)")
	recv(t, a)
	recv(t, b)
}

// A partition new to a broker's loop makes its polls end JoinSettle after
// it came, since others usually follow (Readers starting, a group
// assignment): one poll until then, not one per HeldPoll; once none came
// for that long, polls last MaxWait again.
func TestEngineNewPartitionsShortenThePoll(t *testing.T) {
	c := newFakeConn()
	e := testEngine(t, c, Config{Linger: time.Minute})
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	e.mu.Lock()
	e.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e.mu.Unlock()
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	a := fetchAsync(e, 1, want(0, 0))
	req := sent(t, c)
	assert.Equal(t, int32(250), req.MaxWaitMs, "partition 0 is new to the broker: a poll until JoinSettle after it")
	recv(t, a)

	advance(200 * time.Millisecond)
	a = fetchAsync(e, 1, want(0, 1))
	req = sent(t, c)
	assert.Equal(t, int32(50), req.MaxWaitMs, "200 ms after partition 0 came: until the settle's end")
	recv(t, a)

	advance(45 * time.Millisecond)
	a = fetchAsync(e, 1, want(0, 2))
	req = sent(t, c)
	assert.Equal(t, int32(HeldPoll/time.Millisecond), req.MaxWaitMs, "5 ms before the settle's end: HeldPoll at least")
	recv(t, a)

	advance(255 * time.Millisecond)
	c.mu.Lock()
	c.hold = make(chan struct{})
	c.mu.Unlock()
	a = fetchAsync(e, 1, want(0, 2))
	req = sent(t, c)
	assert.Equal(t, []int32{0}, partitions(req))
	assert.Equal(t, int32(1000), req.MaxWaitMs, "no partition came for 300 ms: a long poll (MaxWait 1 s)")
	close(c.hold)
	recv(t, a)
}

// Two owners of a shared engine reading the same partition get their own
// answers, from separate requests (a request names a partition once).
func TestEngineTwoOwnersOfOnePartition(t *testing.T) {
	c := newFakeConn()
	c.hold = make(chan struct{})
	e := testEngine(t, c, Config{})
	a, b := want(0, 10), want(0, 20)
	a.Owner, b.Owner = 1, 2
	req, ra, rb := queueBehind(t, c, e, a, b)
	require.Len(t, partitions(req), 1, "one of the two in this request")
	c.hold <- struct{}{}
	close(c.hold)
	req2 := sent(t, c)
	require.Len(t, partitions(req2), 1, "the other in the next")
	assert.ElementsMatch(t, []int64{10, 20}, []int64{req.Topics[0].Partitions[0].FetchOffset, req2.Topics[0].Partitions[0].FetchOffset})
	assert.Equal(t, int64(11), recv(t, ra).Partition.HighWatermark)
	assert.Equal(t, int64(21), recv(t, rb).Partition.HighWatermark)
}

// A request goes with one rack setting: a partition asking without the
// rack (the Reader asks the leader itself to serve it) waits for the next
// request, so the one it is left out of polls short.
func TestEngineLeftOutPartitionShortensThePoll(t *testing.T) {
	c := newFakeConn()
	c.hold = make(chan struct{})
	e := testEngine(t, c, Config{JoinSettle: -1})
	a, b := want(0, 10), want(1, 20)
	a.Rack = "a"
	req, ra, rb := queueBehind(t, c, e, a, b)
	require.Len(t, partitions(req), 1, "one rack setting per request")
	assert.Equal(t, int32(HeldPoll/time.Millisecond), req.MaxWaitMs, "the other partition waits for this request: a short poll")
	c.hold <- struct{}{}
	close(c.hold)
	req2 := sent(t, c)
	require.Len(t, partitions(req2), 1)
	assert.NotEqual(t, req.RackID, req2.RackID)
	assert.Equal(t, int32(1000), req2.MaxWaitMs, "nobody left waiting: a long poll")
	recv(t, ra)
	recv(t, rb)
}

// A partition that does not come back is waited for at most Linger.
func TestEngineLingerBoundsTheWait(t *testing.T) {
	c := newFakeConn()
	e := testEngine(t, c, Config{Linger: 20 * time.Millisecond})
	require.NoError(t, recv(t, fetchAsync(e, 1, want(0, 0))).Err)
	sent(t, c)
	// Partition 0 never comes back.
	b := fetchAsync(e, 1, want(1, 0))
	assert.Equal(t, []int32{1}, partitions(sent(t, c)))
	recv(t, b)
}

// The budget bounds the bytes asked for: a request asks for the room left,
// and none is sent while less than a quarter is free.
func TestEngineBudget(t *testing.T) {
	c := newFakeConn()
	var mu sync.Mutex
	buffered := int64(0)
	e := testEngine(t, c, Config{Budget: 1000, Buffered: func(uint64) int64 { mu.Lock(); defer mu.Unlock(); return buffered }})
	w := want(0, 0)
	w.MaxBytes = 600
	r := recv(t, fetchAsync(e, 1, w))
	require.NoError(t, r.Err)
	assert.Equal(t, int32(600), sent(t, c).MaxBytes, "the partitions' max bytes, within the budget")

	mu.Lock()
	buffered = 800
	mu.Unlock()
	ch := fetchAsync(e, 1, want(0, 1))
	select {
	case req := <-c.sent:
		t.Fatalf("request for %d bytes sent with 200 of 1000 free", req.MaxBytes)
	case <-time.After(50 * time.Millisecond):
	}
	mu.Lock()
	buffered = 400
	mu.Unlock()
	e.RoomFreed()
	assert.Equal(t, int32(600), sent(t, c).MaxBytes)
	recv(t, ch)
}

// The budget is per owner: an owner whose application keeps its budget full
// waits, while another owner of the same engine holding nothing is fetched
// (its application may be the one the first waits for), with a short poll.
func TestEngineBudgetPerOwner(t *testing.T) {
	c := newFakeConn()
	c.hold = make(chan struct{})
	var mu sync.Mutex
	full := true
	e := testEngine(t, c, Config{Budget: 1000, Buffered: func(owner uint64) int64 {
		mu.Lock()
		defer mu.Unlock()
		if owner == 1 && full {
			return 1000
		}
		return 0
	}})
	req, ra, rb := queueTwoOwners(t, c, e)
	assert.Equal(t, []int32{1}, partitions(req), "owner 2, holding nothing, is fetched; owner 1 (budget full) is not")
	assert.Equal(t, int32(HeldPoll/time.Millisecond), req.MaxWaitMs, "owner 1 waits for room: a short poll")
	c.hold <- struct{}{}
	recv(t, rb)
	e.Release(2, "t", 1)
	mu.Lock()
	full = false
	mu.Unlock()
	e.RoomFreed()
	assert.Equal(t, []int32{0}, partitions(sent(t, c)), "owner 1 has room again")
	close(c.hold)
	recv(t, ra)
}

// queueTwoOwners is queueBehind for partition 0 of owner 1 and partition
// 1 of owner 2.
func queueTwoOwners(t *testing.T, c *fakeConn, e *Engine) (*protocol.FetchRequest, chan Result, chan Result) {
	t.Helper()
	a, b := want(0, 0), want(1, 0)
	a.Owner, b.Owner = 1, 2
	return queueBehind(t, c, e, a, b)
}

// queueBehind keeps a fetch of partition 9, owner 3, in flight (c.hold)
// while a and b queue up behind it, answers it, and returns the request
// that follows and a's and b's results.
func queueBehind(t *testing.T, c *fakeConn, e *Engine, a, b Want) (*protocol.FetchRequest, chan Result, chan Result) {
	t.Helper()
	x := want(9, 0)
	x.Owner = 3
	rx := fetchAsync(e, 1, x)
	sent(t, c)
	ra, rb := fetchAsync(e, 1, a), fetchAsync(e, 1, b)
	waitPending(t, e, 1, 2)
	c.hold <- struct{}{}
	recv(t, rx)
	e.Release(3, "t", 9)
	return sent(t, c), ra, rb
}

// In a request for two owners each partition asks for no more than its
// owner was granted: the broker fills the request's MaxBytes (the sum of
// the grants) partition by partition, so the first listed could otherwise
// take the other owner's bytes and fetch past its own budget.
func TestEnginePartitionMaxBytesCappedByOwnerGrant(t *testing.T) {
	c := newFakeConn()
	c.hold = make(chan struct{})
	defer close(c.hold)
	e := testEngine(t, c, Config{Budget: 1000, Buffered: func(owner uint64) int64 {
		if owner == 1 {
			return 700 // room 300, over a quarter of the budget: granted
		}
		return 0
	}})
	req, _, _ := queueTwoOwners(t, c, e)
	require.ElementsMatch(t, []int32{0, 1}, partitions(req), "both owners in one request")
	maxBytes := map[int32]int32{}
	for _, p := range req.Topics[0].Partitions {
		maxBytes[p.Partition] = p.PartitionMaxBytes
	}
	assert.Equal(t, int32(1300), req.MaxBytes, "the request: both grants")
	assert.Equal(t, int32(300), maxBytes[0], "owner 1's partition: its grant")
	assert.Equal(t, int32(1000), maxBytes[1], "owner 2's partition: its grant")
}

// The process's shared budget cuts what the request may bring (its
// MaxBytes), not what each partition asks for: those cuts would make the
// fetches of many small Readers small (300 partition Readers read 15 %
// slower).
func TestEngineSharedBudgetCutsTheRequestNotPartitions(t *testing.T) {
	c := newFakeConn()
	c.hold = make(chan struct{})
	defer close(c.hold)
	e := testEngine(t, c, Config{Shared: NewBudget(3 << 20)})
	a, b := want(0, 0), want(1, 0)
	a.Owner, b.Owner, a.MaxBytes, b.MaxBytes = 1, 2, 2<<20, 2<<20
	req, _, _ := queueBehind(t, c, e, a, b)
	require.ElementsMatch(t, []int32{0, 1}, partitions(req), "both owners in one request")
	assert.Equal(t, int32(3<<20), req.MaxBytes, "the request: what the shared budget had")
	for _, p := range req.Topics[0].Partitions {
		assert.Equal(t, int32(2<<20), p.PartitionMaxBytes, "partition %d: its MaxBytes", p.Partition)
	}
}

// A partition at its broker's end reserves only caughtUpBytes for its
// next fetch: a long poll at an idle broker must not hold the budget that
// a broker with records needs.
func TestEngineCaughtUpPartitionReservesLittle(t *testing.T) {
	c := newFakeConn()
	e := testEngine(t, c, Config{Budget: 100 << 20, Buffered: func(uint64) int64 { return 0 }})
	big := func(off int64) Want {
		w := want(0, off)
		w.MaxBytes = 10 << 20
		return w
	}
	require.NoError(t, recv(t, fetchAsync(e, 1, big(0))).Err) // the fake's high watermark: offset + 1
	assert.Equal(t, int32(10<<20), sent(t, c).MaxBytes, "nothing known yet: MaxBytes")
	require.NoError(t, recv(t, fetchAsync(e, 1, big(1))).Err)
	assert.Equal(t, int32(caughtUpBytes), sent(t, c).MaxBytes, "at the end: caughtUpBytes")
	require.NoError(t, recv(t, fetchAsync(e, 1, big(0))).Err)
	assert.Equal(t, int32(10<<20), sent(t, c).MaxBytes, "behind the end: MaxBytes")
}

// A failed dial answers every partition of the request with DialFailed.
func TestEngineDialFailure(t *testing.T) {
	boom := errors.New("refused")
	e := New(Config{
		Dial:    func(context.Context, int) (Conn, error) { return nil, boom },
		MaxWait: func(Want) time.Duration { return time.Second },
	})
	defer e.Close()
	r := e.Fetch(context.Background(), 1, want(0, 0))
	assert.True(t, r.DialFailed)
	assert.ErrorIs(t, r.Err, boom)
	assert.Zero(t, e.Conns())
}

// A caller whose context ends gets its error; the data of its partition in
// the response is dropped, and the loop does not wait for it.
func TestEngineAbandonedFetch(t *testing.T) {
	c := newFakeConn()
	c.hold = make(chan struct{})
	e := testEngine(t, c, Config{Linger: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan Result, 1)
	go func() { ch <- e.Fetch(ctx, 1, want(0, 0)) }()
	sent(t, c)
	cancel()
	assert.ErrorIs(t, recv(t, ch).Err, context.Canceled)
	c.hold <- struct{}{}
	other := fetchAsync(e, 1, want(1, 0))
	assert.Equal(t, []int32{1}, partitions(sent(t, c)), "the loop waited for the abandoned partition")
	close(c.hold)
	require.NoError(t, recv(t, other).Err)
}

// Each broker has its own loop and connection.
func TestEngineOneLoopPerBroker(t *testing.T) {
	conns := map[int]*fakeConn{1: newFakeConn(), 2: newFakeConn()}
	e := New(Config{
		Dial:    func(_ context.Context, b int) (Conn, error) { return conns[b], nil },
		MaxWait: func(Want) time.Duration { return time.Second },
	})
	defer e.Close()
	a, b := fetchAsync(e, 1, want(0, 0)), fetchAsync(e, 2, want(1, 0))
	require.NoError(t, recv(t, a).Err)
	require.NoError(t, recv(t, b).Err)
	assert.Equal(t, []int32{0}, partitions(sent(t, conns[1])))
	assert.Equal(t, []int32{1}, partitions(sent(t, conns[2])))
	assert.Equal(t, 2, e.Conns())
}

// Fetch after Close fails at once.
func TestEngineClosed(t *testing.T) {
	e := New(Config{})
	e.Close()
	assert.ErrorIs(t, e.Fetch(context.Background(), 1, want(0, 0)).Err, ErrClosed)
}

// sessionConn is a broker with fetch sessions: it creates session 7 on a
// full fetch with epoch 0 and answers an incremental fetch only for the
// partitions it lists, or fails it with errCode once.
type sessionConn struct {
	fakeConn
	hw      map[int32]int64
	errCode int16
}

func (c *sessionConn) Versions() (protocol.Versions, error) {
	return protocol.Versions{protocol.Fetch: {Min: 4, Max: 12}}, nil
}

func (c *sessionConn) Fetch(ctx context.Context, req *protocol.FetchRequest, by time.Time) (*protocol.FetchResponse, error) {
	resp, err := c.fakeConn.Fetch(ctx, req, by)
	if err != nil {
		return nil, err
	}
	if req.SessionEpoch > 0 && c.errCode != 0 {
		code := c.errCode
		c.errCode = 0
		return &protocol.FetchResponse{ErrorCode: code}, nil
	}
	if req.SessionEpoch == 0 {
		resp.SessionID = 7
	}
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			p := &resp.Topics[i].Partitions[j]
			p.HighWatermark = c.hw[p.PartitionIndex]
		}
	}
	return resp, nil
}

func sessionEngine(t *testing.T, c *sessionConn) *Engine {
	e := New(Config{
		Dial:    func(context.Context, int) (Conn, error) { return c, nil },
		MaxWait: func(Want) time.Duration { return time.Second },
	})
	t.Cleanup(e.Close)
	return e
}

// The first fetch creates a session; later ones list only partitions whose
// offset changed and forget those no longer asked for; a partition left
// out of the response is answered empty with its last high watermark.
func TestEngineFetchSession(t *testing.T) {
	c := &sessionConn{fakeConn: *newFakeConn(), hw: map[int32]int64{0: 5, 1: 9, 2: 4}}
	e := sessionEngine(t, c)
	fetchAll := func(ws ...Want) []Result {
		chs := make([]chan Result, len(ws))
		for i, w := range ws {
			chs[i] = fetchAsync(e, 1, w)
		}
		out := make([]Result, len(ws))
		for i := range chs {
			out[i] = recv(t, chs[i])
			require.NoError(t, out[i].Err)
		}
		return out
	}
	// Partition 9 holds the loop while 0, 1 and 2 ask, so that they go
	// in one request.
	c.hold = make(chan struct{})
	blocker := fetchAsync(e, 1, want(9, 0))
	first := sent(t, &c.fakeConn)
	assert.Equal(t, int32(0), first.SessionEpoch, "the first request creates the session")
	chs := []chan Result{fetchAsync(e, 1, want(0, 0)), fetchAsync(e, 1, want(1, 0)), fetchAsync(e, 1, want(2, 0))}
	waitPending(t, e, 1, 3)
	close(c.hold)
	require.NoError(t, recv(t, blocker).Err)
	e.Release(0, "t", 9)
	for _, ch := range chs {
		require.NoError(t, recv(t, ch).Err)
	}
	req := sent(t, &c.fakeConn)
	assert.Equal(t, int32(1), req.SessionEpoch)
	assert.ElementsMatch(t, []int32{0, 1, 2}, partitions(req))
	epoch := int32(2)
	// Partition 0 moved on, 1 did not, 2 is no longer asked for.
	rs := fetchAll(want(0, 1), want(1, 0))
	req = sent(t, &c.fakeConn)
	assert.Equal(t, int32(7), req.SessionID)
	assert.Equal(t, epoch, req.SessionEpoch)
	assert.Equal(t, []int32{0}, partitions(req), "only the changed partition is listed")
	require.Len(t, req.ForgottenTopics, 1, "%+v", c.reqs)
	assert.Equal(t, []int32{2}, req.ForgottenTopics[0].Partitions)
	c.mu.Lock()
	c.hold = nil
	c.mu.Unlock()
	assert.Equal(t, []byte("x"), rs[0].Partition.Records)
	assert.Nil(t, rs[1].Partition.Records, "partition 1 had no news")
	assert.Equal(t, int64(9), rs[1].Partition.HighWatermark, "the last high watermark seen")

	// A session error starts over with a full fetch, at once.
	c.errCode = errInvalidFetchSessionEpoch
	fetchAll(want(0, 2), want(1, 0))
	failed, second := sent(t, &c.fakeConn), sent(t, &c.fakeConn)
	assert.Equal(t, epoch+1, failed.SessionEpoch)
	assert.Equal(t, int32(0), second.SessionEpoch, "not a full fetch after the session error")
	assert.ElementsMatch(t, []int32{0, 1}, partitions(second))
}

// A budget shared by engines bounds what each request asks for, and a
// request waits while the others hold all of it.
func TestEngineSharedBudget(t *testing.T) {
	shared := NewBudget(1000)
	c := newFakeConn()
	var mu sync.Mutex
	own := int64(0)
	e := testEngine(t, c, Config{Shared: shared, Buffered: func(uint64) int64 { mu.Lock(); defer mu.Unlock(); return own }})
	w := want(0, 0)
	w.MaxBytes = 600
	shared.Add(1000) // other Readers hold it all
	require.NoError(t, recv(t, fetchAsync(e, 1, w)).Err)
	assert.Equal(t, int32(600), sent(t, c).MaxBytes, "a Reader holding nothing fetches whatever the others hold")
	// The loop gives the reservation back just after it answers.
	require.Eventually(t, func() bool { return shared.Held() == 1000 }, 5*time.Second, time.Millisecond,
		"the request's reservation was not given back")

	mu.Lock()
	own = 100 // now it holds some
	mu.Unlock()
	shared.Release(300)
	require.NoError(t, recv(t, fetchAsync(e, 1, w)).Err)
	assert.Equal(t, int32(300), sent(t, c).MaxBytes, "what the shared budget has left")
	require.Eventually(t, func() bool { return shared.Held() == 700 }, 5*time.Second, time.Millisecond)

	shared.Add(300)
	ch := fetchAsync(e, 1, want(0, 1))
	select {
	case req := <-c.sent:
		t.Fatalf("request for %d bytes sent with the shared budget full", req.MaxBytes)
	case <-time.After(50 * time.Millisecond):
	}
	shared.Release(1000)
	assert.Equal(t, int32(1000), sent(t, c).MaxBytes, "room again: the whole shared budget")
	require.NoError(t, recv(t, ch).Err)
}

// A loop that sent nothing for IdleTimeout closes its connection (before
// the broker drops it), and dials again when asked.
func TestEngineIdleConnectionClosed(t *testing.T) {
	c := newFakeConn()
	dials := 0
	var mu sync.Mutex
	e := New(Config{
		Dial: func(context.Context, int) (Conn, error) {
			mu.Lock()
			dials++
			mu.Unlock()
			return c, nil
		},
		MaxWait:     func(Want) time.Duration { return time.Second },
		IdleTimeout: 20 * time.Millisecond,
	})
	defer e.Close()
	require.NoError(t, e.Fetch(context.Background(), 1, want(0, 0)).Err)
	e.Release(0, "t", 0)
	require.Eventually(t, func() bool { return e.Conns() == 0 }, 5*time.Second, time.Millisecond, "idle connection kept")
	require.NoError(t, e.Fetch(context.Background(), 1, want(0, 1)).Err)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 2, dials)
}
