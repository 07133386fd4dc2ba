package integration

// The lag check's sampling of a leader whose partitions are read from a follower, as the brokers see it:
// the ListOffsets requests (latest offsets) the Readers send to the leader, and the long polls of the
// follower. A leader whose readers stand at its high watermarks is quiet: sampled every 5 minutes, its
// follower long-polled for MaxWait.

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/protocol"
)

// qlSample is one request of the lag check: the latest offsets of some partitions of a topic.
type qlSample struct {
	at         time.Time
	partitions []int32
}

func (s qlSample) String() string {
	return fmt.Sprintf("%s %v", s.at.Format("15:04:05.000"), s.partitions)
}

// qlSamples returns the ListOffsets requests spy saw that ask topic's latest offsets.
func qlSamples(t *testing.T, spy *apiSpy, topic string) []qlSample {
	t.Helper()
	var out []qlSample
	for _, r := range spy.requests(apiListOffsets) {
		h, d, err := protocol.DecodeRequestHeader(r.frame, protocol.FlexibleFrom)
		require.NoError(t, err, "decoding a ListOffsets request header")
		var req protocol.ListOffsetsRequest
		require.NoError(t, req.Decode(d, h.Version), "decoding a ListOffsets v%d request", h.Version)
		s := qlSample{at: r.at}
		for _, tp := range req.Topics {
			for _, p := range tp.Partitions {
				if tp.Name == topic && p.Timestamp == -1 {
					s.partitions = append(s.partitions, p.PartitionIndex)
				}
			}
		}
		if len(s.partitions) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// qlLongPollAfter reports whether a Fetch request with MaxWait long was sent after t (an incremental
// fetch session's request names only the partitions that changed, so the request is not looked into).
func qlLongPollAfter(t *testing.T, spy *apiSpy, long time.Duration, after time.Time) bool {
	t.Helper()
	for _, r := range spy.requests(apiFetch) {
		if !r.at.After(after) {
			continue
		}
		h, d, err := protocol.DecodeRequestHeader(r.frame, protocol.FlexibleFrom)
		require.NoError(t, err, "decoding a Fetch request header")
		var req protocol.FetchRequest
		require.NoError(t, req.Decode(d, h.Version), "decoding a Fetch v%d request", h.Version)
		if time.Duration(req.MaxWaitMs)*time.Millisecond == long {
			return true
		}
	}
	return false
}

// A rack-b Reader of a partition led in rack a reads from the rack-b follower. The leader's answer that
// names the follower is the lag check's first sample (the leader names only in-sync replicas, which hold
// everything below its high watermark): the Reader is behind it then (the application holds it back), and
// once the follower has brought it there, the leader is quiet and the follower is long-polled (MaxWait,
// 10 s), without a ListOffsets. A partition of the same leader that a second Reader starts later joins
// the same way. MaxFollowerLag is 60 s, so that the sampler's own pace (MaxFollowerLag/8) does not come
// while the application reads.
func TestReaderIntegrationQuietLeaderWithoutSamples(t *testing.T) {
	c := requireRackCluster(t)
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: []kafka.ReplicaAssignment{
		{Partition: 0, Replicas: []int{a, b, cc}},
		{Partition: 1, Replicas: []int{a, b, cc}},
	}})
	// Ten batches in partition 0: with MaxBytes below two of them and a queue of one message, a fetch
	// brings one, and the Reader is behind the leader's end until the application has read.
	const batches, per = 10, 10
	conn := dialLeader(t, newDialer(), c.Brokers[0], topic, 0)
	for i := 0; i < batches; i++ {
		msgs := make([]kafka.Message, per)
		for j := range msgs {
			msgs[j] = kafka.Message{Value: []byte(fmt.Sprintf("v%d", i*per+j))}
		}
		_, err := conn.WriteMessages(msgs...)
		require.NoError(t, err, "producing batch %d", i)
	}
	conn.Close()
	riProduceTo(t, c, topic, 1, 5)

	spy := &apiSpy{keep: map[int16]bool{apiFetch: true, apiListOffsets: true}}
	dialer := spy.dialer(newDialer())
	const maxWait = 10 * time.Second
	newReader := func(p int) *kafka.Reader {
		return riReader(t, c, topic, func(cfg *kafka.ReaderConfig) {
			cfg.Partition, cfg.Dialer, cfg.Rack, cfg.MaxWait = p, dialer, "b", maxWait
			cfg.MaxBytes, cfg.QueueCapacity, cfg.MaxFollowerLag = 200, 1, time.Minute
		})
	}
	ctx := testContext(t, 2*time.Minute)
	r0 := newReader(0)
	for i := 0; i < batches*per; i++ {
		m, err := r0.FetchMessage(ctx)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("v%d", i), string(m.Value))
	}
	read := time.Now()
	eventually(t, 30*time.Second, "a 10 s poll of the follower", func() bool {
		return qlLongPollAfter(t, spy, maxWait, read)
	})
	st := r0.RoutingStats()
	require.Len(t, st.Partitions, 1)
	assert.Equal(t, b, st.Partitions[0].Broker, "partition 0 read from the rack-b follower")
	assert.Empty(t, qlSamples(t, spy, topic), "ListOffsets of the leader before the follower's long poll")

	// A partition joins the quiet leader's follower reads.
	r1 := newReader(1)
	for i := 0; i < 5; i++ {
		_, err := r1.FetchMessage(ctx)
		require.NoError(t, err)
	}
	read = time.Now()
	eventually(t, 30*time.Second, "the follower long-polled after partition 1 joined", func() bool {
		return qlLongPollAfter(t, spy, maxWait, read)
	})
	assert.Empty(t, qlSamples(t, spy, topic), "ListOffsets of the leader")
	st = r1.RoutingStats()
	require.Len(t, st.Partitions, 1)
	assert.Equal(t, b, st.Partitions[0].Broker, "partition 1 read from the rack-b follower")
}
