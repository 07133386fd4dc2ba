package kafka

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/internal/producer"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// Fake-broker tests of the Writer's leader handling (internal/producer/leader.go): acks=0 only to a leader that
// answered for the partition, acks=0 produces the broker refused by
// closing the connection, and leaving a leader that stopped answering.

// wtKafkaAcksNone makes broker b behave as Kafka does with produce
// requests while hosts() is false (the partition has not reached the
// broker yet): acks=0 gets the connection closed, acks>0 gets
// NotLeaderOrFollower.
func wtKafkaAcksNone(b *fakebroker.Broker, hosts func() bool) {
	b.Handle(protocol.Produce, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		r := req.(*protocol.ProduceRequest)
		if hosts() {
			return b.Default(req, hdr), fakebroker.Action{}
		}
		if r.Acks == 0 {
			return nil, fakebroker.Action{Close: true}
		}
		return wtErrorResponse(r, func(string, int32) int16 { return int16(NotLeaderForPartition) }), fakebroker.Action{}
	})
}

func wtAcks(b *fakebroker.Broker) []int16 {
	var out []int16
	for _, r := range wtProduced(b) {
		out = append(out, r.Acks)
	}
	return out
}

// A leader named by the metadata that does not host the partition yet (a
// topic just created) would drop an acks=0 produce: the first produce to a
// leader goes with acks=1, so the refusal is seen and retried, and the
// write succeeds only once stored. Later writes use acks=0, until the
// leader changes: the new leader is confirmed again.
func TestWriterConfirmsLeaderBeforeAcksNone(t *testing.T) {
	c := wtCluster(t, 2, 1)
	b1, b2 := c.Broker(1), c.Broker(2)
	var hosts atomic.Bool
	wtKafkaAcksNone(b1, func() bool {
		// The partition arrives after the first refusal.
		return !hosts.CompareAndSwap(false, true)
	})
	w := wtWriter(t, c)
	w.RequiredAcks = RequireNone
	ctx := wtContext(t)

	require.NoError(t, w.WriteMessages(ctx, Message{Value: []byte("a")}))
	wtSameValues(t, "log after the first write", wtValues(c, wtTopic, 0), "a")
	assert.Equal(t, []int16{1, 1}, wtAcks(b1), "first produce refused, retried, both with acks=1")

	require.NoError(t, w.WriteMessages(ctx, Message{Value: []byte("b")}))
	assert.Equal(t, []int16{1, 1, 0}, wtAcks(b1), "once the leader answered, acks=0")

	c.SetLeader(wtTopic, 0, 2)
	b1.Handle(protocol.Produce, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		if req.(*protocol.ProduceRequest).Acks == 0 {
			return nil, fakebroker.Action{Close: true} // not the leader any more
		}
		return b1.Default(req, hdr), fakebroker.Action{}
	})
	require.NoError(t, w.WriteMessages(ctx, Message{Value: []byte("c")}))
	require.NoError(t, w.WriteMessages(ctx, Message{Value: []byte("d")}))
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "a", "b", "c", "d")
	acks1 := wtAcks(b1)
	require.NotEmpty(t, acks1)
	if len(acks1) > 3 {
		// The old leader refused "c" (acks=0, connection closed): the
		// retry went to the new leader.
		assert.Equal(t, []int16{1, 1, 0, 0}, acks1)
	}
	assert.Equal(t, []int16{1, 0}, wtAcks(b2), "the new leader is confirmed with acks=1 first")
}

// The broker closes the connection after an acks=0 produce (Kafka's
// answer to a refused one): the write is not reported written. With one
// attempt it fails; with retries it is confirmed again (acks=1) and
// stored once.
func TestWriterAcksNoneClosedConnectionFails(t *testing.T) {
	c := wtCluster(t, 1, 1)
	b := c.Broker(1)
	var refuse atomic.Bool
	wtKafkaAcksNone(b, func() bool { return !refuse.Load() })
	w := wtWriter(t, c)
	w.RequiredAcks = RequireNone
	ctx := wtContext(t)
	require.NoError(t, w.WriteMessages(ctx, Message{Value: []byte("confirmed")}))

	refuse.Store(true)
	w.MaxAttempts = 1
	err := w.WriteMessages(ctx, Message{Value: []byte("refused")})
	require.Error(t, err)
	assert.ErrorIs(t, err, producer.ErrAcksNoneClosed)
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "confirmed")

	// The broker takes writes again; the leader is confirmed again
	// before acks=0 is used.
	refuse.Store(false)
	require.NoError(t, w.WriteMessages(ctx, Message{Value: []byte("again")}))
	require.NoError(t, w.WriteMessages(ctx, Message{Value: []byte("then")}))
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "confirmed", "again", "then")
	assert.Equal(t, []int16{1, 0, 1, 0}, wtAcks(b))
}

// The leader of a partition stops answering (a frozen broker keeps its
// connections open) and the cluster elects another: the Writer notices
// through the metadata, read from another broker, and writes to the new
// leader well before the request's deadline, with the same producer id
// and sequence, so that Kafka would not store the batch twice.
func TestWriterLeavesFrozenLeader(t *testing.T) {
	c := wtCluster(t, 2, 1)
	b1, b2 := c.Broker(1), c.Broker(2)
	w := wtWriter(t, c)
	w.WriteTimeout = 30 * time.Second
	ctx := wtContext(t)
	require.NoError(t, w.WriteMessages(ctx, Message{Value: []byte("before")}))

	frozen := make(chan struct{})
	var once sync.Once
	thaw := func() { once.Do(func() { close(frozen) }) }
	t.Cleanup(thaw)
	b1.Handle(protocol.Produce, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return nil, fakebroker.Action{Wait: frozen}
	})
	// Metadata from the frozen broker would hang too.
	b1.Handle(protocol.Metadata, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return b1.Default(req, hdr), fakebroker.Action{Wait: frozen}
	})
	errc := make(chan error, 1)
	start := time.Now()
	go func() { errc <- w.WriteMessages(ctx, Message{Value: []byte("during")}) }()
	<-b1.Await(protocol.Produce, 2)
	c.SetLeader(wtTopic, 0, 2)
	elected := time.Now()

	select {
	case err := <-errc:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the write did not move to the new leader within 10s")
	}
	took := time.Since(elected)
	t.Logf("written %s after the write started, %s after the election", time.Since(start), took)
	assert.Less(t, took, producer.StallAfter+producer.PollTimeout+producer.PollInterval+time.Second, "time from the election to the write at the new leader")
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "before", "during")

	p1, p2 := wtProduced(b1), wtProduced(b2)
	require.Len(t, p1, 2)
	require.Len(t, p2, 1)
	h1 := wtBatches(t, b1, 0)
	h2 := wtBatches(t, b2, 0)
	require.Len(t, h1, 2)
	require.Len(t, h2, 1)
	assert.Equal(t, h1[1].ProducerID, h2[0].ProducerID, "the retry keeps the producer id")
	assert.Equal(t, h1[1].BaseSequence, h2[0].BaseSequence, "the retry keeps the sequence")
	assert.GreaterOrEqual(t, h1[1].ProducerID, int64(0))
}

// A leader that is slow but stays leader is waited for: the watch reads
// the metadata and keeps the request.
func TestWriterWaitsForSlowLeader(t *testing.T) {
	c := wtCluster(t, 2, 1)
	b1 := c.Broker(1)
	w := wtWriter(t, c)
	ctx := wtContext(t)
	require.NoError(t, w.WriteMessages(ctx, Message{Value: []byte("warm")}))
	release := make(chan struct{})
	b1.Handle(protocol.Produce, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return b1.Default(req, hdr), fakebroker.Action{Wait: release}
	})
	errc := make(chan error, 1)
	go func() { errc <- w.WriteMessages(ctx, Message{Value: []byte("slow")}) }()
	// The watch polls broker 2 once the request is overdue.
	polled := c.Broker(2).Requests(protocol.Metadata)
	deadline := time.Now().Add(10 * time.Second)
	for c.Broker(2).Requests(protocol.Metadata) < polled+2 {
		require.True(t, time.Now().Before(deadline), "no metadata poll while the request was overdue")
		select {
		case err := <-errc:
			t.Fatalf("write ended while held: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	close(release)
	require.NoError(t, <-errc)
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "warm", "slow")
	assert.Len(t, wtProduced(b1), 2, "no retry while the leader stays")
}
