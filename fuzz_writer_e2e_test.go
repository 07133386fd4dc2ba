package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// writerFuzzKeys are the answers FuzzWriterBrokerResponses corrupts.
var writerFuzzKeys = []protocol.ApiKey{protocol.Produce, protocol.Metadata, protocol.ApiVersions}

// writerFuzzMessages is what each iteration writes.
const writerFuzzMessages = 4

// writerFuzzWrite writes writerFuzzMessages keyed messages to topic t (two
// partitions on two brokers) with acks=all and returns the error of the
// call. Attempts that cannot reach a leader (a dial whose handshake
// answer is corrupted, metadata naming no leader) are retried within
// DeliveryTimeout, and Close waits for them: it is kept short.
func writerFuzzWrite(c *fakebroker.Cluster) error {
	w := &Writer{
		Addr:            TCP(c.Addrs()...),
		Topic:           "t",
		RequiredAcks:    RequireAll,
		MaxAttempts:     3,
		WriteBackoffMin: 5 * time.Millisecond,
		WriteBackoffMax: 20 * time.Millisecond,
		BatchTimeout:    time.Millisecond,
		DeliveryTimeout: e2eDeadline,
		ReadTimeout:     e2eDeadline,
		WriteTimeout:    e2eDeadline,
		Transport:       &Transport{DialTimeout: time.Second},
	}
	defer w.Close()
	msgs := make([]Message, writerFuzzMessages)
	for i := range msgs {
		msgs[i] = Message{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("v%d", i))}
	}
	ctx, cancel := context.WithTimeout(context.Background(), e2eDeadline)
	defer cancel()
	return w.WriteMessages(ctx, msgs...)
}

// writerFuzzLogged returns the values the partitions of t hold, by value,
// with how many times each is held.
func writerFuzzLogged(c *fakebroker.Cluster) map[string]int {
	held := map[string]int{}
	for p := int32(0); p < 2; p++ {
		for _, r := range c.Records("t", p) {
			held[string(r.Key)+"="+string(r.Value)]++
		}
	}
	return held
}

// requireWritten checks that the log holds only messages that were
// written and, when the call succeeded, every one of them.
func requireWritten(t *testing.T, held map[string]int, err error, m e2eMutation) {
	written := map[string]bool{}
	for i := 0; i < writerFuzzMessages; i++ {
		written[fmt.Sprintf("k%d=v%d", i, i)] = true
	}
	for kv := range held {
		require.True(t, written[kv], "the log holds %q, never written (%s answers corrupted: %+v)", kv, m.key, m)
	}
	if err == nil {
		for kv := range written {
			require.Positive(t, held[kv], "WriteMessages succeeded but %q is not in the log (%s answers corrupted: %+v)", kv, m.key, m)
		}
	}
}

// TestFuzzWriterBrokerResponsesSeeds checks that without corruption every
// message is written once.
func TestFuzzWriterBrokerResponsesSeeds(t *testing.T) {
	c := writerFuzzCluster(t)
	m := newE2EMutation(writerFuzzKeys, 0, 0, e2eXor, 0, nil)
	installMutation(c, m)
	require.NoError(t, writerFuzzWrite(c))
	held := writerFuzzLogged(c)
	requireWritten(t, held, nil, m)
	require.Len(t, held, writerFuzzMessages)
}

func writerFuzzCluster(t testing.TB) *fakebroker.Cluster {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 2})
	c.CreateTopic("t", 2, 2)
	return c
}

// FuzzWriterBrokerResponses runs a Writer against a fake whose answers of
// one kind are corrupted: it must not panic, must end in bounded time,
// requests and allocations, and must either fail or have written every
// message (a retry may write one twice; nothing else may be written).
func FuzzWriterBrokerResponses(f *testing.F) {
	e2eSeeds(len(writerFuzzKeys), func(op, mode byte, pos uint16, patch []byte) { f.Add(op, byte(0), mode, pos, patch) })
	f.Fuzz(func(t *testing.T, op, nth, mode byte, pos uint16, patch []byte) {
		c := writerFuzzCluster(t)
		m := newE2EMutation(writerFuzzKeys, op, nth, mode, pos, patch)
		installMutation(c, m)
		var err error
		e2eBounded(t, c, m, func() { err = writerFuzzWrite(c) })
		requireWritten(t, writerFuzzLogged(c), err, m)
	})
}
