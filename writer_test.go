package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// Unit tests of Writer against the in-process fake cluster
// (testing/fakebroker). Nothing sleeps to synchronise: the tests wait on
// WriteMessages, on Completion callbacks, or on the fake's request counts.

const wtTopic = "writer-test"

// wtCluster starts a fake cluster of brokers holding wtTopic.
func wtCluster(t testing.TB, brokers, partitions int) *fakebroker.Cluster {
	t.Helper()
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: brokers})
	c.CreateTopic(wtTopic, partitions, 1)
	wtProducerIDs(c)
	return c
}

// wtProducerIDs makes the brokers of c answer InitProducerId (which the
// fake does not model) with producer ids 1000, 1001, ..., epoch 0. The
// fake does not check sequence numbers.
func wtProducerIDs(c *fakebroker.Cluster) {
	var mu sync.Mutex
	next := int64(1000)
	for _, b := range c.Brokers() {
		b.Handle(protocol.InitProducerId, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			mu.Lock()
			defer mu.Unlock()
			next++
			return &protocol.InitProducerIdResponse{ProducerID: next - 1}, fakebroker.Action{}
		})
	}
}

// wtWriter returns a synchronous Writer for wtTopic on c with a Transport
// of its own and short backoffs; Close runs at the end of the test.
func wtWriter(t testing.TB, c *fakebroker.Cluster) *Writer {
	t.Helper()
	w := &Writer{
		Addr:            TCP(c.Addrs()...),
		Topic:           wtTopic,
		RequiredAcks:    RequireAll,
		WriteBackoffMin: time.Millisecond,
		WriteBackoffMax: 5 * time.Millisecond,
		Transport:       &Transport{},
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func wtContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func wtMessages(prefix string, n int) []Message {
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i] = Message{Key: []byte(prefix + "-k" + strconv.Itoa(i)), Value: []byte(prefix + "-v" + strconv.Itoa(i))}
	}
	return msgs
}

// wtValues returns the values stored in a partition, in offset order.
func wtValues(c *fakebroker.Cluster, topic string, p int32) []string {
	var out []string
	for _, r := range c.Records(topic, p) {
		out = append(out, string(r.Value))
	}
	return out
}

func wtSameValues(t testing.TB, what string, got []string, want ...string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: values %q, want %q", what, got, want)
	}
}

// wtProduced returns the produce requests broker b received.
func wtProduced(b *fakebroker.Broker) []*protocol.ProduceRequest {
	var out []*protocol.ProduceRequest
	for _, r := range b.Received(protocol.Produce) {
		out = append(out, r.Request.(*protocol.ProduceRequest))
	}
	return out
}

// A lone synchronous write is written and acknowledged at once: it does not
// wait for BatchTimeout (1s by default, 1h here).
func TestWriterLoneWriteDoesNotWaitForBatchTimeout(t *testing.T) {
	c := wtCluster(t, 1, 1)
	w := wtWriter(t, c)
	w.BatchTimeout = time.Hour
	ctx := wtContext(t)
	start := time.Now()
	if err := w.WriteMessages(ctx, Message{Key: []byte("k"), Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a lone write took %v", d)
	}
	for i := 0; i < 5; i++ {
		start = time.Now()
		if err := w.WriteMessages(ctx, Message{Value: []byte("again")}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("write %d took %v: it waited for something", i, d)
		}
	}
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "v", "again", "again", "again", "again", "again")
	rec := c.Records(wtTopic, 0)[0]
	if string(rec.Key) != "k" {
		t.Errorf("key %q", rec.Key)
	}
	if p := wtProduced(c.Broker(1)); len(p) != 6 || p[0].Acks != -1 {
		t.Errorf("%d produce requests (acks %d), want 6 with acks -1", len(p), p[0].Acks)
	}
}

// Messages keep their keys, values, headers and times, in order, with
// every codec.
func TestWriterCodecs(t *testing.T) {
	for _, codec := range []Compression{0, Gzip, Snappy, Lz4, Zstd} {
		t.Run(fmt.Sprint(codec), func(t *testing.T) {
			c := wtCluster(t, 1, 1)
			w := wtWriter(t, c)
			w.Compression = codec
			at := time.UnixMilli(1700000000123)
			msgs := wtMessages("c", 50)
			msgs[3].Headers = []Header{{Key: "h", Value: []byte("hv")}}
			msgs[4].Time = at
			msgs[5].Key, msgs[6].Value = nil, nil
			if err := w.WriteMessages(wtContext(t), msgs...); err != nil {
				t.Fatal(err)
			}
			recs := c.Records(wtTopic, 0)
			if len(recs) != len(msgs) {
				t.Fatalf("%d records, want %d", len(recs), len(msgs))
			}
			for i, r := range recs {
				m := msgs[i]
				if !bytes.Equal(r.Key, m.Key) || (r.Key == nil) != (m.Key == nil) || !bytes.Equal(r.Value, m.Value) || (r.Value == nil) != (m.Value == nil) {
					t.Errorf("record %d = %q/%q, want %q/%q", i, r.Key, r.Value, m.Key, m.Value)
				}
			}
			if h := recs[3].Headers; len(h) != 1 || h[0].Key != "h" || string(h[0].Value) != "hv" {
				t.Errorf("headers %v", h)
			}
			if recs[4].Timestamp != at.UnixMilli() {
				t.Errorf("timestamp %d, want %d", recs[4].Timestamp, at.UnixMilli())
			}
			if recs[0].Timestamp <= 0 {
				t.Errorf("message without a time stored at %d", recs[0].Timestamp)
			}
		})
	}
}

// The leader answers NOT_LEADER_OR_FOLLOWER to the first produce: the
// writer reads metadata again and retries; the message is stored once.
func TestWriterRetriesNotLeader(t *testing.T) {
	c := wtCluster(t, 1, 1)
	b := c.Broker(1)
	b.ScriptNext(protocol.Produce, fakebroker.Step{ErrorCode: int16(NotLeaderForPartition)})
	w := wtWriter(t, c)
	if err := w.WriteMessages(wtContext(t), Message{Value: []byte("once")}); err != nil {
		t.Fatal(err)
	}
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "once")
	if n := b.Requests(protocol.Produce); n != 2 {
		t.Errorf("%d produce requests, want 2", n)
	}
	if n := b.Requests(protocol.Metadata); n < 2 {
		t.Errorf("%d metadata requests, want a refresh after the error", n)
	}
	if s := w.Stats(); s.Retries != 1 || s.Errors != 1 || s.Writes != 2 || s.Messages != 2 {
		t.Errorf("stats: retries %d errors %d writes %d messages %d, want 1 1 2 2", s.Retries, s.Errors, s.Writes, s.Messages)
	}
}

// Leadership moves to another broker between two writes: the old leader
// refuses, the metadata names the new one, and the write goes there.
func TestWriterFollowsMovedLeader(t *testing.T) {
	c := wtCluster(t, 2, 1)
	w := wtWriter(t, c)
	ctx := wtContext(t)
	if err := w.WriteMessages(ctx, Message{Value: []byte("before")}); err != nil {
		t.Fatal(err)
	}
	c.SetLeader(wtTopic, 0, 2)
	if err := w.WriteMessages(ctx, Message{Value: []byte("after")}); err != nil {
		t.Fatal(err)
	}
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "before", "after")
	if n := c.Broker(2).Requests(protocol.Produce); n != 1 {
		t.Errorf("new leader got %d produce requests, want 1", n)
	}
	if n := c.Broker(1).Requests(protocol.Produce); n != 2 {
		t.Errorf("old leader got %d produce requests, want 2 (one refused)", n)
	}
}

// The leader dies: its partitions have no leader until another broker
// takes over. The writer keeps retrying within MaxAttempts.
func TestWriterSurvivesLeaderStop(t *testing.T) {
	c := wtCluster(t, 2, 1)
	w := wtWriter(t, c)
	w.MaxAttempts = 50
	ctx := wtContext(t)
	if err := w.WriteMessages(ctx, Message{Value: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	c.Broker(1).Stop()
	errc := make(chan error, 1)
	go func() { errc <- w.WriteMessages(ctx, Message{Value: []byte("b")}) }()
	// Broker 2 answers metadata with no leader until it is made one.
	<-c.Broker(2).Await(protocol.Metadata, 2)
	c.SetLeader(wtTopic, 0, 2)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "a", "b")
}

// A closed connection (a network error) is retried on a new connection.
func TestWriterRetriesClosedConnection(t *testing.T) {
	c := wtCluster(t, 1, 1)
	b := c.Broker(1)
	b.ScriptNext(protocol.Produce, fakebroker.Step{Action: fakebroker.Action{Close: true}})
	w := wtWriter(t, c)
	if err := w.WriteMessages(wtContext(t), Message{Value: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "x")
}

// Retriable errors that do not go away fail the messages after MaxAttempts
// attempts; a non-retriable error fails them at once.
func TestWriterGivesUp(t *testing.T) {
	c := wtCluster(t, 1, 1)
	b := c.Broker(1)
	b.Handle(protocol.Produce, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return wtErrorResponse(req.(*protocol.ProduceRequest), func(string, int32) int16 { return int16(NotEnoughReplicas) }), fakebroker.Action{}
	})
	w := wtWriter(t, c)
	w.MaxAttempts = 3
	err := w.WriteMessages(wtContext(t), wtMessages("x", 2)...)
	var werr WriteErrors
	if !errors.As(err, &werr) || len(werr) != 2 || werr.Count() != 2 || !errors.Is(werr[0], NotEnoughReplicas) {
		t.Fatalf("err = %v, want WriteErrors of NotEnoughReplicas", err)
	}
	if n := b.Requests(protocol.Produce); n != 3 {
		t.Errorf("%d produce requests, want 3", n)
	}

	b.Handle(protocol.Produce, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return wtErrorResponse(req.(*protocol.ProduceRequest), func(string, int32) int16 { return int16(TopicAuthorizationFailed) }), fakebroker.Action{}
	})
	err = w.WriteMessages(wtContext(t), Message{Value: []byte("y")})
	if !errors.As(err, &werr) || !errors.Is(werr[0], TopicAuthorizationFailed) {
		t.Fatalf("err = %v, want TopicAuthorizationFailed", err)
	}
	if n := b.Requests(protocol.Produce); n != 4 {
		t.Errorf("%d produce requests, want 4 (no retry)", n)
	}
}

// wtErrorResponse answers every partition of req with code(topic, partition).
func wtErrorResponse(req *protocol.ProduceRequest, code func(string, int32) int16) *protocol.ProduceResponse {
	resp := &protocol.ProduceResponse{}
	for _, t := range req.Topics {
		rt := protocol.ProduceResponseTopic{Name: t.Name}
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, protocol.ProduceResponsePartition{Index: p.Index, ErrorCode: code(t.Name, p.Index), BaseOffset: -1, LogAppendTimeMs: -1, LogStartOffset: -1})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// One partition fails and another succeeds in the same request: WriteErrors
// has the error at the index of each message of the failed partition.
func TestWriterPerMessageErrors(t *testing.T) {
	c := wtCluster(t, 1, 2)
	b := c.Broker(1)
	// Partition 1 is refused; partition 0 is stored as usual.
	b.Handle(protocol.Produce, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		pr := *req.(*protocol.ProduceRequest)
		var refused []protocol.ProduceResponsePartition
		var keep []protocol.ProduceRequestPartition
		for _, p := range pr.Topics[0].Partitions {
			if p.Index == 1 {
				refused = append(refused, protocol.ProduceResponsePartition{Index: 1, ErrorCode: int16(InvalidRecord), BaseOffset: -1, LogAppendTimeMs: -1, LogStartOffset: -1})
			} else {
				keep = append(keep, p)
			}
		}
		pr.Topics = []protocol.ProduceRequestTopic{{Name: pr.Topics[0].Name, Partitions: keep}}
		resp := b.Default(&pr, hdr).(*protocol.ProduceResponse)
		resp.Topics[0].Partitions = append(resp.Topics[0].Partitions, refused...)
		return resp, fakebroker.Action{}
	})
	w := wtWriter(t, c)
	// Keys "0" and "1" name the partition.
	w.Balancer = BalancerFunc(func(m Message, ps ...int) int { return int(m.Key[0] - '0') })
	msgs := []Message{
		{Key: []byte("0"), Value: []byte("a")},
		{Key: []byte("1"), Value: []byte("b")},
		{Key: []byte("0"), Value: []byte("c")},
		{Key: []byte("1"), Value: []byte("d")},
	}
	err := w.WriteMessages(wtContext(t), msgs...)
	var werr WriteErrors
	if !errors.As(err, &werr) {
		t.Fatalf("err = %v, want WriteErrors", err)
	}
	if len(werr) != 4 || werr.Count() != 2 || werr[0] != nil || werr[2] != nil || !errors.Is(werr[1], InvalidRecord) || !errors.Is(werr[3], InvalidRecord) {
		t.Fatalf("errors %v, want InvalidRecord at 1 and 3", werr)
	}
	wtSameValues(t, "partition 0", wtValues(c, wtTopic, 0), "a", "c")
	wtSameValues(t, "partition 1", wtValues(c, wtTopic, 1))
	if p := wtProduced(b); len(p) != 1 || len(p[0].Topics) != 1 || len(p[0].Topics[0].Partitions) != 2 {
		t.Errorf("want one produce request carrying both partitions, got %d requests", len(p))
	}
}

// A message larger than BatchBytes fails the call before anything is
// written, as in kafka-go.
func TestWriterMessageTooLargeForBatchBytes(t *testing.T) {
	c := wtCluster(t, 1, 1)
	w := wtWriter(t, c)
	w.BatchBytes = 1000
	msgs := []Message{{Value: []byte("a")}, {Value: make([]byte, 2000)}, {Value: []byte("c")}}
	err := w.WriteMessages(wtContext(t), msgs...)
	var tooLarge MessageTooLargeError
	if !errors.As(err, &tooLarge) || !errors.Is(err, MessageSizeTooLarge) {
		t.Fatalf("err = %v, want MessageTooLargeError", err)
	}
	if len(tooLarge.Message.Value) != 2000 || len(tooLarge.Remaining) != 2 || string(tooLarge.Remaining[1].Value) != "c" {
		t.Errorf("MessageTooLargeError{%d bytes, remaining %d}", len(tooLarge.Message.Value), len(tooLarge.Remaining))
	}
	if n := c.Broker(1).Requests(protocol.Produce); n != 0 {
		t.Errorf("%d produce requests, want none", n)
	}
}

// The broker refuses batches over 1000 bytes (a topic's max.message.bytes):
// the writer splits the batch until the large message is alone, which
// fails with MessageTooLargeError; the others are written once, in order.
func TestWriterMessageTooLargeForBroker(t *testing.T) {
	c := wtCluster(t, 1, 1)
	b := c.Broker(1)
	b.Handle(protocol.Produce, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		pr := req.(*protocol.ProduceRequest)
		for _, t := range pr.Topics {
			for _, p := range t.Partitions {
				if len(p.Records) > 1000 {
					return wtErrorResponse(pr, func(string, int32) int16 { return int16(MessageSizeTooLarge) }), fakebroker.Action{}
				}
			}
		}
		return b.Default(req, hdr), fakebroker.Action{}
	})
	w := wtWriter(t, c)
	var completions [][]Message
	var mu sync.Mutex
	w.Completion = func(msgs []Message, err error) {
		mu.Lock()
		defer mu.Unlock()
		completions = append(completions, msgs)
	}
	msgs := wtMessages("m", 8)
	msgs[5].Value = make([]byte, 1500)
	err := w.WriteMessages(wtContext(t), msgs...)
	var werr WriteErrors
	if !errors.As(err, &werr) || werr.Count() != 1 {
		t.Fatalf("err = %v, want one WriteErrors entry", err)
	}
	var tooLarge MessageTooLargeError
	if !errors.As(werr[5], &tooLarge) || len(tooLarge.Message.Value) != 1500 || !errors.Is(werr[5], MessageSizeTooLarge) {
		t.Fatalf("errors %v, want MessageTooLargeError at 5", werr)
	}
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "m-v0", "m-v1", "m-v2", "m-v3", "m-v4", "m-v6", "m-v7")
	n := 0
	for _, c := range completions {
		n += len(c)
	}
	if n != 8 {
		t.Errorf("Completion saw %d messages, want 8", n)
	}
}

// With RequireNone the first produce to a leader has acks=1 (the leader
// confirms it hosts the partition, see internal/producer/leader.go); the next ones
// have acks=0 and no answer: offsets unknown.
func TestWriterRequireNone(t *testing.T) {
	c := wtCluster(t, 1, 1)
	w := wtWriter(t, c)
	w.RequiredAcks = RequireNone
	done := make(chan []Message, 1)
	w.Completion = func(msgs []Message, err error) {
		if err != nil {
			t.Errorf("completion: %v", err)
		}
		done <- msgs
	}
	if err := w.WriteMessages(wtContext(t), Message{Value: []byte("first")}); err != nil {
		t.Fatal(err)
	}
	if msgs := <-done; msgs[0].Offset != 0 || msgs[0].Topic != wtTopic {
		t.Errorf("completion message %+v, want offset 0 (confirmed with acks=1)", msgs[0])
	}
	if err := w.WriteMessages(wtContext(t), Message{Value: []byte("fire")}); err != nil {
		t.Fatal(err)
	}
	if msgs := <-done; msgs[0].Offset != -1 || msgs[0].Topic != wtTopic {
		t.Errorf("completion message %+v, want offset -1", msgs[0])
	}
	// The write returned once the broker processed the produce.
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "first", "fire")
	if p := wtProduced(c.Broker(1)); len(p) != 2 || p[0].Acks != 1 || p[1].Acks != 0 {
		t.Errorf("acks of the produce requests wrong")
	}
}

// An asynchronous writer returns at once and reports to Completion, with
// topic, partition and offsets set; Close sends what is left and waits.
func TestWriterAsyncCompletion(t *testing.T) {
	c := wtCluster(t, 1, 2)
	w := wtWriter(t, c)
	w.Async = true
	w.BatchTimeout = time.Hour // only BatchSize and Close send
	w.BatchSize = 10
	var mu sync.Mutex
	got := map[string]Message{}
	calls := 0
	w.Completion = func(msgs []Message, err error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if err != nil {
			t.Errorf("completion: %v", err)
		}
		for _, m := range msgs {
			got[string(m.Value)] = m
		}
	}
	ctx := wtContext(t)
	msgs := wtMessages("a", 25)
	for i := range msgs {
		if err := w.WriteMessages(ctx, msgs[i]); err != nil {
			t.Fatal(err)
		}
	}
	// 20 messages fill two batches of 10 (round robin over 2 partitions):
	// they are sent without waiting, in one request.
	<-c.Broker(1).Await(protocol.Produce, 1)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 25 {
		t.Fatalf("completion saw %d messages, want 25", len(got))
	}
	for p := int32(0); p < 2; p++ {
		for off, r := range c.Records(wtTopic, p) {
			m, ok := got[string(r.Value)]
			if !ok || m.Topic != wtTopic || m.Partition != int(p) || m.Offset != int64(off) {
				t.Errorf("%s/%d@%d: completion had %+v", wtTopic, p, off, m)
			}
		}
	}
	if err := w.WriteMessages(ctx, Message{Value: []byte("late")}); err != io.ErrClosedPipe {
		t.Errorf("write after Close: %v, want io.ErrClosedPipe", err)
	}
}

// An asynchronous writer sends a partial batch after BatchTimeout.
func TestWriterAsyncBatchTimeout(t *testing.T) {
	c := wtCluster(t, 1, 1)
	w := wtWriter(t, c)
	w.Async = true
	w.BatchTimeout = 20 * time.Millisecond
	done := make(chan error, 1)
	w.Completion = func(msgs []Message, err error) { done <- err }
	if err := w.WriteMessages(wtContext(t), Message{Value: []byte("later")}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the batch was not sent after BatchTimeout")
	}
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "later")
}

// Each message goes where the balancer says: Hash by key, and a partition
// the balancer invents is an error.
func TestWriterBalancers(t *testing.T) {
	c := wtCluster(t, 1, 4)
	w := wtWriter(t, c)
	w.Balancer = &Hash{}
	msgs := wtMessages("h", 40)
	if err := w.WriteMessages(wtContext(t), msgs...); err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 4; p++ {
		for _, r := range c.Records(wtTopic, p) {
			if want := (&Hash{}).Balance(Message{Key: r.Key}, 0, 1, 2, 3); want != int(p) {
				t.Errorf("key %q in partition %d, want %d", r.Key, p, want)
			}
		}
	}
	total := 0
	for p := int32(0); p < 4; p++ {
		total += len(c.Records(wtTopic, p))
	}
	if total != 40 {
		t.Errorf("%d records, want 40", total)
	}
	// Default: round robin, one message per partition in turn.
	w2 := wtWriter(t, c)
	if err := w2.WriteMessages(wtContext(t), wtMessages("rr", 8)...); err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 4; p++ {
		n := 0
		for _, r := range c.Records(wtTopic, p) {
			if bytes.HasPrefix(r.Value, []byte("rr")) {
				n++
			}
		}
		if n != 2 {
			t.Errorf("round robin put %d messages in partition %d, want 2", n, p)
		}
	}
	w.Balancer = BalancerFunc(func(Message, ...int) int { return 7 })
	if err := w.WriteMessages(wtContext(t), Message{}); err == nil {
		t.Error("a balancer choosing partition 7 of 4 was accepted")
	}
}

// Topic on the Writer or on each Message, not both, not neither; messages
// naming several topics are routed to each.
func TestWriterTopics(t *testing.T) {
	c := wtCluster(t, 1, 1)
	c.CreateTopic("other", 1, 1)
	w := wtWriter(t, c)
	ctx := wtContext(t)
	if err := w.WriteMessages(ctx, Message{Topic: "other"}); err == nil {
		t.Error("Topic on both the Writer and the Message was accepted")
	}
	w.Topic = ""
	if err := w.WriteMessages(ctx, Message{}); err == nil {
		t.Error("a message without a topic was accepted")
	}
	if err := w.WriteMessages(ctx, Message{Topic: "other", Value: []byte("o")}, Message{Topic: wtTopic, Value: []byte("w")}); err != nil {
		t.Fatal(err)
	}
	wtSameValues(t, "other", wtValues(c, "other", 0), "o")
	wtSameValues(t, wtTopic, wtValues(c, wtTopic, 0), "w")
	err := w.WriteMessages(ctx, Message{Topic: "missing"})
	if !errors.Is(err, UnknownTopicOrPartition) {
		t.Errorf("unknown topic: %v", err)
	}
	if err := (&Writer{}).WriteMessages(ctx, Message{}); err == nil {
		t.Error("a Writer without Addr wrote")
	}
}

// AllowAutoTopicCreation asks the brokers to create a missing topic.
func TestWriterAutoTopicCreation(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{AutoCreateTopics: true})
	w := &Writer{Addr: TCP(c.Addrs()...), Topic: "auto", AllowAutoTopicCreation: true, RequiredAcks: RequireOne, Transport: &Transport{}}
	defer w.Close()
	if err := w.WriteMessages(wtContext(t), Message{Value: []byte("created")}); err != nil {
		t.Fatal(err)
	}
	wtSameValues(t, "auto", wtValues(c, "auto", 0), "created")
}

// BatchSize and BatchBytes cap the batches of one call; the partitions of a
// broker share requests.
func TestWriterBatchLimits(t *testing.T) {
	c := wtCluster(t, 1, 3)
	w := wtWriter(t, c)
	w.BatchSize = 10
	w.Balancer = BalancerFunc(func(m Message, ps ...int) int { return 0 })
	if err := w.WriteMessages(wtContext(t), wtMessages("s", 25)...); err != nil {
		t.Fatal(err)
	}
	if p := wtProduced(c.Broker(1)); len(p) != 3 {
		t.Errorf("%d produce requests for 25 messages in batches of 10, want 3", len(p))
	}
	w.Balancer = nil
	w.BatchSize = 0
	w.BatchBytes = 200 // three messages of ~55 bytes per batch
	if err := w.WriteMessages(wtContext(t), wtMessages("b", 6)...); err != nil {
		t.Fatal(err)
	}
	p := wtProduced(c.Broker(1))[3:]
	if len(p) != 1 || len(p[0].Topics[0].Partitions) != 3 {
		t.Errorf("6 messages over 3 partitions: %d requests, want 1 carrying 3 partitions", len(p))
	}
	total := 0
	for i := int32(0); i < 3; i++ {
		total += len(c.Records(wtTopic, i))
	}
	if total != 31 {
		t.Errorf("%d records, want 31", total)
	}
}

// A cancelled context returns from WriteMessages; the write still happens.
func TestWriterContextCancel(t *testing.T) {
	c := wtCluster(t, 1, 1)
	b := c.Broker(1)
	release := make(chan struct{})
	b.ScriptNext(protocol.Produce, fakebroker.Step{Action: fakebroker.Action{Wait: release}})
	w := wtWriter(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- w.WriteMessages(ctx, Message{Value: []byte("v")}) }()
	<-b.Await(protocol.Produce, 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	close(release)
	w.Close()
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "v")
}

// countingTripper is a custom RoundTripper: it counts requests and passes
// them to a Transport.
type countingTripper struct {
	mu    sync.Mutex
	n     map[protocol.ApiKey]int
	inner *Transport
}

func (ct *countingTripper) RoundTrip(ctx context.Context, addr net.Addr, req protocol.Request) (protocol.Response, error) {
	ct.mu.Lock()
	ct.n[req.Key()]++
	ct.mu.Unlock()
	return ct.inner.RoundTrip(ctx, addr, req)
}

// A custom RoundTripper receives every request the Writer sends.
func TestWriterCustomRoundTripper(t *testing.T) {
	c := wtCluster(t, 2, 2)
	inner := &Transport{}
	defer inner.CloseIdleConnections()
	ct := &countingTripper{n: map[protocol.ApiKey]int{}, inner: inner}
	w := wtWriter(t, c)
	w.Transport = ct
	if err := w.WriteMessages(wtContext(t), wtMessages("rt", 4)...); err != nil {
		t.Fatal(err)
	}
	w.RequiredAcks = RequireNone
	if err := w.WriteMessages(wtContext(t), Message{Value: []byte("none")}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if ct.n[protocol.Metadata] == 0 || ct.n[protocol.Produce] != 3 {
		t.Errorf("requests seen: %v, want metadata and 3 produce", ct.n)
	}
	if n := len(c.Records(wtTopic, 0)) + len(c.Records(wtTopic, 1)); n < 4 {
		t.Errorf("%d records, want at least 4", n)
	}
}

// NewWriter keeps kafka-go's deprecated API: the Dialer's settings, acks
// "all" for 0, the codec, and dial statistics.
func TestNewWriter(t *testing.T) {
	c := wtCluster(t, 1, 1)
	if err := (&WriterConfig{}).Validate(); err == nil {
		t.Error("a WriterConfig without brokers is valid")
	}
	w := NewWriter(WriterConfig{
		Brokers:          c.Addrs(),
		Topic:            wtTopic,
		Dialer:           &Dialer{ClientID: "old-api", Timeout: 5 * time.Second},
		BatchSize:        7,
		CompressionCodec: Snappy.Codec(),
	})
	if w.RequiredAcks != RequireAll || w.Compression != Snappy || w.BatchSize != 7 {
		t.Errorf("NewWriter: acks %v, compression %v, batch size %d", w.RequiredAcks, w.Compression, w.BatchSize)
	}
	if err := w.WriteMessages(wtContext(t), Message{Value: []byte("old")}); err != nil {
		t.Fatal(err)
	}
	s := w.Stats()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "old")
	if s.Dials < 2 || s.DialTime.Count != s.Dials || s.MaxBatchSize != 7 || s.RequiredAcks != -1 || s.Topic != wtTopic {
		t.Errorf("stats %+v", s)
	}
	if h := c.Broker(1).Received(protocol.Produce)[0].Header; h.ClientID == nil || *h.ClientID != "old-api" {
		t.Errorf("client id %v", h.ClientID)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewWriter without brokers did not panic")
		}
	}()
	NewWriter(WriterConfig{})
}

func TestRequiredAcksText(t *testing.T) {
	for _, acks := range []RequiredAcks{RequireNone, RequireOne, RequireAll} {
		b, _ := acks.MarshalText()
		var got RequiredAcks
		if err := got.UnmarshalText(b); err != nil || got != acks {
			t.Errorf("%v: round trip gave %v, %v", acks, got, err)
		}
		if err := got.UnmarshalText([]byte(strconv.Itoa(int(acks)))); err != nil || got != acks {
			t.Errorf("%d: parsed %v, %v", acks, got, err)
		}
	}
	if RequiredAcks(2).String() != "unknown" {
		t.Error("RequiredAcks(2) has a name")
	}
	var a RequiredAcks
	if a.UnmarshalText([]byte("2")) == nil || a.UnmarshalText([]byte("most")) == nil {
		t.Error("invalid acks accepted")
	}
}

func TestWriteErrors(t *testing.T) {
	werr := WriteErrors{nil, NotLeaderForPartition, nil, NotLeaderForPartition, MessageTooLargeError{}}
	if werr.Count() != 3 {
		t.Errorf("Count = %d", werr.Count())
	}
	want := "kafka write errors (3/5): " + NotLeaderForPartition.Error() + "; " + MessageSizeTooLarge.Error()
	if werr.Error() != want {
		t.Errorf("Error() = %q, want %q", werr.Error(), want)
	}
	if !errors.Is(MessageTooLargeError{}, MessageSizeTooLarge) {
		t.Error("MessageTooLargeError does not match MessageSizeTooLarge")
	}
}

// Stats count requests, messages, bytes and batches, and report the
// configuration with its defaults.
func TestWriterStats(t *testing.T) {
	c := wtCluster(t, 1, 2)
	w := wtWriter(t, c)
	if err := w.WriteMessages(wtContext(t), wtMessages("s", 10)...); err != nil {
		t.Fatal(err)
	}
	s := w.Stats()
	if s.Writes != 1 || s.Messages != 10 || s.Bytes <= 0 || s.BatchSize.Count != 2 || s.BatchSize.Sum != 10 || s.BatchBytes.Sum != s.Bytes || s.WriteTime.Count != 1 || s.BatchTime.Count != 2 || s.BatchQueueTime.Count != 2 {
		t.Errorf("stats %+v", s)
	}
	if s.MaxAttempts != 10 || s.BatchTimeout != time.Second || s.ReadTimeout != 10*time.Second || s.WriteTimeout != 10*time.Second || s.MaxBatchSize != 100 || s.WriteBackoffMin != time.Millisecond {
		t.Errorf("configuration in stats %+v", s)
	}
	if s := w.Stats(); s.Writes != 0 || s.Messages != 0 || s.BatchSize.Count != 0 {
		t.Errorf("counters not reset by Stats: %+v", s)
	}
}

// wtBatches returns the record batch headers of the produce requests
// broker b received for partition p, in order.
func wtBatches(t testing.TB, b *fakebroker.Broker, p int32) []protocol.RecordBatchHeader {
	t.Helper()
	var out []protocol.RecordBatchHeader
	for _, req := range wtProduced(b) {
		for _, rt := range req.Topics {
			for _, rp := range rt.Partitions {
				if rp.Index != p {
					continue
				}
				h, err := protocol.ParseRecordBatchHeader(rp.Records)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, h)
			}
		}
	}
	return out
}

// Brokers without InitProducerId: the writer produces without producer
// ids.
func TestWriterIdempotenceUnsupported(t *testing.T) {
	c := wtCluster(t, 1, 1)
	b := c.Broker(1)
	b.SetMaxVersion(protocol.InitProducerId, -1)
	var logged []string
	w := wtWriter(t, c)
	w.ErrorLogger = LoggerFunc(func(f string, args ...interface{}) { logged = append(logged, fmt.Sprintf(f, args...)) })
	ctx := wtContext(t)
	for i := 0; i < 3; i++ {
		if err := w.WriteMessages(ctx, Message{Value: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range wtBatches(t, b, 0) {
		if h.ProducerID != -1 {
			t.Errorf("batch with producer id %d", h.ProducerID)
		}
	}
	if b.Requests(protocol.InitProducerId) != 0 || len(logged) != 1 {
		t.Errorf("%d InitProducerId requests, log %q", b.Requests(protocol.InitProducerId), logged)
	}
}
