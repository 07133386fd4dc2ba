package integration

// Integration test of the Reader's wait for an offset past the log end on
// the real cluster: SetOffset(42) on a topic created a moment ago, before
// any write; the Reader must wait for offset 42 while the writes arrive and
// never deliver (nor move back to) anything below it.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReaderIntegrationOffsetPastEndWaited(t *testing.T) {
	c := requireRackCluster(t)
	// The race the issue saw (the reader resolving [0, 0] before the first
	// write lands) depends on timing: several fresh topics.
	for run := 0; run < 4; run++ {
		t.Run(fmt.Sprint(run), func(t *testing.T) {
			rpiRun(t, c)
		})
	}
}

func rpiRun(t *testing.T, c *ktesting.Cluster) {
	topic := ktesting.UniqueTopic(t)
	// Created without waiting for it to settle: the reader starts while
	// the leader may not host the partition yet.
	require.NoError(t, dialController(t, c).CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: 1, ReplicationFactor: 3}))
	t.Cleanup(func() {
		if conn, err := newDialer().Dial("tcp", c.Brokers[0]); err == nil {
			conn.SetDeadline(time.Now().Add(itTimeout))
			conn.DeleteTopics(topic)
			conn.Close()
		}
	})
	ctx := testContext(t, 90*time.Second)
	errLog := &riLogger{t: t, prefix: "reader error: "}
	r := riReader(t, c, topic, func(cfg *kafka.ReaderConfig) {
		cfg.ErrorLogger = errLog
		cfg.ReadBackoffMin, cfg.ReadBackoffMax = 20*time.Millisecond, 200*time.Millisecond
	})
	require.NoError(t, r.SetOffset(42))

	type result struct {
		m   kafka.Message
		err error
	}
	got := make(chan result, 200)
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for {
			m, err := r.FetchMessage(rctx)
			if rctx.Err() != nil {
				return
			}
			got <- result{m, err}
			if err != nil {
				return
			}
		}
	}()

	w := &kafka.Writer{Addr: kafka.TCP(c.Brokers...), Topic: topic, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	defer w.Close()
	for i := 0; i < 100; i += 10 {
		var msgs []kafka.Message
		for j := i; j < i+10; j++ {
			msgs = append(msgs, kafka.Message{Key: []byte(fmt.Sprintf("k%d", j)), Value: []byte(fmt.Sprintf("v%d", j))})
		}
		// A fresh topic may not be known to every broker yet: retry.
		for {
			err := w.WriteMessages(ctx, msgs...)
			if err == nil {
				break
			}
			require.NoError(t, ctx.Err(), "writing: %v", err)
			t.Logf("write retried: %v", err)
			time.Sleep(100 * time.Millisecond)
		}
	}

	for want := int64(42); want < 100; want++ {
		select {
		case res := <-got:
			require.NoError(t, res.err, "FetchMessage")
			require.Equal(t, want, res.m.Offset, "first message read must be 42, then in order; never below 42")
			assert.Equal(t, fmt.Sprintf("v%d", want), string(res.m.Value))
		case <-ctx.Done():
			t.Fatalf("offset %d not delivered", want)
		}
	}
	assert.Empty(t, errLog.find("moving to offset"), "the position moved")
	t.Logf("wait lines logged: %d", rpiCount(errLog, "past the last offset"))
}

func rpiCount(l *riLogger, sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}
