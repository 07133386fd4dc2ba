package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// A synchronous commit that the coordinator never takes (the connection
// drops at each OffsetCommit, while heartbeats go through and keep the
// session alive) ends when the caller's context does, as CommitMessages
// and ReadMessage document; before, it retried until the Reader closed.
func TestReaderGroupCommitHonoursContext(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{})
	c.CreateTopic("t", 1, 1)
	c.AppendRecords("t", 0, "v0", "v1")
	r := NewReader(ReaderConfig{Brokers: c.Addrs(), GroupID: "g", Topic: "t", MaxWait: 50 * time.Millisecond,
		HeartbeatInterval: 50 * time.Millisecond, ReadLagInterval: -1})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m, err := r.FetchMessage(ctx)
	require.NoError(t, err)
	c.Broker(1).Handle(protocol.OffsetCommit, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return nil, fakebroker.Action{Close: true}
	})

	for _, call := range []func(context.Context) error{
		func(ctx context.Context) error { return r.CommitMessages(ctx, m) },
		func(ctx context.Context) error { _, err := r.ReadMessage(ctx); return err },
	} {
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- call(short) }()
		select {
		case err := <-done:
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Less(t, time.Since(start), 2*time.Second)
		case <-time.After(5 * time.Second):
			t.Fatal("the commit outlived its context by 5 s")
		}
		cancel()
	}
}
