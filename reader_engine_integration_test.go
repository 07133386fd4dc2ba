package kafka

// Integration tests of the Reader's fetch engine on the real cluster: a
// group Reader over 60 partitions reads through one data connection per
// broker, in multi-partition fetches that continue an incremental fetch
// session, and delivers every message once and in partition order;
// partition Readers share one engine; an idle data connection closes; a new
// Reader skips a long poll in flight. They stay in this package for the
// engine's counters (engine.Stats), which Readers share an engine, the
// ListOffsets count and the idle timeout, none of them public.

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/internal/consumer"
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
	topic := itTopic(t, c, TopicConfig{NumPartitions: partitions})
	w := &Writer{Addr: TCP(c.Brokers...), Topic: topic, Balancer: &RoundRobin{}, BatchSize: 1000, RequiredAcks: RequireAll}
	defer w.Close()
	msgs := make([]Message, 0, partitions*perPartition)
	for i := 0; i < partitions*perPartition; i++ {
		msgs = append(msgs, Message{Value: []byte(fmt.Sprintf("v%d", i))})
	}
	require.NoError(t, w.WriteMessages(ctx, msgs...))
	return topic
}

func TestReaderIntegrationEngineSockets(t *testing.T) {
	c := ktesting.RequireRackCluster(t)
	const partitions, perPartition = 60, 200
	ctx := itCtx(t, 3*time.Minute)
	topic := reProduce(ctx, t, c, partitions, perPartition)

	sockets := &reSockets{}
	offsetRequests := consumer.OffsetRequests()
	r := itReader(t, c, topic, func(cfg *ReaderConfig) {
		cfg.Topic, cfg.GroupTopics = "", []string{topic}
		cfg.GroupID, cfg.Rack = "g-"+topic, "b"
		cfg.StartOffset = FirstOffset
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

	st := r.engine.Stats()
	open, peak := sockets.counts()
	offsetRequests = consumer.OffsetRequests() - offsetRequests
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
	c := ktesting.RequireRackCluster(t)
	const partitions, perPartition = 30, 200
	ctx := itCtx(t, 3*time.Minute)
	topic := reProduce(ctx, t, c, partitions, perPartition)

	sockets := &reSockets{}
	dialer := itDialer()
	dialer.DialFunc = sockets.dial
	readers := make([]*Reader, partitions)
	for p := range readers {
		readers[p] = itReader(t, c, topic, func(cfg *ReaderConfig) {
			cfg.Partition, cfg.Dialer, cfg.Rack = p, dialer, "b"
		})
	}
	parts := make([]int, partitions)
	for p := range parts {
		parts[p] = p
	}
	reReadAll(ctx, t, readers, parts, perPartition)

	st := readers[0].engine.Stats()
	open, peak := sockets.counts()
	t.Logf("ENGINEFIGURE %d partition Readers: sockets open %d peak %d; data connections %d; %d fetch requests for %d partition fetches (%.1f a request)",
		partitions, open, peak, st.Conns, st.Requests, st.Partitions, float64(st.Partitions)/float64(max(st.Requests, 1)))
	assert.Equal(t, st, readers[partitions-1].engine.Stats(), "one engine for all")
	assert.LessOrEqual(t, st.Conns, 3, "data connections")
	assert.LessOrEqual(t, peak, 3+3+2, "sockets at the peak (kafka-go: one a Reader)")
	assert.Greater(t, float64(st.Partitions)/float64(st.Requests), 2.0, "partitions a fetch request")

	// The same with a Dialer of its own for each Reader, equal in every
	// setting (a program building each Reader's config afresh): still one
	// engine, one data connection per broker.
	for _, r := range readers {
		require.NoError(t, r.Close())
	}
	own := make([]*Reader, partitions)
	for p := range own {
		own[p] = itReader(t, c, topic, func(cfg *ReaderConfig) {
			cfg.Partition, cfg.Dialer, cfg.Rack = p, itDialer(), "b"
		})
	}
	reReadAll(ctx, t, own, parts, perPartition)
	for p := range own {
		require.True(t, own[0].engine == own[p].engine, "Reader %d: an engine of its own", p)
	}
	st = own[0].engine.Stats()
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
	c := ktesting.RequireRackCluster(t)
	const partitions, perPartition, valueSize = 4, 300, 1024
	const budget, batch = 64 << 10, 10 // bytes a Reader fetches ahead; records a batch
	ctx := itCtx(t, 3*time.Minute)
	topic := itTopic(t, c, TopicConfig{NumPartitions: partitions})
	w := &Writer{Addr: TCP(c.Brokers...), Topic: topic, Balancer: &RoundRobin{}, BatchSize: batch, RequiredAcks: RequireAll}
	msgs := make([]Message, 0, partitions*perPartition)
	for i := 0; i < partitions*perPartition; i++ {
		v := make([]byte, valueSize)
		copy(v, fmt.Sprintf("v%d", i/partitions))
		msgs = append(msgs, Message{Value: v})
	}
	require.NoError(t, w.WriteMessages(ctx, msgs...))
	require.NoError(t, w.Close())

	dialer := itDialer()
	reader := func(p int) *Reader {
		return itReader(t, c, topic, func(cfg *ReaderConfig) {
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
	readers := make([]*Reader, len(parts))
	for i, p := range parts {
		readers[i] = reader(p)
	}
	reReadAll(ctx, t, readers, parts, perPartition)

	queued := stalled.Stats().QueueLength
	t.Logf("ENGINEFIGURE stalled Reader: %d records (%d KiB) fetched ahead with MaxBufferedBytes %d KiB, while %d Readers read %d records each",
		queued, queued*valueSize>>10, budget>>10, len(readers), perPartition)
	assert.LessOrEqual(t, queued, int64(budget/valueSize+batch), "the stalled Reader fetched past its budget (and one record batch)")
	st := stalled.engine.Stats()
	assert.Equal(t, st, readers[0].engine.Stats(), "one engine for all")
	assert.LessOrEqual(t, st.Conns, 3, "data connections")
}

// reReadAll reads offsets 0..n-1 of partition parts[i] through readers[i],
// all Readers at once, and fails t unless each gets them in order.
func reReadAll(ctx context.Context, t *testing.T, readers []*Reader, parts []int, n int64) {
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
	c := ktesting.RequireRackCluster(t)
	ctx := itCtx(t, 2*time.Minute)
	topic, p := itRackTopic(t, c, 10)
	b := itBrokerInRack(t, c, "b")
	dialer := itDialer()
	engineIdleTimeouts.Store(dialer, time.Second)
	r := itReader(t, c, topic, func(cfg *ReaderConfig) { cfg.Dialer, cfg.Rack = dialer, "b" })
	itExpect(t, ctx, r, 0, 10)
	st := r.Stats()
	require.Len(t, st.Routing, 1)
	require.Equal(t, b, st.Routing[0].Broker, "reads moved to the rack-b follower (leader %d)", p.Leader.ID)
	require.Eventually(t, func() bool { return r.engine.Stats().Conns == 1 },
		time.Minute, 20*time.Millisecond, "the connection to the leader stayed open")

	itProduce(t, c, topic, 10, 5)
	itExpect(t, ctx, r, 10, 5)
	assert.Equal(t, 1, r.engine.Stats().Conns, "reading again opened a connection to the leader")
	st = r.Stats()
	require.Len(t, st.Routing, 1)
	assert.Equal(t, b, st.Routing[0].Broker, "records 10–14 not read from the follower")
}

// Readers sharing an engine share each broker's long poll, which a Reader
// that starts reading there would wait for. With kafka-go's MaxWait (10 s),
// a Reader started while another tail-polls the same broker still reads its
// records at once: its partition is fetched on the loop's side connection
// (fetchengine/sidelane.go) while the 10 s poll is in flight.
func TestReaderIntegrationNewReaderSkipsLongPollInFlight(t *testing.T) {
	c := ktesting.RequireRackCluster(t)
	ctx := itCtx(t, time.Minute)
	leader := itBrokerInRack(t, c, "a")
	others := []int{itBrokerInRack(t, c, "b"), itBrokerInRack(t, c, "c")}
	topic := itTopic(t, c, TopicConfig{ReplicaAssignments: []ReplicaAssignment{
		{Partition: 0, Replicas: append([]int{leader}, others...)},
		{Partition: 1, Replicas: append([]int{leader}, others...)},
	}})
	w := &Writer{Addr: TCP(c.Brokers...), Topic: topic, RequiredAcks: RequireAll,
		Balancer: BalancerFunc(func(m Message, _ ...int) int { return int(m.Key[0] - '0') })}
	defer w.Close()
	var msgs []Message
	for i := 0; i < 100; i++ {
		msgs = append(msgs, Message{Key: []byte("0"), Value: []byte("a")}, Message{Key: []byte("1"), Value: []byte("b")})
	}
	require.NoError(t, w.WriteMessages(ctx, msgs...))

	tenSeconds := func(cfg *ReaderConfig) { cfg.MaxWait = 10 * time.Second }
	a := itReader(t, c, topic, tenSeconds)
	for i := 0; i < 100; i++ {
		_, err := a.ReadMessage(ctx)
		require.NoError(t, err)
	}
	// Reader a has read everything: its fetches now long-poll the leader.
	quiet, cancel := context.WithTimeout(ctx, time.Second)
	_, err := a.ReadMessage(quiet)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "partition 0 has no more records")

	b := itReader(t, c, topic, func(cfg *ReaderConfig) { tenSeconds(cfg); cfg.Partition = 1 })
	require.True(t, a.engine == b.engine, "the two Readers share an engine")
	start := time.Now()
	m, err := b.ReadMessage(ctx)
	took := time.Since(start)
	require.NoError(t, err)
	assert.Equal(t, int64(0), m.Offset)
	t.Logf("ENGINEFIGURE a Reader started while another long-polls its broker read its first record after %v (MaxWait 10 s)", took.Round(time.Millisecond))
	assert.Less(t, took, 3*time.Second, "the second Reader's first record (not after the 10 s poll in flight)")
}
