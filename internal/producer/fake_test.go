package producer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/compress"
	"github.com/rackfetch/kafka-go/protocol"
)

// A runtime for tests: messages of a type of their own, settings in a
// struct, and a one-broker cluster that answers produce requests itself
// (a custom RoundTripper, so nothing is dialed).

type testMsg struct {
	Topic     string
	Partition int
	Offset    int64
	Time      time.Time
	Value     []byte
}

type testCodec struct{}

func (testCodec) Size(m *testMsg) int64 { return int64(36 + len(m.Value)) }

func (testCodec) Place(m *testMsg, tp TopicPartition, stamp time.Time) {
	m.Topic, m.Partition = tp.Topic, tp.Partition
	if m.Time.IsZero() {
		m.Time = stamp
	}
}

func (testCodec) Record(m *testMsg) protocol.Record {
	return protocol.Record{Timestamp: m.Time.UnixMilli(), Value: m.Value}
}

func (testCodec) Written(m *testMsg, offset, appendTime int64) {
	m.Offset = offset
	if appendTime >= 0 {
		m.Time = time.UnixMilli(appendTime)
	}
}

type testSettings struct {
	async      bool
	batchSize  int
	batchBytes int64
	completion func([]testMsg, error)
}

func (s *testSettings) Async() bool                        { return s.async }
func (s *testSettings) RequiredAcks() int16                { return 1 }
func (s *testSettings) Compression() compress.Compression  { return 0 }
func (s *testSettings) MaxAttempts() int                   { return 3 }
func (s *testSettings) DeliveryTimeout() time.Duration     { return 10 * time.Second }
func (s *testSettings) WriteBackoffMin() time.Duration     { return time.Millisecond }
func (s *testSettings) WriteBackoffMax() time.Duration     { return 5 * time.Millisecond }
func (s *testSettings) BatchSize() int                     { return s.batchSize }
func (s *testSettings) BatchBytes() int64                  { return s.batchBytes }
func (s *testSettings) BatchTimeout() time.Duration        { return time.Hour }
func (s *testSettings) ReadTimeout() time.Duration         { return 10 * time.Second }
func (s *testSettings) WriteTimeout() time.Duration        { return 10 * time.Second }
func (s *testSettings) Completion() func([]testMsg, error) { return s.completion }
func (s *testSettings) Logger() Logger                     { return nil }
func (s *testSettings) ErrorLogger() Logger                { return nil }

// testError is a kafka error code.
type testError int16

func (e testError) Error() string { return "kafka error " + strconv.Itoa(int(e)) }

type testStats struct{}

func (testStats) Observe(Stat, int64) {}

// testCluster is one broker (id 1) leading every partition, which
// answers each produce request with the next offsets of the partitions.
type testCluster struct {
	mu    sync.Mutex
	sizes [][]int32 // records per batch, request by request
	next  map[TopicPartition]int64
}

var testBroker = Broker{Host: "localhost", Port: 9092, ID: 1}

func (tc *testCluster) Context() context.Context                              { return context.Background() }
func (tc *testCluster) Leader(string, int) (Broker, error)                    { return testBroker, nil }
func (tc *testCluster) LeaderEpoch(string, int) (int, int, bool)              { return 1, 0, true }
func (tc *testCluster) Replicas(dst []int, _ string, _ int) []int             { return append(dst, 1) }
func (tc *testCluster) Broker(id int) (Broker, bool)                          { return testBroker, id == 1 }
func (tc *testCluster) Brokers(dst []Broker) []Broker                         { return append(dst, testBroker) }
func (tc *testCluster) MergeMetadata(*protocol.MetadataResponse)              {}
func (tc *testCluster) RefreshSince(context.Context, string, time.Time) error { return nil }
func (tc *testCluster) InitProducerID(context.Context) (*protocol.InitProducerIdResponse, error) {
	return nil, errors.New("not supported")
}
func (tc *testCluster) Dials() bool { return false }
func (tc *testCluster) Dial(context.Context, Broker) (Conn, error) {
	return nil, errors.New("the test cluster dials nothing")
}
func (tc *testCluster) IdleTimeout() time.Duration { return time.Minute }
func (tc *testCluster) Release()                   {}

func (tc *testCluster) RoundTrip(_ context.Context, _ Broker, req protocol.Request) (protocol.Response, error) {
	pr, ok := req.(*protocol.ProduceRequest)
	if !ok {
		return nil, fmt.Errorf("unexpected %T", req)
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	var sizes []int32
	if tc.next == nil {
		tc.next = map[TopicPartition]int64{}
	}
	resp := &protocol.ProduceResponse{}
	for _, t := range pr.Topics {
		rt := protocol.ProduceResponseTopic{Name: t.Name}
		for _, p := range t.Partitions {
			h, err := protocol.ParseRecordBatchHeader(p.Records)
			if err != nil {
				return nil, err
			}
			key := TopicPartition{t.Name, int(p.Index)}
			rt.Partitions = append(rt.Partitions, protocol.ProduceResponsePartition{Index: p.Index, BaseOffset: tc.next[key], LogAppendTimeMs: -1})
			tc.next[key] += int64(h.NumRecords)
			sizes = append(sizes, h.NumRecords)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	// The records are the sender's buffer, used again by its next
	// request: only their counts are kept.
	tc.sizes = append(tc.sizes, sizes)
	return resp, nil
}

// batchSizes returns the record counts of the batches produced, request
// by request.
func (tc *testCluster) batchSizes() [][]int32 {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return append([][]int32(nil), tc.sizes...)
}

// newTestCore returns a runtime on a testCluster, closed at the end of
// the test.
func newTestCore(t *testing.T, set *testSettings) (*Core[testMsg], *testCluster) {
	tc := &testCluster{}
	c := New(Config[testMsg]{
		Cluster: tc,
		Codec:   testCodec{},
		Stats:   testStats{},
		Errors: Errors[testMsg]{
			Code:      func(code int16) error { return testError(code) },
			Produce:   func(code int16, msg string) error { return fmt.Errorf("%w: %s", testError(code), msg) },
			Retriable: func(error) bool { return true },
			Temporary: func(error) bool { return false },
			TooLarge:  func(m *testMsg) error { return fmt.Errorf("too large: %q", m.Value) },
		},
		Settings: set,
	})
	t.Cleanup(c.Close)
	return c, tc
}
