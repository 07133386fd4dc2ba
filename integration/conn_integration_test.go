package integration

// Integration tests of Conn against the real 3-rack cluster: produce and fetch with every codec, offsets
// and seeks, and rack-aware fetching (KIP-392): the leader naming the rack's follower, and fetching from
// that follower directly.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/gzip"
	"github.com/rackfetch/kafka-go/lz4"
	"github.com/rackfetch/kafka-go/snappy"
	ktesting "github.com/rackfetch/kafka-go/testing"
	"github.com/rackfetch/kafka-go/zstd"
)

// Kafka API keys the tests watch for.
const (
	apiProduce     = 0
	apiFetch       = 1
	apiListOffsets = 2
)

// fetchConfig makes the broker answer within half a second when it has nothing: tests poll.
var fetchConfig = kafka.ReadBatchConfig{MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 500 * time.Millisecond}

// readFrom reads n messages from offset on conn, seeking with whence (SeekAbsolute, or
// SeekAbsolute|SeekDontCheck on a follower) before each fetch. Offsets must follow each other, stay
// below each batch's high watermark, and no batch may name a preferred replica.
func readFrom(t *testing.T, conn *kafka.Conn, offset int64, n int, whence int) []kafka.Message {
	t.Helper()
	var msgs []kafka.Message
	next := offset
	eventually(t, 20*time.Second, fmt.Sprintf("%d messages from offset %d on broker %d", n, offset, conn.Broker().ID), func() bool {
		if got, err := conn.Seek(next, whence); err != nil || got != next {
			t.Fatalf("Seek(%d, %#x) on broker %d = %d, %v", next, whence, conn.Broker().ID, got, err)
		}
		batch := conn.ReadBatchWith(fetchConfig)
		if r := batch.PreferredReadReplica(); r != -1 {
			t.Errorf("fetch from broker %d: preferred read replica %d, want -1", conn.Broker().ID, r)
		}
		for {
			m, err := batch.ReadMessage()
			if err != nil {
				break
			}
			if m.Offset != next {
				t.Errorf("broker %d: message at offset %d, want %d", conn.Broker().ID, m.Offset, next)
			}
			if m.Offset >= batch.HighWaterMark() {
				t.Errorf("broker %d: message at offset %d, past the high watermark %d", conn.Broker().ID, m.Offset, batch.HighWaterMark())
			}
			msgs = append(msgs, m)
			next = m.Offset + 1
		}
		if err := batch.Close(); err != nil {
			t.Fatalf("fetching from broker %d at offset %d: %v", conn.Broker().ID, next, err)
		}
		if o, _ := conn.Offset(); o != next {
			t.Errorf("broker %d: Conn offset %d after the batch, want %d", conn.Broker().ID, o, next)
		}
		return len(msgs) >= n
	})
	if len(msgs) != n {
		t.Fatalf("read %d messages from offset %d, want %d", len(msgs), offset, n)
	}
	return msgs
}

// sameMessage compares what a reader gets back with what was written, nil keys and values included.
func sameMessage(t *testing.T, what string, got, want kafka.Message) {
	t.Helper()
	if !bytes.Equal(got.Key, want.Key) || (got.Key == nil) != (want.Key == nil) {
		t.Errorf("%s: key %q (nil: %v), want %q (nil: %v)", what, got.Key, got.Key == nil, want.Key, want.Key == nil)
	}
	if !bytes.Equal(got.Value, want.Value) || (got.Value == nil) != (want.Value == nil) {
		t.Errorf("%s: value of %d bytes (nil: %v), want %d bytes (nil: %v)", what, len(got.Value), got.Value == nil, len(want.Value), want.Value == nil)
	}
	if !want.Time.IsZero() && !got.Time.Equal(want.Time) {
		t.Errorf("%s: time %v, want %v", what, got.Time, want.Time)
	}
	if len(got.Headers) != len(want.Headers) {
		t.Errorf("%s: headers %v, want %v", what, got.Headers, want.Headers)
		return
	}
	for i := range want.Headers {
		if got.Headers[i].Key != want.Headers[i].Key || !bytes.Equal(got.Headers[i].Value, want.Headers[i].Value) {
			t.Errorf("%s: header %d = %s=%q, want %s=%q", what, i, got.Headers[i].Key, got.Headers[i].Value, want.Headers[i].Key, want.Headers[i].Value)
		}
	}
}

// Produce and read back through Conn with each codec: keys, values, headers and times exact, offsets in
// order, and WriteCompressedMessagesAt reporting each batch's base offset.
func TestConnProduceFetchCodecs(t *testing.T) {
	c := requireRackCluster(t)
	codecs := []struct {
		name  string
		codec kafka.CompressionCodec
	}{
		{"none", nil},
		{"gzip", gzip.NewCompressionCodec()},
		{"snappy", snappy.NewCompressionCodec()},
		{"lz4", lz4.NewCompressionCodec()},
		{"zstd", zstd.NewCompressionCodec()},
	}
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: len(codecs)})
	for i, cc := range codecs {
		t.Run(cc.name, func(t *testing.T) {
			spy := &apiSpy{}
			conn := dialLeader(t, spy.dialer(newDialer()), c.Brokers[0], topic, i)
			base := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
			big := bytes.Repeat([]byte("compressible "+cc.name+" value "), 400) // ~8 KB
			first := []kafka.Message{
				{Key: []byte("key-0"), Value: big, Time: base, Headers: []kafka.Header{{Key: "trace", Value: []byte("t-0")}, {Key: "codec", Value: []byte(cc.name)}}},
				{Key: nil, Value: []byte("no key"), Time: base.Add(time.Millisecond)},
				{Key: []byte("key-2"), Value: []byte{0, 1, 2, 0xff}, Time: base.Add(2 * time.Millisecond), Headers: []kafka.Header{{Key: "h", Value: []byte{}}}},
			}
			second := []kafka.Message{
				{Key: []byte("key-3"), Value: nil, Time: base.Add(3 * time.Millisecond)}, // a tombstone
				{Key: []byte("key-4"), Value: []byte("last"), Time: base.Add(4 * time.Millisecond), Headers: []kafka.Header{{Key: "a", Value: []byte("1")}, {Key: "a", Value: []byte("2")}}},
			}

			n, partition, offset, _, err := conn.WriteCompressedMessagesAt(cc.codec, first...)
			if err != nil {
				t.Fatalf("WriteCompressedMessagesAt(%s): %v", cc.name, err)
			}
			if wantN := len("key-0") + len(big) + len("no key") + len("key-2") + 4; n != wantN || partition != int32(i) || offset != 0 {
				t.Errorf("first batch: %d bytes to partition %d at offset %d, want %d bytes to %d at offset 0", n, partition, offset, wantN, i)
			}
			_, _, offset, _, err = conn.WriteCompressedMessagesAt(cc.codec, second...)
			if err != nil {
				t.Fatalf("WriteCompressedMessagesAt(%s), second batch: %v", cc.name, err)
			}
			if offset != int64(len(first)) {
				t.Errorf("second batch at base offset %d, want %d", offset, len(first))
			}

			// The codec was applied: the 8 KB of repeated text shrinks on the wire unless uncompressed.
			produced := spy.requests(apiProduce)
			if len(produced) != 2 {
				t.Fatalf("%d produce requests sent, want 2", len(produced))
			}
			if compressed := produced[0].size < len(big)/2; compressed != (cc.codec != nil) {
				t.Errorf("codec %s: produce request of %d bytes for a %d-byte value", cc.name, produced[0].size, len(big))
			}

			want := append(append([]kafka.Message{}, first...), second...)
			got := readFrom(t, conn, 0, len(want), kafka.SeekAbsolute)
			for j, m := range got {
				if m.Offset != int64(j) || m.Topic != topic || m.Partition != i {
					t.Errorf("message %d: %s/%d@%d", j, m.Topic, m.Partition, m.Offset)
				}
				sameMessage(t, fmt.Sprintf("%s message %d", cc.name, j), m, want[j])
			}
		})
	}
}

// ReadFirstOffset, ReadLastOffset, ReadOffsets, ReadOffset(time), every whence of Seek, and seeks out of
// range failing with OffsetOutOfRange.
func TestConnOffsetsAndSeek(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	conn := dialLeader(t, newDialer(), c.Brokers[0], topic, 0)

	if first, last, err := conn.ReadOffsets(); err != nil || first != 0 || last != 0 {
		t.Errorf("ReadOffsets of an empty partition = %d, %d, %v; want 0, 0", first, last, err)
	}
	// A new Conn reads from the first offset.
	if o, whence := conn.Offset(); o != 0 || whence != kafka.SeekStart {
		t.Errorf("Offset of a new Conn = %d, %d; want 0, SeekStart", o, whence)
	}

	const n = 10
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		msgs[i] = kafka.Message{Value: []byte(fmt.Sprintf("m%d", i)), Time: t0.Add(time.Duration(i) * time.Second)}
	}
	// Two batches, so that offsets and times span batches.
	if _, err := conn.WriteMessages(msgs[:4]...); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.WriteMessages(msgs[4:]...); err != nil {
		t.Fatal(err)
	}

	if o, err := conn.ReadFirstOffset(); err != nil || o != 0 {
		t.Errorf("ReadFirstOffset = %d, %v; want 0", o, err)
	}
	if o, err := conn.ReadLastOffset(); err != nil || o != n {
		t.Errorf("ReadLastOffset = %d, %v; want %d", o, err, n)
	}
	if first, last, err := conn.ReadOffsets(); err != nil || first != 0 || last != n {
		t.Errorf("ReadOffsets = %d, %d, %v; want 0, %d", first, last, err, n)
	}
	for _, tc := range []struct {
		at   time.Time
		want int64
	}{
		{t0.Add(-time.Minute), 0},
		{t0, 0},
		{t0.Add(5 * time.Second), 5},
		{t0.Add(5*time.Second + time.Millisecond), 6}, // the first message at or after the time
		{t0.Add(9 * time.Second), 9},
	} {
		if o, err := conn.ReadOffset(tc.at); err != nil || o != tc.want {
			t.Errorf("ReadOffset(t0%+v) = %d, %v; want %d", tc.at.Sub(t0), o, err, tc.want)
		}
	}

	// readOne reads the message at the Conn's offset.
	readOne := func(what string, want int64) {
		t.Helper()
		batch := conn.ReadBatchWith(fetchConfig)
		m, err := batch.ReadMessage()
		if err != nil || m.Offset != want || string(m.Value) != fmt.Sprintf("m%d", want) {
			t.Errorf("%s: read offset %d %q, %v; want offset %d", what, m.Offset, m.Value, err, want)
		}
		batch.Close()
	}
	seek := func(offset int64, whence int, want int64) {
		t.Helper()
		if got, err := conn.Seek(offset, whence); err != nil || got != want {
			t.Fatalf("Seek(%d, %d) = %d, %v; want %d", offset, whence, got, err, want)
		}
		if o, w := conn.Offset(); o != want || w != kafka.SeekAbsolute {
			t.Errorf("after Seek(%d, %d): Offset = %d, %d; want %d, SeekAbsolute", offset, whence, o, w, want)
		}
	}
	seek(3, kafka.SeekStart, 3)
	readOne("after Seek(3, SeekStart)", 3)
	seek(7, kafka.SeekAbsolute, 7)
	readOne("after Seek(7, SeekAbsolute)", 7)
	seek(2, kafka.SeekEnd, n-2)
	readOne("after Seek(2, SeekEnd)", n-2)
	// The read moved the Conn past what the batch handed out (at least offset n-2).
	o, _ := conn.Offset()
	if o <= n-2 {
		t.Fatalf("Offset after reading offset %d: %d", n-2, o)
	}
	seek(-3, kafka.SeekCurrent, o-3)
	readOne("after Seek(-3, SeekCurrent)", o-3)
	seek(0, kafka.SeekEnd, n)
	seek(0, kafka.SeekStart, 0)

	// Out of range: an error matching OffsetOutOfRange, and the offset does not move.
	seek(4, kafka.SeekAbsolute, 4)
	for _, tc := range []struct {
		offset int64
		whence int
	}{
		{n + 1, kafka.SeekAbsolute},
		{-1, kafka.SeekAbsolute},
		{-1, kafka.SeekStart},
		{n + 1, kafka.SeekEnd},
		{n, kafka.SeekCurrent},
		{-5, kafka.SeekCurrent},
	} {
		if got, err := conn.Seek(tc.offset, tc.whence); !errors.Is(err, kafka.OffsetOutOfRange) {
			t.Errorf("Seek(%d, %d) = %d, %v; want an error matching OffsetOutOfRange", tc.offset, tc.whence, got, err)
		}
		if o, w := conn.Offset(); o != 4 || w != kafka.SeekAbsolute {
			t.Errorf("after the failed Seek(%d, %d): Offset = %d, %d; want 4, SeekAbsolute", tc.offset, tc.whence, o, w)
		}
	}
	if _, err := conn.Seek(0, 7); err == nil || errors.Is(err, kafka.OffsetOutOfRange) {
		t.Errorf("Seek with whence 7: %v, want an invalid-whence error", err)
	}

	// An unchecked seek past the end is accepted; the broker then refuses the fetch.
	seek(n+100, kafka.SeekAbsolute|kafka.SeekDontCheck, n+100)
	batch := conn.ReadBatchWith(fetchConfig)
	if _, err := batch.ReadMessage(); !errors.Is(err, kafka.OffsetOutOfRange) {
		t.Errorf("fetch at offset %d: %v, want an error matching OffsetOutOfRange", n+100, err)
	}
	if err := batch.Close(); !errors.Is(err, kafka.OffsetOutOfRange) {
		t.Errorf("closing the batch at offset %d: %v, want an error matching OffsetOutOfRange", n+100, err)
	}
}

// rackTopic creates a one-partition topic led by the rack-a broker with followers in racks b and c, and
// writes n messages to it. It returns the topic and the partition as metadata describes it.
func rackTopic(t *testing.T, c *ktesting.Cluster, n int) (string, kafka.Partition, []kafka.Message) {
	t.Helper()
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: []kafka.ReplicaAssignment{{Partition: 0, Replicas: []int{a, b, cc}}}})
	p, err := newDialer().LookupPartition(testContext(t, itTimeout), "tcp", c.Brokers[0], topic, 0)
	if err != nil {
		t.Fatalf("LookupPartition: %v", err)
	}
	if p.Leader.ID != a || p.Leader.Rack != "a" || len(p.Isr) != 3 {
		t.Fatalf("%s/0: leader %+v, ISR %v; want broker %d in rack a leading a full ISR", topic, p.Leader, brokerIDs(p.Isr), a)
	}
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		msgs[i] = kafka.Message{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("v%d", i))}
	}
	conn := dialLeader(t, newDialer(), c.Brokers[0], topic, 0)
	if _, err := conn.WriteMessages(msgs...); err != nil { // acks=all: every replica has them
		t.Fatal(err)
	}
	return topic, p, msgs
}

// replica returns p as seen from its replica on broker id: DialPartition then connects to that broker.
func replica(t *testing.T, p kafka.Partition, id int) kafka.Partition {
	t.Helper()
	for _, r := range p.Replicas {
		if r.ID == id {
			p.Leader = r
			return p
		}
	}
	t.Fatalf("broker %d holds no replica of %s/%d (replicas %v)", id, p.Topic, p.ID, brokerIDs(p.Replicas))
	return p
}

// The headline of KIP-392 on Conn: a client in rack b fetching from the rack-a leader is told to fetch
// from the rack-b follower instead (and gets no records); a client without a rack gets the records. The
// follower, reached directly with an unchecked seek, serves the data below its own high watermark,
// without ever being sent a ListOffsets, which it refuses.
func TestConnRackAwareFetch(t *testing.T) {
	c := requireRackCluster(t)
	if !ktesting.KafkaIsAtLeast("2.4") {
		t.Skip("rack-aware fetching needs Kafka 2.4+ (Fetch v11)")
	}
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	const n = 5
	topic, p, msgs := rackTopic(t, c, n)

	// Clients in racks b and c are sent to their rack's follower, with no records.
	for _, tc := range []struct {
		rack string
		want int
	}{{"b", b}, {"c", cc}} {
		if !c.HasSelector() {
			tc.want = -1 // without replica.selector.class the leader never names a replica
		}
		d := newDialer()
		d.RackID = tc.rack
		conn := dialLeader(t, d, c.Brokers[0], topic, 0)
		if conn.Broker().ID != a {
			t.Fatalf("DialLeader connected to broker %d, want the leader %d", conn.Broker().ID, a)
		}
		if _, err := conn.Seek(0, kafka.SeekAbsolute); err != nil {
			t.Fatal(err)
		}
		// The broker may wait up to one second less than the read deadline; with a preferred replica
		// (Kafka 3.3+) it answers at once.
		conn.SetReadDeadline(time.Now().Add(itTimeout))
		batch := conn.ReadBatch(1, 1<<20)
		if err := batch.Err(); err != nil {
			t.Fatalf("rack %s client at the rack-a leader: ReadBatch: %v", tc.rack, err)
		}
		if got := batch.PreferredReadReplica(); got != tc.want {
			t.Errorf("rack %s client at the rack-a leader: PreferredReadReplica = %d, want %d (selector %q)", tc.rack, got, tc.want, c.Selector)
		}
		if tc.want >= 0 {
			if m, err := batch.ReadMessage(); err != io.EOF {
				t.Errorf("rack %s client: a batch naming replica %d has a record (offset %d, err %v), want none", tc.rack, tc.want, m.Offset, err)
			}
			if batch.HighWaterMark() != n {
				t.Errorf("rack %s client: high watermark %d, want %d", tc.rack, batch.HighWaterMark(), n)
			}
		}
		if err := batch.Close(); err != nil {
			t.Errorf("rack %s client: Close = %v", tc.rack, err)
		}
		if tc.want >= 0 {
			if o, _ := conn.Offset(); o != 0 {
				t.Errorf("rack %s client: Conn offset %d after an empty batch, want 0", tc.rack, o)
			}
		}
	}

	// A client without a rack gets -1 and the records from the leader.
	conn := dialLeader(t, newDialer(), c.Brokers[0], topic, 0)
	for i, m := range readFrom(t, conn, 0, n, kafka.SeekAbsolute) {
		sameMessage(t, fmt.Sprintf("leader, no rack: message %d", i), m, msgs[i])
	}

	// Straight to the rack-b follower.
	spy := &apiSpy{}
	d := spy.dialer(newDialer())
	d.RackID = "b"
	fconn, err := d.DialPartition(testContext(t, itTimeout), "tcp", c.Brokers[0], replica(t, p, b))
	if err != nil {
		t.Fatalf("dialing the rack-b follower %d: %v", b, err)
	}
	defer fconn.Close()
	fconn.SetDeadline(time.Now().Add(connDeadline))
	if fconn.Broker().ID != b || fconn.Broker().Rack != "b" {
		t.Fatalf("follower Conn is on broker %+v, want %d in rack b", fconn.Broker(), b)
	}
	// ListOffsets is the leader's: the follower refuses it, alone or inside a checked seek.
	if o, err := fconn.ReadFirstOffset(); !errors.Is(err, kafka.NotLeaderForPartition) {
		t.Errorf("ReadFirstOffset on the follower = %d, %v; want an error matching NotLeaderForPartition", o, err)
	}
	if o, err := fconn.Seek(0, kafka.SeekAbsolute); !errors.Is(err, kafka.NotLeaderForPartition) {
		t.Errorf("checked Seek on the follower = %d, %v; want an error matching NotLeaderForPartition", o, err)
	}
	if len(spy.requests(apiListOffsets)) == 0 {
		t.Fatalf("the spy saw no ListOffsets request")
	}
	spy.reset()
	if o, err := fconn.Seek(0, kafka.SeekAbsolute|kafka.SeekDontCheck); err != nil || o != 0 {
		t.Fatalf("Seek(0, SeekAbsolute|SeekDontCheck) on the follower = %d, %v; want 0, nil", o, err)
	}
	if got := len(spy.sent); got != 0 {
		t.Errorf("an unchecked seek sent %d requests, want none", got)
	}
	for i, m := range readFrom(t, fconn, 0, n, kafka.SeekAbsolute|kafka.SeekDontCheck) {
		sameMessage(t, fmt.Sprintf("rack-b follower: message %d", i), m, msgs[i])
	}

	// Fresh writes reach the follower once its high watermark moves; it never hands out more.
	more := []kafka.Message{{Value: []byte("v5")}, {Value: []byte("v6")}, {Value: []byte("v7")}}
	if _, err := conn.WriteMessages(more...); err != nil {
		t.Fatal(err)
	}
	for i, m := range readFrom(t, fconn, n, len(more), kafka.SeekAbsolute|kafka.SeekDontCheck) {
		sameMessage(t, fmt.Sprintf("rack-b follower: new message %d", i), m, more[i])
	}
	if got := len(spy.requests(apiListOffsets)); got != 0 {
		t.Errorf("reading from the follower sent %d ListOffsets requests, want none", got)
	}
	if len(spy.requests(apiFetch)) == 0 {
		t.Errorf("the spy saw no Fetch request to the follower")
	}
}

// A client in the leader's own rack is served by the leader: no preferred replica, and the records.
func TestConnRackLocalLeader(t *testing.T) {
	c := requireRackCluster(t)
	const n = 4
	topic, _, msgs := rackTopic(t, c, n)
	d := newDialer()
	d.RackID = "a"
	conn := dialLeader(t, d, c.Brokers[0], topic, 0)
	if conn.Broker().ID != brokerInRack(t, c, "a") {
		t.Fatalf("DialLeader connected to broker %d, want the rack-a leader", conn.Broker().ID)
	}
	// readFrom asserts PreferredReadReplica() == -1 on every batch.
	for i, m := range readFrom(t, conn, 0, n, kafka.SeekAbsolute) {
		sameMessage(t, fmt.Sprintf("rack-a client at the rack-a leader: message %d", i), m, msgs[i])
	}
}

// Conn.ReadMessage and Conn.Read read one message at the Conn's offset and advance it; a value longer than
// Read's buffer is io.ErrShortBuffer and is read again with a larger one.
func TestConnIntegrationReadMessageAndRead(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	conn := dialLeader(t, newDialer(), c.Brokers[0], topic, 0)
	values := []string{"one", "two", "a value longer than eight bytes", "four"}
	for _, v := range values {
		// One batch each, so that each fetch may stop after one message.
		if _, err := conn.WriteMessages(kafka.Message{Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))

	m, err := conn.ReadMessage(1 << 20)
	if err != nil || m.Offset != 0 || string(m.Value) != "one" || m.Topic != topic {
		t.Fatalf("ReadMessage = %s@%d %q, %v; want %s@0 \"one\"", m.Topic, m.Offset, m.Value, err, topic)
	}
	buf := make([]byte, 8)
	if n, err := conn.Read(buf); err != nil || string(buf[:n]) != "two" {
		t.Fatalf("Read = %q, %v; want \"two\"", buf[:n], err)
	}
	if _, err := conn.Read(buf); !errors.Is(err, io.ErrShortBuffer) {
		t.Fatalf("Read of a %d-byte value into 8 bytes: %v, want io.ErrShortBuffer", len(values[2]), err)
	}
	if o, _ := conn.Offset(); o != 2 {
		t.Fatalf("offset after the short read = %d, want 2", o)
	}
	m, err = conn.ReadMessage(1 << 20)
	if err != nil || m.Offset != 2 || string(m.Value) != values[2] {
		t.Fatalf("ReadMessage after the short read = @%d %q, %v; want @2 %q", m.Offset, m.Value, err, values[2])
	}
	m, err = conn.ReadMessage(1 << 20)
	if err != nil || m.Offset != 3 || string(m.Value) != "four" {
		t.Fatalf("last ReadMessage = @%d %q, %v; want @3 \"four\"", m.Offset, m.Value, err)
	}
	if o, _ := conn.Offset(); o != 4 {
		t.Errorf("offset after reading everything = %d, want 4", o)
	}
}
