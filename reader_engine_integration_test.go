package kafka_test

// Integration test of the Reader's fetch engine on the real cluster: a
// group Reader over 60 partitions reads through one data connection per
// broker, in multi-partition fetches that continue an incremental fetch
// session, and delivers every message once and in partition order.

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/internal/fetchengine"
	"github.com/rackfetch/kafka-go/protocol"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// reSockets counts the open connections a Dialer made, and their peak.
type reSockets struct {
	mu         sync.Mutex
	open, peak int
}

func (s *reSockets) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.open++
	s.peak = max(s.peak, s.open)
	s.mu.Unlock()
	return &reConn{Conn: c, s: s}, nil
}

func (s *reSockets) counts() (open, peak int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open, s.peak
}

type reConn struct {
	net.Conn
	s    *reSockets
	once sync.Once
}

func (c *reConn) Close() error {
	c.once.Do(func() {
		c.s.mu.Lock()
		c.s.open--
		c.s.mu.Unlock()
	})
	return c.Conn.Close()
}

// reProduce creates a topic of partitions and writes perPartition records
// to each, round robin.
func reProduce(ctx context.Context, t *testing.T, c *ktesting.Cluster, partitions, perPartition int) string {
	t.Helper()
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: partitions})
	w := &kafka.Writer{Addr: kafka.TCP(c.Brokers...), Topic: topic, Balancer: &kafka.RoundRobin{}, BatchSize: 1000, RequiredAcks: kafka.RequireAll}
	defer w.Close()
	msgs := make([]kafka.Message, 0, partitions*perPartition)
	for i := 0; i < partitions*perPartition; i++ {
		msgs = append(msgs, kafka.Message{Value: []byte(fmt.Sprintf("v%d", i))})
	}
	require.NoError(t, w.WriteMessages(ctx, msgs...))
	return topic
}

func TestReaderIntegrationEngineSockets(t *testing.T) {
	c := requireRackCluster(t)
	const partitions, perPartition = 60, 200
	ctx := testContext(t, 3*time.Minute)
	topic := reProduce(ctx, t, c, partitions, perPartition)

	sockets := &reSockets{}
	offsetRequests := kafka.ReaderTestOffsetRequests()
	r := riReader(t, c, topic, func(cfg *kafka.ReaderConfig) {
		cfg.Topic, cfg.GroupTopics = "", []string{topic}
		cfg.GroupID, cfg.Rack = "g-"+topic, "b"
		cfg.StartOffset = kafka.FirstOffset
		cfg.Dialer.DialFunc = sockets.dial
	})
	next := map[int]int64{}
	for n := 0; n < partitions*perPartition; n++ {
		m, err := r.FetchMessage(ctx)
		require.NoError(t, err)
		require.Equal(t, next[m.Partition], m.Offset, "partition %d", m.Partition)
		next[m.Partition] = m.Offset + 1
	}
	for p := 0; p < partitions; p++ {
		assert.Equal(t, int64(perPartition), next[p], "partition %d", p)
	}

	st := kafka.ReaderTestEngineStats(r)
	open, peak := sockets.counts()
	offsetRequests = kafka.ReaderTestOffsetRequests() - offsetRequests
	t.Logf("ENGINEFIGURE sockets open %d peak %d; data connections %d; %d fetch requests for %d partition fetches (%.1f a request), %d in a fetch session; %d ListOffsets requests for %d start offsets",
		open, peak, st.Conns, st.Requests, st.Partitions, float64(st.Partitions)/float64(max(st.Requests, 1)), st.Incremental, offsetRequests, partitions)
	assert.LessOrEqual(t, offsetRequests, int64(partitions/3), "ListOffsets requests (one per partition before they were batched)")
	// One data connection per broker; besides, at most one control
	// connection per broker, the coordinator's and the bootstrap one.
	assert.LessOrEqual(t, st.Conns, 3, "data connections")
	assert.LessOrEqual(t, peak, 3+3+2, "sockets at the peak (kafka-go: one a partition)")
	assert.Greater(t, float64(st.Partitions)/float64(st.Requests), 2.0, "partitions a fetch request")
	// Each broker's first request opens its fetch session; every later one
	// is incremental (a share of all requests would depend on how few the
	// read took: 6 requests, 3 of them first ones, in one CI run).
	assert.LessOrEqual(t, st.Requests-st.Incremental, int64(st.Conns), "full fetch requests, beyond one a data connection")
}

// Partition-mode Readers with the same settings, one per partition as
// kafka-go programs often run them, share one fetch engine: one data
// connection per broker and multi-partition fetches for all of them.
func TestReaderIntegrationPartitionReadersShareEngine(t *testing.T) {
	c := requireRackCluster(t)
	const partitions, perPartition = 30, 200
	ctx := testContext(t, 3*time.Minute)
	topic := reProduce(ctx, t, c, partitions, perPartition)

	sockets := &reSockets{}
	dialer := newDialer()
	dialer.DialFunc = sockets.dial
	readers := make([]*kafka.Reader, partitions)
	for p := range readers {
		readers[p] = riReader(t, c, topic, func(cfg *kafka.ReaderConfig) {
			cfg.Partition, cfg.Dialer, cfg.Rack = p, dialer, "b"
		})
	}
	parts := make([]int, partitions)
	for p := range parts {
		parts[p] = p
	}
	reReadAll(ctx, t, readers, parts, perPartition)

	st := kafka.ReaderTestEngineStats(readers[0])
	open, peak := sockets.counts()
	t.Logf("ENGINEFIGURE %d partition Readers: sockets open %d peak %d; data connections %d; %d fetch requests for %d partition fetches (%.1f a request)",
		partitions, open, peak, st.Conns, st.Requests, st.Partitions, float64(st.Partitions)/float64(max(st.Requests, 1)))
	assert.Equal(t, st, kafka.ReaderTestEngineStats(readers[partitions-1]), "one engine for all")
	assert.LessOrEqual(t, st.Conns, 3, "data connections")
	assert.LessOrEqual(t, peak, 3+3+2, "sockets at the peak (kafka-go: one a Reader)")
	assert.Greater(t, float64(st.Partitions)/float64(st.Requests), 2.0, "partitions a fetch request")

	// The same with a Dialer of its own for each Reader, equal in every
	// setting (a program building each Reader's config afresh): still one
	// engine, one data connection per broker.
	for _, r := range readers {
		require.NoError(t, r.Close())
	}
	own := make([]*kafka.Reader, partitions)
	for p := range own {
		own[p] = riReader(t, c, topic, func(cfg *kafka.ReaderConfig) {
			cfg.Partition, cfg.Dialer, cfg.Rack = p, newDialer(), "b"
		})
	}
	reReadAll(ctx, t, own, parts, perPartition)
	for p := range own {
		require.True(t, kafka.ReaderTestSameEngine(own[0], own[p]), "Reader %d: an engine of its own", p)
	}
	st = kafka.ReaderTestEngineStats(own[0])
	t.Logf("ENGINEFIGURE %d partition Readers with a Dialer each: data connections %d; %d fetch requests for %d partition fetches",
		partitions, st.Conns, st.Requests, st.Partitions)
	assert.LessOrEqual(t, st.Conns, 3, "data connections")
	assert.Greater(t, float64(st.Partitions)/float64(st.Requests), 2.0, "partitions a fetch request")
}

// Partition Readers sharing an engine, one of them stalled by its
// application: it stops fetching once its own MaxBufferedBytes is taken,
// and the others — a second Reader of a partition among them — read all
// their records in order meanwhile (a budget shared between the Readers
// would hold them up until the stalled one read).
func TestReaderIntegrationSharedEngineStalledReader(t *testing.T) {
	c := requireRackCluster(t)
	const partitions, perPartition, valueSize = 4, 300, 1024
	const budget, batch = 64 << 10, 10 // bytes a Reader fetches ahead; records a batch
	ctx := testContext(t, 3*time.Minute)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: partitions})
	w := &kafka.Writer{Addr: kafka.TCP(c.Brokers...), Topic: topic, Balancer: &kafka.RoundRobin{}, BatchSize: batch, RequiredAcks: kafka.RequireAll}
	msgs := make([]kafka.Message, 0, partitions*perPartition)
	for i := 0; i < partitions*perPartition; i++ {
		v := make([]byte, valueSize)
		copy(v, fmt.Sprintf("v%d", i/partitions))
		msgs = append(msgs, kafka.Message{Value: v})
	}
	require.NoError(t, w.WriteMessages(ctx, msgs...))
	require.NoError(t, w.Close())

	dialer := newDialer()
	reader := func(p int) *kafka.Reader {
		return riReader(t, c, topic, func(cfg *kafka.ReaderConfig) {
			cfg.Partition, cfg.Dialer, cfg.Rack, cfg.MaxBufferedBytes = p, dialer, "b", budget
		})
	}
	stalled := reader(0)
	_, err := stalled.FetchMessage(ctx)
	require.NoError(t, err)
	// Its application stops here: wait until the Reader has fetched most
	// of its budget ahead (the rest of partition 0 would not fit).
	require.Eventually(t, func() bool { return stalled.Stats().QueueLength >= budget/valueSize/2 },
		time.Minute, 10*time.Millisecond, "the stalled Reader never fetched ahead")

	// One Reader for each other partition and a second one for partition 1.
	parts := []int{1, 2, 3, 1}
	readers := make([]*kafka.Reader, len(parts))
	for i, p := range parts {
		readers[i] = reader(p)
	}
	reReadAll(ctx, t, readers, parts, perPartition)

	queued := stalled.Stats().QueueLength
	t.Logf("ENGINEFIGURE stalled Reader: %d records (%d KiB) fetched ahead with MaxBufferedBytes %d KiB, while %d Readers read %d records each",
		queued, queued*valueSize>>10, budget>>10, len(readers), perPartition)
	assert.LessOrEqual(t, queued, int64(budget/valueSize+batch), "the stalled Reader fetched past its budget (and one record batch)")
	st := kafka.ReaderTestEngineStats(stalled)
	assert.Equal(t, st, kafka.ReaderTestEngineStats(readers[0]), "one engine for all")
	assert.LessOrEqual(t, st.Conns, 3, "data connections")
}

// reReadAll reads offsets 0..n-1 of partition parts[i] through readers[i],
// all Readers at once, and fails t unless each gets them in order.
func reReadAll(ctx context.Context, t *testing.T, readers []*kafka.Reader, parts []int, n int64) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(readers))
	for i, r := range readers {
		i, r := i, r
		wg.Add(1)
		go func() {
			defer wg.Done()
			for want := int64(0); want < n; want++ {
				m, err := r.FetchMessage(ctx)
				if err == nil && (m.Partition != parts[i] || m.Offset != want) {
					err = fmt.Errorf("reader %d: got %d/%d, want %d/%d", i, m.Partition, m.Offset, parts[i], want)
				}
				if err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
}

// A data connection the Reader no longer fetches on is closed once idle: a
// Reader in rack b is sent by the rack-a leader to the rack-b follower after
// its first fetch, and its connection to the leader closes (after 1 s here,
// 2 minutes by default) while it goes on reading from the follower.
func TestReaderIntegrationIdleDataConnectionCloses(t *testing.T) {
	c := requireRackCluster(t)
	ctx := testContext(t, 2*time.Minute)
	topic, p, _ := rackTopic(t, c, 10)
	b := brokerInRack(t, c, "b")
	dialer := newDialer()
	kafka.SetEngineIdleTimeoutForTest(dialer, time.Second)
	r := riReader(t, c, topic, func(cfg *kafka.ReaderConfig) { cfg.Dialer, cfg.Rack = dialer, "b" })
	riExpect(t, ctx, r, 0, 10)
	st := r.Stats()
	require.Len(t, st.Routing, 1)
	require.Equal(t, b, st.Routing[0].Broker, "reads moved to the rack-b follower (leader %d)", p.Leader.ID)
	require.Eventually(t, func() bool { return kafka.ReaderTestEngineStats(r).Conns == 1 },
		time.Minute, 20*time.Millisecond, "the connection to the leader stayed open")

	riProduce(t, c, topic, 10, 5, nil)
	riExpect(t, ctx, r, 10, 5)
	assert.Equal(t, 1, kafka.ReaderTestEngineStats(r).Conns, "reading again opened a connection to the leader")
	st = r.Stats()
	require.Len(t, st.Routing, 1)
	assert.Equal(t, b, st.Routing[0].Broker, "records 10–14 not read from the follower")
}

// reWaits records the MaxWaitMs of every Fetch request written on the
// connections its dial made, per connection in order.
type reWaits struct {
	sockets reSockets
	mu      sync.Mutex
	conns   [][]int32
}

func (w *reWaits) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := w.sockets.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.conns = append(w.conns, nil)
	return &reWaitConn{Conn: c, w: w, i: len(w.conns) - 1}, nil
}

type reWaitConn struct {
	net.Conn
	w *reWaits
	i int
}

// Write reads the requests in b: the client writes whole frames.
func (c *reWaitConn) Write(b []byte) (int, error) {
	for rest := b; len(rest) >= 4; {
		n := int(binary.BigEndian.Uint32(rest))
		if n > len(rest)-4 {
			break
		}
		h, d, err := protocol.DecodeRequestHeader(rest[4:4+n], protocol.FlexibleFrom)
		if err == nil && h.Key == protocol.Fetch {
			var req protocol.FetchRequest
			if req.Decode(d, h.Version) == nil {
				c.w.mu.Lock()
				c.w.conns[c.i] = append(c.w.conns[c.i], req.MaxWaitMs)
				c.w.mu.Unlock()
			}
		}
		rest = rest[4+n:]
	}
	return c.Conn.Write(b)
}

// Partition Readers started together on a quiet topic, with kafka-go's
// MaxWait (10 s): each broker's first fetches are short polls (20 ms), so
// that a partition arriving a moment later is not held up by a long poll
// for the others; 250 ms after the last new partition, long polls resume
// (10 s: MaxWait).
func TestReaderIntegrationShortPollsWhilePartitionsArrive(t *testing.T) {
	c := requireRackCluster(t)
	const partitions = 6
	ctx := testContext(t, time.Minute)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: partitions})
	waits := &reWaits{}
	dialer := newDialer()
	dialer.DialFunc = waits.dial
	for p := 0; p < partitions; p++ {
		r := riReader(t, c, topic, func(cfg *kafka.ReaderConfig) {
			cfg.Partition, cfg.Dialer, cfg.MaxWait = p, dialer, 10*time.Second
		})
		go r.ReadMessage(ctx) // nothing to read: the Readers long-poll
	}
	var first, long []int32
	eventually(t, 20*time.Second, "long polls on every broker that was fetched from", func() bool {
		waits.mu.Lock()
		defer waits.mu.Unlock()
		first, long = nil, nil
		for _, ws := range waits.conns {
			if len(ws) == 0 {
				continue
			}
			first = append(first, ws[0])
			for _, w := range ws {
				if w == 10000 {
					long = append(long, w)
					break
				}
			}
		}
		return len(first) > 0 && len(long) == len(first)
	})
	t.Logf("ENGINEFIGURE first fetch waits per data connection %v (ms); every one long-polls 10 s later", first)
	for _, w := range first {
		assert.Equal(t, int32(fetchengine.HeldPoll/time.Millisecond), w, "a broker's first fetch, partitions still arriving")
	}
}

// Readers sharing an engine share each broker's long poll, which a Reader
// that starts reading there would wait for. With kafka-go's MaxWait (10 s),
// a Reader started while another tail-polls the same broker still reads its
// records at once: its partition is fetched on the loop's side connection
// (fetchengine/sidelane.go) while the 10 s poll is in flight.
func TestReaderIntegrationNewReaderSkipsLongPollInFlight(t *testing.T) {
	c := requireRackCluster(t)
	ctx := testContext(t, time.Minute)
	leader := brokerInRack(t, c, "a")
	others := []int{brokerInRack(t, c, "b"), brokerInRack(t, c, "c")}
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: []kafka.ReplicaAssignment{
		{Partition: 0, Replicas: append([]int{leader}, others...)},
		{Partition: 1, Replicas: append([]int{leader}, others...)},
	}})
	w := &kafka.Writer{Addr: kafka.TCP(c.Brokers...), Topic: topic, RequiredAcks: kafka.RequireAll,
		Balancer: kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return int(m.Key[0] - '0') })}
	defer w.Close()
	var msgs []kafka.Message
	for i := 0; i < 100; i++ {
		msgs = append(msgs, kafka.Message{Key: []byte("0"), Value: []byte("a")}, kafka.Message{Key: []byte("1"), Value: []byte("b")})
	}
	require.NoError(t, w.WriteMessages(ctx, msgs...))

	tenSeconds := func(cfg *kafka.ReaderConfig) { cfg.MaxWait = 10 * time.Second }
	a := riReader(t, c, topic, tenSeconds)
	for i := 0; i < 100; i++ {
		_, err := a.ReadMessage(ctx)
		require.NoError(t, err)
	}
	// Reader a has read everything: its fetches now long-poll the leader.
	quiet, cancel := context.WithTimeout(ctx, time.Second)
	_, err := a.ReadMessage(quiet)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "partition 0 has no more records")

	b := riReader(t, c, topic, func(cfg *kafka.ReaderConfig) { tenSeconds(cfg); cfg.Partition = 1 })
	require.True(t, kafka.ReaderTestSameEngine(a, b), "the two Readers share an engine")
	start := time.Now()
	m, err := b.ReadMessage(ctx)
	took := time.Since(start)
	require.NoError(t, err)
	assert.Equal(t, int64(0), m.Offset)
	t.Logf("ENGINEFIGURE a Reader started while another long-polls its broker read its first record after %v (MaxWait 10 s)", took.Round(time.Millisecond))
	assert.Less(t, took, 3*time.Second, "the second Reader's first record (not after the 10 s poll in flight)")
}
