package integration

// Integration tests of Writer against the real 3-rack cluster: every codec
// and balancer (read back with Conn at the partition and offset Completion
// reported), RequiredAcks all/one/none, an asynchronous writer, a topic with
// a small max.message.bytes, and the partition leader killed while
// synchronous writes with RequireAll run. Helpers are shared with
// helpers_test.go, helpers_topics_test.go and conn_integration_test.go.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// itWriter returns a synchronous Writer for topic with a Transport of its
// own, closed at the end of the test.
func itWriter(t *testing.T, c *ktesting.Cluster, topic string) *kafka.Writer {
	t.Helper()
	w := &kafka.Writer{
		Addr:         kafka.TCP(c.Brokers...),
		Topic:        topic,
		RequiredAcks: kafka.RequireAll,
		Transport:    &kafka.Transport{ClientID: "kafka-go-itest-writer"},
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// written is where Completion said a message went.
type written struct {
	msg       kafka.Message
	partition int
	offset    int64
}

// recorder collects Completion calls.
type recorder struct {
	mu   sync.Mutex
	got  []written
	errs []error
}

func (r *recorder) completion(msgs []kafka.Message, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs = append(r.errs, err)
		return
	}
	for _, m := range msgs {
		r.got = append(r.got, written{m, m.Partition, m.Offset})
	}
}

func (r *recorder) written() []written {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]written(nil), r.got...)
}

// readPartition reads partition p of topic from its leader, from offset 0 to
// the current end.
func readPartition(t *testing.T, c *ktesting.Cluster, topic string, p int) []kafka.Message {
	t.Helper()
	conn := dialLeader(t, newDialer(), c.Brokers[0], topic, p)
	end, err := conn.ReadLastOffset()
	if err != nil {
		t.Fatalf("ReadLastOffset %s/%d: %v", topic, p, err)
	}
	if end == 0 {
		return nil
	}
	return readFrom(t, conn, 0, int(end), kafka.SeekAbsolute)
}

// checkWritten reads every partition and checks that each message
// Completion reported is at its partition and offset, and that the log
// holds nothing else.
func checkWritten(t *testing.T, c *ktesting.Cluster, topic string, partitions int, ws []written) {
	t.Helper()
	logs := make([][]kafka.Message, partitions)
	total := 0
	for p := range logs {
		logs[p] = readPartition(t, c, topic, p)
		total += len(logs[p])
	}
	if total != len(ws) {
		t.Errorf("%s holds %d messages, %d were written", topic, total, len(ws))
	}
	for _, w := range ws {
		if w.partition < 0 || w.partition >= partitions || w.offset < 0 || w.offset >= int64(len(logs[w.partition])) {
			t.Errorf("message %q reported at %d/%d, which the log does not have", w.msg.Value, w.partition, w.offset)
			continue
		}
		got := logs[w.partition][w.offset]
		sameMessage(t, fmt.Sprintf("%s/%d@%d", topic, w.partition, w.offset), got, w.msg)
	}
}

// Every codec with every balancer: messages are read back from the
// partition and offset Completion gave, keys/values/headers exact; the
// hashing balancers put each key where a fresh instance of the balancer
// says.
func TestWriterIntegrationCodecsAndBalancers(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 3})
	balancers := []struct {
		name string
		new  func() kafka.Balancer
		hash bool // the partition is a function of the key
	}{
		{"RoundRobin", func() kafka.Balancer { return &kafka.RoundRobin{} }, false},
		{"LeastBytes", func() kafka.Balancer { return &kafka.LeastBytes{} }, false},
		{"Hash", func() kafka.Balancer { return &kafka.Hash{} }, true},
		{"ReferenceHash", func() kafka.Balancer { return &kafka.ReferenceHash{} }, true},
		{"CRC32", func() kafka.Balancer { return &kafka.CRC32Balancer{} }, true},
		{"Murmur2", func() kafka.Balancer { return &kafka.Murmur2Balancer{} }, true},
	}
	codecs := []kafka.Compression{0, kafka.Gzip, kafka.Snappy, kafka.Lz4, kafka.Zstd}
	rec := &recorder{}
	ctx := testContext(t, 2*time.Minute)
	for _, codec := range codecs {
		for _, bal := range balancers {
			w := itWriter(t, c, topic)
			w.Compression = codec
			w.Balancer = bal.new()
			w.Completion = rec.completion
			msgs := make([]kafka.Message, 30)
			for i := range msgs {
				id := fmt.Sprintf("%v-%s-%d", codec, bal.name, i)
				msgs[i] = kafka.Message{
					Key:     []byte("key-" + strconv.Itoa(i%7)),
					Value:   []byte("value-" + id + "-" + string(make([]byte, i*10))),
					Headers: []kafka.Header{{Key: "id", Value: []byte(id)}},
					Time:    time.UnixMilli(1700000000000 + int64(i)),
				}
			}
			before := len(rec.written())
			if err := w.WriteMessages(ctx, msgs...); err != nil {
				t.Fatalf("%v/%s: %v", codec, bal.name, err)
			}
			w.Close()
			ws := rec.written()[before:]
			if len(ws) != len(msgs) {
				t.Fatalf("%v/%s: Completion reported %d messages, want %d", codec, bal.name, len(ws), len(msgs))
			}
			used := map[int]bool{}
			for _, x := range ws {
				used[x.partition] = true
				if bal.hash {
					if want := bal.new().Balance(x.msg, 0, 1, 2); want != x.partition {
						t.Errorf("%v/%s: key %q in partition %d, want %d", codec, bal.name, x.msg.Key, x.partition, want)
					}
				}
			}
			if len(used) < 2 {
				t.Errorf("%v/%s: every message went to partitions %v", codec, bal.name, used)
			}
		}
	}
	if len(rec.errs) > 0 {
		t.Fatalf("completion errors: %v", rec.errs)
	}
	checkWritten(t, c, topic, 3, rec.written())
}

// RequiredAcks all, one and none all write; the first two report offsets.
// A lone synchronous write returns in milliseconds (logged).
func TestWriterIntegrationRequiredAcks(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	ctx := testContext(t, time.Minute)
	want := 0
	for _, acks := range []kafka.RequiredAcks{kafka.RequireAll, kafka.RequireOne, kafka.RequireNone} {
		w := itWriter(t, c, topic)
		w.RequiredAcks = acks
		offsets := make(chan int64, 100)
		w.Completion = func(msgs []kafka.Message, err error) {
			if err != nil {
				t.Errorf("acks=%v: %v", acks, err)
			}
			for _, m := range msgs {
				offsets <- m.Offset
			}
		}
		// The first write dials and reads metadata; the next are lone
		// writes of one message.
		var lone []time.Duration
		for i := 0; i < 10; i++ {
			start := time.Now()
			if err := w.WriteMessages(ctx, kafka.Message{Value: []byte(fmt.Sprintf("%v-%d", acks, i))}); err != nil {
				t.Fatalf("acks=%v: %v", acks, err)
			}
			if i > 0 {
				lone = append(lone, time.Since(start))
			}
			off := <-offsets
			switch {
			case acks == kafka.RequireNone && i == 0 && off != int64(want):
				// The first produce to a leader has acks=1, to confirm it
				// hosts the partition: its offset is known.
				t.Errorf("acks=none: first write at offset %d, want %d", off, want)
			case acks == kafka.RequireNone && i > 0 && off != -1:
				t.Errorf("acks=none: offset %d reported, want -1", off)
			case acks != kafka.RequireNone && off != int64(want):
				t.Errorf("acks=%v: offset %d, want %d", acks, off, want)
			}
			want++
		}
		t.Logf("acks=%v: lone synchronous writes took %v", acks, lone)
		// The default BatchTimeout is 1s: a writer waiting for it would
		// take a second or more every time. The median leaves room for a
		// loaded machine's hiccups.
		sort.Slice(lone, func(i, j int) bool { return lone[i] < lone[j] })
		if median := lone[len(lone)/2]; median > 500*time.Millisecond {
			t.Errorf("acks=%v: lone writes took %v (median): they waited for a batch timeout?", acks, median)
		}
	}
	// acks=0 gets no answer: the last messages are stored soon after.
	conn := dialLeader(t, newDialer(), c.Brokers[0], topic, 0)
	eventually(t, 20*time.Second, "all 30 messages stored", func() bool {
		end, err := conn.ReadLastOffset()
		return err == nil && end == 30
	})
	msgs := readFrom(t, conn, 0, 30, kafka.SeekAbsolute)
	for i, acks := range []string{"all", "one", "none"} {
		for j := 0; j < 10; j++ {
			if got, want := string(msgs[i*10+j].Value), fmt.Sprintf("%s-%d", acks, j); got != want {
				t.Errorf("offset %d: %q, want %q", i*10+j, got, want)
			}
		}
	}
}

// An asynchronous writer returns at once; Completion reports every message
// with its offset; Close flushes the rest.
func TestWriterIntegrationAsync(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 3})
	w := itWriter(t, c, topic)
	w.Async = true
	w.BatchTimeout = 50 * time.Millisecond
	w.BatchSize = 20
	rec := &recorder{}
	w.Completion = rec.completion
	ctx := testContext(t, time.Minute)
	var msgs []kafka.Message
	for i := 0; i < 200; i++ {
		m := kafka.Message{Key: []byte(strconv.Itoa(i)), Value: []byte("async-" + strconv.Itoa(i))}
		msgs = append(msgs, m)
		start := time.Now()
		if err := w.WriteMessages(ctx, m); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("an asynchronous write blocked for %v", d)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(rec.errs) > 0 {
		t.Fatalf("completion errors: %v", rec.errs)
	}
	ws := rec.written()
	if len(ws) != len(msgs) {
		t.Fatalf("Completion reported %d messages, want %d", len(ws), len(msgs))
	}
	checkWritten(t, c, topic, 3, ws)
}

// A topic refusing batches over 1 KiB: a batch of small messages too large
// together is split and written whole; a message over the limit alone gets
// a MessageTooLargeError in its WriteErrors entry and the others are
// written.
func TestWriterIntegrationMessageTooLarge(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1, ConfigEntries: []kafka.ConfigEntry{
		{ConfigName: "max.message.bytes", ConfigValue: "1024"},
	}})
	w := itWriter(t, c, topic)
	ctx := testContext(t, time.Minute)

	small := make([]kafka.Message, 10)
	for i := range small {
		small[i] = kafka.Message{Value: []byte(fmt.Sprintf("small-%d-%0300d", i, 0))}
	}
	if err := w.WriteMessages(ctx, small...); err != nil {
		t.Fatalf("10 messages of 300 bytes: %v", err)
	}

	mixed := []kafka.Message{{Value: []byte("before")}, {Value: make([]byte, 4000)}, {Value: []byte("after")}}
	err := w.WriteMessages(ctx, mixed...)
	var werr kafka.WriteErrors
	if !errors.As(err, &werr) || len(werr) != 3 || werr[0] != nil || werr[2] != nil {
		t.Fatalf("err = %v, want WriteErrors with only the 4000-byte message failing", err)
	}
	var tooLarge kafka.MessageTooLargeError
	if !errors.As(werr[1], &tooLarge) || !errors.Is(werr[1], kafka.MessageSizeTooLarge) || len(tooLarge.Message.Value) != 4000 {
		t.Fatalf("error of the large message: %v, want MessageTooLargeError", werr[1])
	}
	got := readPartition(t, c, topic, 0)
	if len(got) != 12 {
		t.Fatalf("%d messages stored, want 12", len(got))
	}
	for i := range small {
		sameMessage(t, "small "+strconv.Itoa(i), got[i], small[i])
	}
	sameMessage(t, "before", got[10], mixed[0])
	sameMessage(t, "after", got[11], mixed[2])
}

// The partition leader is killed while synchronous writes with RequireAll
// run (RF 3, min ISR 2), then restarted: the writer finds the new leader,
// every acknowledged message is in the log exactly once. A request the old
// leader wrote but could not answer is retried with the same producer id
// and sequence (idempotent produce, on with RequireAll), so the new leader,
// which replicated it, does not write it twice. Writes that fail are not
// acknowledged and may or may not be in the log (once at most).
func TestWriterIntegrationLeaderKilled(t *testing.T) {
	c := requireRackCluster(t)
	if c.Tool == "" {
		t.Skip("needs the cluster tool to kill a broker")
	}
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	leader := dialLeader(t, newDialer(), c.Brokers[0], topic, 0).Broker().ID

	w := itWriter(t, c, topic)
	w.MaxAttempts = 40
	w.WriteBackoffMax = 500 * time.Millisecond
	w.WriteTimeout = 5 * time.Second
	w.ReadTimeout = 5 * time.Second
	// Errors reading an answer are requests in flight when the leader
	// died: the ones idempotence keeps from being written twice.
	var lostAnswers int
	var logMu sync.Mutex
	w.ErrorLogger = kafka.LoggerFunc(func(format string, args ...interface{}) {
		if s := fmt.Sprintf(format, args...); strings.Contains(s, "reading Produce") {
			logMu.Lock()
			lostAnswers++
			logMu.Unlock()
		}
	})
	ctx := testContext(t, 3*time.Minute)

	var mu sync.Mutex
	var acked []string
	failed := 0
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := "m-" + strconv.Itoa(i)
			err := w.WriteMessages(ctx, kafka.Message{Value: []byte(v)})
			mu.Lock()
			if err == nil {
				acked = append(acked, v)
			} else {
				failed++
			}
			mu.Unlock()
			if ctx.Err() != nil {
				return
			}
		}
	}()
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	eventually(t, 30*time.Second, "100 writes acknowledged", func() bool { return count() >= 100 })
	ktesting.KillBroker(t, leader)
	killedAt := count()
	eventually(t, 90*time.Second, "200 more writes acknowledged after the kill", func() bool { return count() >= killedAt+200 })
	ktesting.RestartBroker(t, leader)
	restartedAt := count()
	eventually(t, 60*time.Second, "100 more writes acknowledged after the restart", func() bool { return count() >= restartedAt+100 })
	close(stop)
	<-done

	mu.Lock()
	defer mu.Unlock()
	got := readPartition(t, c, topic, 0)
	seen := map[string]int{}
	for _, m := range got {
		seen[string(m.Value)]++
	}
	dups := 0
	for v, n := range seen {
		if n > 1 {
			dups += n - 1
			t.Errorf("%s stored %d times", v, n)
		}
	}
	for _, v := range acked {
		if seen[v] == 0 {
			t.Errorf("acknowledged message %s is not in the log", v)
		}
	}
	logMu.Lock()
	defer logMu.Unlock()
	t.Logf("leader %d killed after %d acks, restarted after %d; %d acknowledged, %d failed, %d stored, %d duplicates; %d retries, %d answers lost in flight",
		leader, killedAt, restartedAt, len(acked), failed, len(got), dups, w.Stats().Retries, lostAnswers)
}

// A Transport with TLS and SASL writes through the SASL_SSL listeners,
// for every mechanism.
func TestWriterIntegrationSASLTLS(t *testing.T) {
	c := requireRackCluster(t)
	if len(c.SASLTLSBrokers) == 0 || c.TLSCA == "" {
		t.Skip("the cluster has no SASL_SSL listeners")
	}
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	ctx := testContext(t, time.Minute)
	var want []kafka.Message
	for _, u := range saslUsers(c) {
		w := &kafka.Writer{
			Addr:         kafka.TCP(c.SASLTLSBrokers...),
			Topic:        topic,
			RequiredAcks: kafka.RequireAll,
			Transport: &kafka.Transport{
				TLS:  testTLSConfig(t, c),
				SASL: mechanism(t, u.mechanism, u.cred.User, u.cred.Password),
			},
		}
		m := kafka.Message{Value: []byte("via " + u.mechanism)}
		if err := w.WriteMessages(ctx, m); err != nil {
			t.Fatalf("%s: %v", u.mechanism, err)
		}
		w.Close()
		want = append(want, m)
	}
	got := readPartition(t, c, topic, 0)
	if len(got) != len(want) {
		t.Fatalf("%d messages stored, want %d", len(got), len(want))
	}
	for i := range want {
		sameMessage(t, string(want[i].Value), got[i], want[i])
	}
}

// BenchmarkWriterIntegrationLoneWrite is the latency of one synchronous
// write of one message to the real cluster (ns/op), RequireAll.
func BenchmarkWriterIntegrationLoneWrite(b *testing.B) {
	c := ktesting.RequireCluster(b)
	topic := createTopic(b, c, kafka.TopicConfig{NumPartitions: 1})
	w := &kafka.Writer{Addr: kafka.TCP(c.Brokers...), Topic: topic, RequiredAcks: kafka.RequireAll, Transport: &kafka.Transport{}}
	defer w.Close()
	ctx := context.Background()
	// Warm up, and wait for the leader to be known everywhere.
	deadline := time.Now().Add(30 * time.Second)
	for w.WriteMessages(ctx, kafka.Message{Value: []byte("warm")}) != nil {
		if time.Now().After(deadline) {
			b.Fatal("the topic never took writes")
		}
	}
	msg := kafka.Message{Value: []byte("a lone message")}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := w.WriteMessages(ctx, msg); err != nil {
			b.Fatal(err)
		}
	}
}
