package producer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
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
	acks       atomic.Int32 // RequiredAcks, stored as acks+2 so that the zero value is acks=1
}

func (s *testSettings) setAcks(acks int16) { s.acks.Store(int32(acks) + 2) }

func (s *testSettings) RequiredAcks() int16 {
	if v := s.acks.Load(); v != 0 {
		return int16(v - 2)
	}
	return 1
}

func (s *testSettings) Async() bool                        { return s.async }
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

const (
	errLeaderNotAvailable testError = 5
	errRequestTimedOut    testError = 7
	errInvalidRecord      testError = 87
)

func (e testError) Error() string { return "kafka error " + strconv.Itoa(int(e)) }

// temporary is kafka.Error.Temporary for the codes the tests use.
func (e testError) temporary() bool {
	return e == errLeaderNotAvailable || e == errRequestTimedOut || e == testError(codeNotLeaderForPartition)
}

// testRetriable is kafka's retriableWriteError for the tests: kafka
// errors that may go away, and anything else.
func testRetriable(err error) bool {
	var kerr testError
	if errors.As(err, &kerr) {
		return kerr.temporary()
	}
	return true
}

type testStats struct{}

func (testStats) Observe(Stat, int64) {}

func (testStats) ObserveLeaderRack(string, int64) {}

// testCluster is one broker (id 1) leading every partition, which
// answers each produce request with the next offsets of the partitions,
// or as the next step scripted says. It gives producer ids 1000, 1001...
type testCluster struct {
	mu       sync.Mutex
	steps    []testStep
	sizes    [][]int32                // records per batch, request by request
	batches  map[int][]testBatch      // by partition
	next     map[TopicPartition]int64 // offsets: the records appended
	inits    int                      // InitProducerId requests
	metadata int                      // Metadata requests
	received chan struct{}            // a produce request arrived
	idle     time.Duration            // IdleTimeout; a minute when 0
}

// testStep is the answer to a produce request: held until hold is
// closed, and failing every partition with code when it is not 0.
type testStep struct {
	code testError
	hold chan struct{}
}

// testBatch is the numbering of a batch received.
type testBatch struct {
	ProducerID int64
	Seq        int32
	Records    int32
}

// script makes the next produce requests answer as steps say.
func (tc *testCluster) script(steps ...testStep) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.steps = append(tc.steps, steps...)
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
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.inits++
	return &protocol.InitProducerIdResponse{ProducerID: int64(999 + tc.inits)}, nil
}
func (tc *testCluster) Dials() bool { return false }
func (tc *testCluster) Dial(context.Context, Broker) (Conn, error) {
	return nil, errors.New("the test cluster dials nothing")
}
func (tc *testCluster) IdleTimeout() time.Duration {
	if tc.idle > 0 {
		return tc.idle
	}
	return time.Minute
}
func (tc *testCluster) Release() {}

func (tc *testCluster) RoundTrip(ctx context.Context, _ Broker, req protocol.Request) (protocol.Response, error) {
	if _, ok := req.(*protocol.MetadataRequest); ok {
		tc.mu.Lock()
		tc.metadata++
		tc.mu.Unlock()
		return &protocol.MetadataResponse{}, nil
	}
	pr, ok := req.(*protocol.ProduceRequest)
	if !ok {
		return nil, fmt.Errorf("unexpected %T", req)
	}
	tc.mu.Lock()
	var step testStep
	if len(tc.steps) > 0 {
		step, tc.steps = tc.steps[0], tc.steps[1:]
	}
	tc.mu.Unlock()
	if tc.received != nil {
		tc.received <- struct{}{}
	}
	if step.hold != nil {
		select {
		case <-step.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	var sizes []int32
	if tc.next == nil {
		tc.next = map[TopicPartition]int64{}
		tc.batches = map[int][]testBatch{}
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
			sizes = append(sizes, h.NumRecords)
			tc.batches[key.Partition] = append(tc.batches[key.Partition], testBatch{h.ProducerID, h.BaseSequence, h.NumRecords})
			if step.code != 0 {
				rt.Partitions = append(rt.Partitions, protocol.ProduceResponsePartition{Index: p.Index, ErrorCode: int16(step.code)})
				continue
			}
			rt.Partitions = append(rt.Partitions, protocol.ProduceResponsePartition{Index: p.Index, BaseOffset: tc.next[key], LogAppendTimeMs: -1})
			tc.next[key] += int64(h.NumRecords)
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

// numbering returns the batches received for a partition.
func (tc *testCluster) numbering(partition int) []testBatch {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return append([]testBatch(nil), tc.batches[partition]...)
}

// appended returns how many records a partition has.
func (tc *testCluster) appended(partition int) int64 {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.next[TopicPartition{"t", partition}]
}

// openMessages counts the messages in the open batch of a partition.
func (c *Core[M]) openMessages(topic string, partition int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	pw := c.parts[TopicPartition{topic, partition}]
	if pw == nil || pw.open == nil {
		return 0
	}
	return len(pw.open.msgs)
}

// newTestCore returns a runtime on a testCluster, closed at the end of
// the test.
func newTestCore(t *testing.T, set *testSettings) (*Core[testMsg], *testCluster) {
	c, tc := newUnclosedTestCore(set)
	t.Cleanup(c.Close)
	return c, tc
}

// newUnclosedTestCore returns a runtime on a testCluster.
func newUnclosedTestCore(set *testSettings) (*Core[testMsg], *testCluster) {
	tc := &testCluster{}
	c := New(Config[testMsg]{
		Cluster: tc,
		Codec:   testCodec{},
		Stats:   testStats{},
		Errors: Errors[testMsg]{
			Code:      func(code int16) error { return testError(code) },
			Produce:   func(code int16, msg string) error { return fmt.Errorf("%w: %s", testError(code), msg) },
			Retriable: testRetriable,
			Temporary: func(err error) bool {
				var kerr testError
				return errors.As(err, &kerr) && kerr.temporary()
			},
			TooLarge: func(m *testMsg) error { return fmt.Errorf("too large: %q", m.Value) },
		},
		Settings: set,
	})
	return c, tc
}
