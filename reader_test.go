package kafka

// Unit tests of the Reader on the in-process fake brokers: exact delivery,
// the batch API, the queue bound, fetch errors, leader changes, offset
// resets and truncation (KIP-320). Helpers are prefixed rt.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// rtCluster starts fake brokers with topic "t" (partitions, RF) led by
// broker 1 for partition 0.
func rtCluster(t testing.TB, cfg fakebroker.Config, partitions, rf int) *fakebroker.Cluster {
	t.Helper()
	c := fakebroker.NewCluster(t, cfg)
	c.CreateTopic("t", partitions, rf)
	return c
}

// rtAppend appends n records "prefix-i" as one batch to t/partition.
func rtAppend(c *fakebroker.Cluster, partition int32, from, n int) {
	vals := make([]string, n)
	for i := range vals {
		vals[i] = fmt.Sprintf("v%d", from+i)
	}
	c.AppendRecords("t", partition, vals...)
}

// rtLogger collects log lines.
type rtLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *rtLogger) Printf(format string, args ...interface{}) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

// all returns the lines logged so far.
func (l *rtLogger) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

func (l *rtLogger) find(sub string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			return s
		}
	}
	return ""
}

// rtReader returns a partition reader of t/0 with quick timings, closed at
// the end of the test.
func rtReader(t testing.TB, c *fakebroker.Cluster, edit func(*ReaderConfig)) *Reader {
	t.Helper()
	cfg := ReaderConfig{
		Brokers:         c.Addrs()[:1],
		Topic:           "t",
		MaxWait:         500 * time.Millisecond,
		ReadBackoffMin:  5 * time.Millisecond,
		ReadBackoffMax:  50 * time.Millisecond,
		ReadLagInterval: -1,
		Dialer:          &Dialer{ClientID: "reader-test", Timeout: 5 * time.Second},
	}
	if edit != nil {
		edit(&cfg)
	}
	r := NewReader(cfg)
	t.Cleanup(func() { r.Close() })
	return r
}

func rtCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// rtExpect reads n messages and checks they are v{from}..v{from+n-1} at
// offsets from..from+n-1.
func rtExpect(t testing.TB, r *Reader, from, n int) {
	t.Helper()
	ctx := rtCtx(t)
	for i := from; i < from+n; i++ {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatalf("FetchMessage (want offset %d): %v", i, err)
		}
		if m.Offset != int64(i) || string(m.Value) != fmt.Sprintf("v%d", i) || m.Topic != "t" || m.Partition != 0 {
			t.Fatalf("got %s/%d offset %d %q, want offset %d v%d", m.Topic, m.Partition, m.Offset, m.Value, i, i)
		}
	}
}

func TestReaderConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  ReaderConfig
		want string
	}{
		{ReaderConfig{Topic: "t"}, "empty list of broker"},
		{ReaderConfig{Brokers: []string{"x"}}, "empty topic"},
		{ReaderConfig{Brokers: []string{"x"}, Topic: "t", Partition: -1}, "partition number"},
		{ReaderConfig{Brokers: []string{"x"}, GroupID: "g", Topic: "t", Partition: 1}, "either Partition or GroupID"},
		{ReaderConfig{Brokers: []string{"x"}, GroupID: "g"}, "either Topic or GroupTopics"},
		{ReaderConfig{Brokers: []string{"x"}, Topic: "t", MinBytes: 10, MaxBytes: 5}, "minimum batch size greater"},
		{ReaderConfig{Brokers: []string{"x"}, Topic: "t", ReadBackoffMin: -1}, "ReadBackoffMin"},
		{ReaderConfig{Brokers: []string{"x"}, Topic: "t", RackPreferenceTTL: -1}, "RackPreferenceTTL"},
		{ReaderConfig{Brokers: []string{"x"}, GroupID: "g", Topic: "t", StartOffset: 5}, "StartOffset"},
		{ReaderConfig{Brokers: []string{"x"}, Topic: "t"}, ""},
	} {
		err := tc.cfg.Validate()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
	r := NewReader(ReaderConfig{Brokers: []string{"127.0.0.1:1"}, Topic: "t"})
	defer r.Close()
	cfg := r.Config()
	if cfg.MinBytes != 1 || cfg.MaxBytes != 1e6 || cfg.MaxWait != 10*time.Second || cfg.QueueCapacity != 100 ||
		cfg.ReadBackoffMin != 100*time.Millisecond || cfg.ReadBackoffMax != time.Second || cfg.MaxAttempts != 3 ||
		cfg.RackPreferenceTTL != 5*time.Minute || cfg.ReplicaCooldown != 5*time.Minute || cfg.StartOffset != FirstOffset ||
		cfg.Dialer != DefaultDialer || cfg.ReadLagInterval != time.Minute || cfg.ReadBatchTimeout != 10*time.Second {
		t.Errorf("defaults: %+v", cfg)
	}
}

// Every message, in order, once; Offset, Lag and Stats follow.
func TestReaderPartitionSequence(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	for i := 0; i < 4; i++ {
		rtAppend(c, 0, i*5, 5)
	}
	r := rtReader(t, c, func(cfg *ReaderConfig) { cfg.MaxBytes = 1; cfg.MinBytes = 1 }) // one batch per fetch
	if r.Offset() != FirstOffset || r.Lag() != -1 {
		t.Fatalf("before reading: offset %d lag %d", r.Offset(), r.Lag())
	}
	rtExpect(t, r, 0, 12)
	if r.Offset() != 12 || r.Lag() != 8 {
		t.Fatalf("after 12: offset %d lag %d, want 12 and 8", r.Offset(), r.Lag())
	}
	rtExpect(t, r, 12, 8)
	if r.Offset() != 20 || r.Lag() != 0 {
		t.Fatalf("after 20: offset %d lag %d", r.Offset(), r.Lag())
	}
	// New records arrive while the reader polls.
	rtAppend(c, 0, 20, 3)
	rtExpect(t, r, 20, 3)

	st := r.Stats()
	if st.Messages != 23 || st.Bytes != 23*3-10 || st.Fetches < 5 || st.Dials < 1 || st.Topic != "t" || st.Partition != "0" ||
		st.ClientID != "reader-test" || st.QueueCapacity != 100 || st.MaxBytes != 1 || st.FetchSize.Max != 5 {
		t.Errorf("stats: %+v", st)
	}
	if len(st.Routing) != 1 || st.Routing[0].Broker != 1 || st.Routing[0].Leader != 1 || st.Routing[0].CrossRackBytes == 0 || st.Routing[0].SameRackBytes != 0 {
		t.Errorf("routing: %+v", st.Routing)
	}
	if st := r.Stats(); st.Messages != 0 {
		t.Errorf("counters not reset by Stats: %+v", st)
	}
}

// FetchBatch returns every message of one fetch; FetchMessage then
// FetchBatch returns the rest of it.
func TestReaderFetchBatch(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 7)
	r := rtReader(t, c, nil)
	ctx := rtCtx(t)
	m, err := r.FetchMessage(ctx)
	if err != nil || m.Offset != 0 {
		t.Fatalf("FetchMessage: %v %+v", err, m)
	}
	b, err := r.FetchBatch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b.Topic != "t" || b.Partition != 0 || b.HighWaterMark != 7 || len(b.Messages) != 6 || b.Messages[0].Offset != 1 || string(b.Messages[5].Value) != "v6" {
		t.Fatalf("batch: %+v", b)
	}
	if r.Offset() != 7 || r.Lag() != 0 {
		t.Fatalf("offset %d lag %d", r.Offset(), r.Lag())
	}
	rtAppend(c, 0, 7, 3)
	rtAppend(c, 0, 10, 2)
	b, err = r.FetchBatch(ctx)
	if err != nil || len(b.Messages) == 0 || b.Messages[0].Offset != 7 {
		t.Fatalf("second batch: %v %+v", err, b)
	}
}

// FetchBatchInto reuses the caller's array: the messages come in order,
// the array is the same once it holds a whole batch, copies taken before
// the next call keep their values, and a shorter batch leaves nothing of
// the longer one behind the new length.
func TestReaderFetchBatchInto(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 10)
	r := rtReader(t, c, func(cfg *ReaderConfig) { cfg.QueueCapacity = 4 })
	ctx := rtCtx(t)
	var b MessageBatch
	var kept []Message
	var arrays []*Message
	for len(kept) < 10 {
		require.NoError(t, r.FetchBatchInto(ctx, &b))
		require.NotEmpty(t, b.Messages)
		require.LessOrEqual(t, len(b.Messages), 4)
		assert.Equal(t, "t", b.Topic)
		assert.Equal(t, int64(10), b.HighWaterMark)
		arrays = append(arrays, &b.Messages[:1][0])
		for _, m := range b.Messages {
			assert.Equal(t, int64(len(kept)), m.Offset)
			kept = append(kept, m)
		}
		if n := len(b.Messages); n < cap(b.Messages) {
			for _, stale := range b.Messages[n:cap(b.Messages)] {
				assert.Nil(t, stale.Value, "an entry past the batch still points into fetched data")
			}
		}
	}
	for i, m := range kept {
		assert.Equal(t, fmt.Sprintf("v%d", i), string(m.Value), "a message copied out of the batch changed")
	}
	for _, a := range arrays[1:] {
		assert.Same(t, arrays[0], a, "FetchBatchInto allocated a new array though the old one held the batch")
	}
	assert.Equal(t, int64(10), r.Offset())

	// A call that waits drops the batch it was given first: a Message
	// points into its whole fetch response, which the waiting caller
	// would otherwise keep alive (many Readers waiting kept every one).
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, r.FetchBatchInto(short, &b), context.DeadlineExceeded)
	assert.Empty(t, b.Messages, "a failed call leaves an empty batch")
	assert.Equal(t, MessageBatch{Messages: b.Messages}, b)
	for _, stale := range b.Messages[:cap(b.Messages)] {
		assert.Equal(t, Message{}, stale, "an entry of the array still points into fetched data while the call waited")
	}
}

// QueueCapacity bounds the pieces FetchBatch hands out, in order; the queue
// holds one fetch (the 25 messages) at most.
func TestReaderQueueCapacity(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 25)
	r := rtReader(t, c, func(cfg *ReaderConfig) { cfg.QueueCapacity = 4 })
	ctx := rtCtx(t)
	next := int64(0)
	for next < 25 {
		b, err := r.FetchBatch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Messages) > 4 {
			t.Fatalf("batch of %d messages with QueueCapacity 4", len(b.Messages))
		}
		for _, m := range b.Messages {
			if m.Offset != next {
				t.Fatalf("offset %d, want %d", m.Offset, next)
			}
			next++
		}
		if q := r.Stats().QueueLength; q > 25-next {
			t.Fatalf("queue length %d > the %d messages not read yet", q, 25-next)
		}
	}
}

// An error on the 3rd fetch loses and repeats nothing.
func TestReaderFetchErrorOnThirdFetch(t *testing.T) {
	for _, code := range []int16{6 /* not leader */, 7 /* timeout */, 56 /* storage */} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			c := rtCluster(t, fakebroker.Config{}, 1, 1)
			for i := 0; i < 5; i++ {
				rtAppend(c, 0, i*3, 3)
			}
			c.Broker(1).Script(protocol.Fetch, 3, fakebroker.Step{ErrorCode: code})
			r := rtReader(t, c, func(cfg *ReaderConfig) { cfg.MaxBytes = 1 })
			rtExpect(t, r, 0, 15)
			if n := c.Broker(1).Requests(protocol.Fetch); n < 6 {
				t.Fatalf("%d fetches", n)
			}
		})
	}
}

// A dropped connection on the 2nd fetch: the reader redials and goes on.
func TestReaderConnectionDropped(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	for i := 0; i < 3; i++ {
		rtAppend(c, 0, i*3, 3)
	}
	c.Broker(1).Script(protocol.Fetch, 2, fakebroker.Step{Action: fakebroker.Action{Close: true}})
	r := rtReader(t, c, func(cfg *ReaderConfig) { cfg.MaxBytes = 1 })
	rtExpect(t, r, 0, 9)
	if st := r.Stats(); st.Dials < 2 {
		t.Fatalf("dials %d, want a redial", st.Dials)
	}
}

// The leader moves to broker 2: the reader follows it, checks its
// position there (OffsetForLeaderEpoch) and delivers everything once.
func TestReaderLeaderChange(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{Brokers: 3}, 1, 3)
	rtAppend(c, 0, 0, 5)
	log := &rtLogger{}
	r := rtReader(t, c, func(cfg *ReaderConfig) { cfg.Logger = log })
	rtExpect(t, r, 0, 5)
	c.SetLeader("t", 0, 2)
	rtAppend(c, 0, 5, 5)
	rtExpect(t, r, 5, 5)
	if c.Broker(2).Requests(protocol.Fetch) == 0 {
		t.Fatal("no fetch reached the new leader")
	}
	if c.Broker(2).Requests(protocol.OffsetForLeaderEpoch) == 0 {
		t.Error("the position was not checked at the new leader")
	}
	if s := log.find("broker 1 (rack none) → broker 2 (rack none), leader changed"); s == "" {
		t.Errorf("no reroute log line in %q", log.all())
	}
	st := r.Stats()
	if st.Routing[0].Broker != 2 || st.Routing[0].Reroutes[RerouteLeaderChanged] != 1 {
		t.Errorf("routing: %+v", st.Routing)
	}
}

// The leader says the position is gone (retention): reset to the first
// offset, or return the error with OffsetOutOfRangeError.
func TestReaderOffsetOutOfRange(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	for i := 0; i < 4; i++ {
		rtAppend(c, 0, i*5, 5)
	}
	c.SetLogStartOffset("t", 0, 10)

	t.Run("reset", func(t *testing.T) {
		log := &rtLogger{}
		r := rtReader(t, c, func(cfg *ReaderConfig) { cfg.ErrorLogger = log })
		if err := r.SetOffset(3); err != nil {
			t.Fatal(err)
		}
		rtExpect(t, r, 10, 10)
		if log.find("moving to offset 10") == "" {
			t.Errorf("reset not logged: %q", log.all())
		}
	})
	t.Run("reset to last", func(t *testing.T) {
		r := rtReader(t, c, func(cfg *ReaderConfig) { cfg.StartOffset = LastOffset })
		r.SetOffset(3)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		if m, err := r.FetchMessage(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %+v %v, want nothing (at the end)", m, err)
		}
		if r.Offset() != 3 {
			t.Fatalf("offset %d", r.Offset())
		}
	})
	t.Run("past the end", func(t *testing.T) {
		// Waited for (kafka-go): nothing below it is delivered.
		r := rtReader(t, c, nil)
		r.SetOffset(22)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		r.FetchMessage(ctx)
		rtAppend(c, 0, 20, 3)
		rtExpect(t, r, 22, 1)
	})
	t.Run("error", func(t *testing.T) {
		r := rtReader(t, c, func(cfg *ReaderConfig) { cfg.OffsetOutOfRangeError = true })
		r.SetOffset(3)
		_, err := r.FetchMessage(rtCtx(t))
		if !errors.Is(err, OffsetOutOfRange) {
			t.Fatalf("got %v, want OffsetOutOfRange", err)
		}
		// SetOffset starts the partition again.
		r.SetOffset(12)
		rtExpect(t, r, 12, 3)
	})
}

// After a leader change the new leader's log for the last epoch read ends
// below the position: truncation is reported and reading resumes where
// the logs diverge.
func TestReaderTruncationDetected(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{Brokers: 2}, 1, 2)
	rtAppend(c, 0, 0, 10)
	log := &rtLogger{}
	r := rtReader(t, c, func(cfg *ReaderConfig) { cfg.ErrorLogger = log })
	rtExpect(t, r, 0, 10)
	// The new leader says epoch 0 ended at offset 7.
	c.Broker(2).Script(protocol.OffsetForLeaderEpoch, 1, fakebroker.Step{Edit: func(resp protocol.Response) {
		p := &resp.(*protocol.OffsetForLeaderEpochResponse).Topics[0].Partitions[0]
		p.LeaderEpoch, p.EndOffset = 0, 7
	}})
	c.SetLeader("t", 0, 2)
	rtExpect(t, r, 7, 3) // the records now at 7..9 (the fake keeps the same ones)
	if log.find("log truncated") == "" {
		t.Errorf("truncation not reported: %q", log.all())
	}
	req := c.Broker(2).Received(protocol.OffsetForLeaderEpoch)
	if len(req) == 0 || req[0].Request.(*protocol.OffsetForLeaderEpochRequest).Topics[0].Partitions[0].LeaderEpoch != 0 {
		t.Errorf("OffsetForLeaderEpoch requests: %+v", req)
	}
}

// SetOffset drops what was queued past the old position and restarts
// there; FirstOffset/LastOffset are resolved at the leader.
func TestReaderSetOffset(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 10)
	r := rtReader(t, c, nil)
	rtExpect(t, r, 0, 2) // the other 8 are queued
	if err := r.SetOffset(6); err != nil {
		t.Fatal(err)
	}
	if r.Offset() != 6 {
		t.Fatalf("offset %d", r.Offset())
	}
	rtExpect(t, r, 6, 4)
	r.SetOffset(FirstOffset)
	rtExpect(t, r, 0, 1)
	lo := c.Broker(1).Requests(protocol.ListOffsets)
	r.SetOffset(LastOffset)
	// Once resolved (a fetch follows the ListOffsets), append.
	<-c.Broker(1).Await(protocol.ListOffsets, lo+1)
	<-c.Broker(1).Await(protocol.Fetch, c.Broker(1).Requests(protocol.Fetch)+1)
	rtAppend(c, 0, 10, 1)
	rtExpect(t, r, 10, 1)
	r.Close()
	if err := r.SetOffset(1); err != io.ErrClosedPipe {
		t.Fatalf("SetOffset after Close: %v", err)
	}
	if _, err := r.FetchMessage(context.Background()); err != io.EOF {
		t.Fatalf("FetchMessage after Close: %v", err)
	}
}

func TestReaderSetOffsetAtAndReadLag(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for i := 0; i < 5; i++ {
		c.Append("t", 0, protocol.Record{Value: []byte(fmt.Sprintf("v%d", i)), Timestamp: base.Add(time.Duration(i) * time.Minute).UnixMilli()})
	}
	r := rtReader(t, c, nil)
	ctx := rtCtx(t)
	if lag, err := r.ReadLag(ctx); err != nil || lag != 5 {
		t.Fatalf("ReadLag at FirstOffset: %d %v", lag, err)
	}
	if err := r.SetOffsetAt(ctx, base.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if r.Offset() != 2 {
		t.Fatalf("offset %d, want 2", r.Offset())
	}
	if lag, err := r.ReadLag(ctx); err != nil || lag != 3 {
		t.Fatalf("ReadLag at 2: %d %v", lag, err)
	}
	rtExpect(t, r, 2, 1)
	if err := r.SetOffsetAt(ctx, time.Now().Add(time.Hour)); err != nil || r.Offset() != 5 {
		t.Fatalf("SetOffsetAt(future): %v, offset %d", err, r.Offset())
	}
	if c.Broker(1).Requests(protocol.ListOffsets) == 0 {
		t.Fatal("no ListOffsets")
	}
}

// A blocked read returns on context end and on Close.
func TestReaderBlockedRead(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	r := rtReader(t, c, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := r.FetchMessage(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := r.FetchBatch(context.Background())
		done <- err
	}()
	time.AfterFunc(50*time.Millisecond, func() { r.Close() })
	select {
	case err := <-done:
		if err != io.EOF {
			t.Fatalf("FetchBatch after Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("FetchBatch still blocked after Close")
	}
}

// Without any reachable broker the error reaches the application after
// MaxAttempts, and the reader keeps trying.
func TestReaderUnreachable(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 2)
	c.Broker(1).Stop()
	r := rtReader(t, c, func(cfg *ReaderConfig) { cfg.MaxAttempts = 2 })
	if _, err := r.FetchMessage(rtCtx(t)); err == nil {
		t.Fatal("no error with the broker down")
	}
	c.Broker(1).Start()
	rtExpect(t, r, 0, 2)
}

// The group-only and partition-only methods keep kafka-go's errors.
func TestReaderModeErrors(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	r := rtReader(t, c, nil)
	if err := r.CommitMessages(context.Background(), Message{}); err != errOnlyAvailableWithGroup {
		t.Errorf("CommitMessages: %v", err)
	}
	g := NewReader(ReaderConfig{Brokers: c.Addrs(), GroupID: "g", Topic: "t", ReadLagInterval: -1})
	defer g.Close()
	if err := g.SetOffset(1); err != errNotAvailableWithGroup {
		t.Errorf("SetOffset: %v", err)
	}
	if err := g.SetOffsetAt(context.Background(), time.Now()); err != errNotAvailableWithGroup {
		t.Errorf("SetOffsetAt: %v", err)
	}
	if _, err := g.ReadLag(context.Background()); err != errNotAvailableWithGroup {
		t.Errorf("ReadLag: %v", err)
	}
	if g.Offset() != -1 || g.Lag() != -1 {
		t.Errorf("Offset %d Lag %d", g.Offset(), g.Lag())
	}
	if p := g.Stats().Partition; p != "-1" {
		t.Errorf("Stats().Partition %q", p)
	}
}
