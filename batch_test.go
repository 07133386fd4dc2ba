package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// Tests of Batch: what a fetch response hands out, and where it leaves the
// Conn's offset. Answers the fake broker could not give by itself are
// forged with Step.Edit on the broker's own answer.

// ctEditPartition returns a Step.Edit applying fn to every partition of a
// Fetch answer.
func ctEditPartition(fn func(p *protocol.FetchResponsePartition)) func(protocol.Response) {
	return func(resp protocol.Response) {
		fr, ok := resp.(*protocol.FetchResponse)
		if !ok {
			return
		}
		for i := range fr.Topics {
			for j := range fr.Topics[i].Partitions {
				fn(&fr.Topics[i].Partitions[j])
			}
		}
	}
}

// ctBatch builds a record batch holding values at offset deltas (0, 1, 2,
// ... when deltas is nil).
func ctBatch(t testing.TB, values []string, deltas []int64, edit func(*protocol.RecordBatchBuilder)) []byte {
	t.Helper()
	bb := protocol.NewRecordBatchBuilder()
	if edit != nil {
		edit(bb)
	}
	for i, v := range values {
		r := protocol.Record{Timestamp: 1700000000000 + int64(i), Value: []byte(v)}
		if deltas == nil {
			bb.Add(r)
			continue
		}
		r.Offset = deltas[i]
		if err := bb.AddWithOffset(r); err != nil {
			t.Fatal(err)
		}
	}
	b, err := bb.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ctSetLastOffsetDelta rewrites a batch's last offset delta (and its CRC),
// as log compaction leaves batches whose last records are gone.
func ctSetLastOffsetDelta(batch []byte, delta int32) {
	binary.BigEndian.PutUint32(batch[23:], uint32(delta))
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)))
}

// ctControlBatch builds a transaction marker of producer pid: commit or
// abort.
func ctControlBatch(t testing.TB, pid int64, commit bool) []byte {
	t.Helper()
	bb := protocol.NewRecordBatchBuilder()
	bb.Control, bb.Transactional = true, true
	bb.ProducerID, bb.ProducerEpoch = pid, 0
	key := []byte{0, 0, 0, 0} // version 0, type 0 (abort)
	if commit {
		key[3] = 1
	}
	bb.Add(protocol.Record{Timestamp: 1700000000000, Key: key, Value: []byte{0, 0, 0, 0, 0, 0}})
	b, err := bb.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A leader naming a preferred read replica: the batch reports it, hands
// out no record, and leaves the Conn's offset alone.
func TestBatchForgedPreferredReadReplica(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	c.AppendRecords(ctTopic, 0, "a", "b")
	conn := ctDial(t, &Dialer{RackID: "rack-b"}, c, 0)
	ctSeek(t, conn, 0)
	c.Broker(1).ScriptNext(protocol.Fetch, fakebroker.Step{Edit: ctEditPartition(func(p *protocol.FetchResponsePartition) {
		p.PreferredReadReplica, p.Records = 3, nil
	})})

	msgs, readErr, closeErr, b := ctReadBatch(t, conn, ReadBatchConfig{})
	if got := b.PreferredReadReplica(); got != 3 {
		t.Fatalf("PreferredReadReplica() = %d, want 3", got)
	}
	if len(msgs) != 0 || readErr != io.EOF || closeErr != nil {
		t.Fatalf("read %d messages, ended with %v, Close %v; want none, io.EOF, nil", len(msgs), readErr, closeErr)
	}
	if b.HighWaterMark() != 2 {
		t.Errorf("HighWaterMark() = %d, want 2", b.HighWaterMark())
	}
	ctExpectOffset(t, conn, 0)

	// Without the forgery the leader serves the records itself.
	msgs, readErr, _, b = ctReadBatch(t, conn, ReadBatchConfig{})
	if b.PreferredReadReplica() != -1 || len(msgs) != 2 || readErr != io.EOF {
		t.Fatalf("next batch: replica %d, %d messages, %v", b.PreferredReadReplica(), len(msgs), readErr)
	}
}

// Partition errors of a fetch surface from ReadMessage and Close, matching
// the kafka.Error, and the Conn keeps working.
func TestBatchPartitionErrors(t *testing.T) {
	for _, code := range []Error{NotLeaderForPartition, OffsetOutOfRange, FencedLeaderEpoch, UnknownTopicOrPartition} {
		code := code
		t.Run(code.Title(), func(t *testing.T) {
			c := ctCluster(t, fakebroker.Config{}, 1, 1)
			c.AppendRecords(ctTopic, 0, "a", "b")
			conn := ctDial(t, nil, c, 0)
			ctSeek(t, conn, 1)
			c.Broker(1).ScriptNext(protocol.Fetch, fakebroker.Step{ErrorCode: int16(code)})

			msgs, readErr, closeErr, b := ctReadBatch(t, conn, ReadBatchConfig{})
			if len(msgs) != 0 {
				t.Fatalf("read %d messages from a failed fetch", len(msgs))
			}
			for what, err := range map[string]error{"ReadMessage": readErr, "Close": closeErr, "Err": b.Err()} {
				if !errors.Is(err, code) {
					t.Errorf("%s: %v; want an error matching %v", what, err, code)
				}
			}
			var ke Error
			if !errors.As(readErr, &ke) || ke != code {
				t.Errorf("errors.As(%v) = %v, want %v", readErr, ke, code)
			}
			if !strings.Contains(readErr.Error(), "fetching "+ctTopic+"/0") {
				t.Errorf("error %q does not name the partition", readErr)
			}
			ctExpectOffset(t, conn, 1)

			// Still usable: the next fetch reads from the same offset.
			ctExpectOffsets(t, conn, 1)
			if last, err := conn.ReadLastOffset(); err != nil || last != 2 {
				t.Fatalf("ReadLastOffset = %d, %v", last, err)
			}
		})
	}
}

// The same errors as the fake broker gives them by itself.
func TestBatchNaturalPartitionErrors(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{Brokers: 2}, 1, 2)
	c.AppendRecords(ctTopic, 0, "a", "b")
	conn := ctDial(t, nil, c, 0)

	// Past the end of the log.
	ctSeek(t, conn, 5)
	_, readErr, closeErr, _ := ctReadBatch(t, conn, ReadBatchConfig{})
	if !errors.Is(readErr, OffsetOutOfRange) || !errors.Is(closeErr, OffsetOutOfRange) {
		t.Fatalf("fetch past the end: %v, Close %v; want OffsetOutOfRange", readErr, closeErr)
	}
	ctExpectOffset(t, conn, 5)
	ctSeek(t, conn, 0)
	ctExpectOffsets(t, conn, 0, 1)

	// A new leader epoch fences the Conn, which knows the old one.
	c.SetLeader(ctTopic, 0, 2)
	ctSeek(t, conn, 0)
	_, readErr, closeErr, _ = ctReadBatch(t, conn, ReadBatchConfig{})
	if !errors.Is(readErr, FencedLeaderEpoch) || !errors.Is(closeErr, FencedLeaderEpoch) {
		t.Fatalf("fetch with a stale epoch: %v, Close %v; want FencedLeaderEpoch", readErr, closeErr)
	}
	// The connection itself still works.
	if _, err := conn.ReadPartitions(); err != nil {
		t.Fatalf("ReadPartitions after the error: %v", err)
	}
}

// A response that ends inside a batch (brokers cut at max bytes): the
// complete records, then io.EOF, and the Conn's offset at the first record
// not read, so the next fetch gets the cut batch whole.
func TestBatchCutInsideALaterBatch(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	c.AppendRecords(ctTopic, 0, "a", "b", "c")
	c.AppendRecords(ctTopic, 0, "d", "e", "f")
	conn := ctDial(t, nil, c, 0)
	ctSeek(t, conn, 0)
	var cut atomic.Bool // set by the broker's goroutine
	c.Broker(1).ScriptNext(protocol.Fetch, fakebroker.Step{Edit: ctEditPartition(func(p *protocol.FetchResponsePartition) {
		if len(p.Records) > 20 {
			p.Records = p.Records[:len(p.Records)-20]
			cut.Store(true)
		}
	})})

	msgs := ctExpectOffsets(t, conn, 0, 1, 2)
	if !cut.Load() {
		t.Fatal("the forged answer was not cut")
	}
	if got := strings.Join(ctValues(msgs), ""); got != "abc" {
		t.Fatalf("values %q", got)
	}
	ctExpectOffset(t, conn, 3)
	ctExpectOffsets(t, conn, 3, 4, 5)
	ctExpectOffset(t, conn, 6)
}

// A first batch larger than the fetch's max bytes, cut by the broker (as
// brokers before KIP-74 did): an error matching MessageSizeTooLarge, one
// fetch per ReadBatch (no loop), and the offset stays.
func TestBatchFirstBatchLargerThanMaxBytes(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	big := strings.Repeat("x", 10000)
	c.AppendRecords(ctTopic, 0, big, big)
	b := c.Broker(1)
	conn := ctDial(t, nil, c, 0)
	ctExpectOffsets(t, conn, 0, 1) // caches the topic id
	ctSeek(t, conn, 0)

	const maxBytes = 1000
	var batchSize atomic.Int64 // the first batch's size, as the broker saw it
	for i := 0; i < 2; i++ {
		b.ScriptNext(protocol.Fetch, fakebroker.Step{Edit: ctEditPartition(func(p *protocol.FetchResponsePartition) {
			if h, err := protocol.ParseRecordBatchHeader(p.Records); err == nil {
				batchSize.Store(12 + int64(h.Length))
			}
			if len(p.Records) > maxBytes {
				p.Records = p.Records[:maxBytes]
			}
		})})
		before := b.Requests(protocol.Fetch)
		msgs, readErr, closeErr, _ := ctReadBatch(t, conn, ReadBatchConfig{MinBytes: 1, MaxBytes: maxBytes})
		if n := b.Requests(protocol.Fetch) - before; n != 1 {
			t.Fatalf("ReadBatch sent %d fetches, want 1", n)
		}
		if len(msgs) != 0 {
			t.Fatalf("read %d messages from a cut batch", len(msgs))
		}
		if !errors.Is(readErr, MessageSizeTooLarge) || !errors.Is(closeErr, MessageSizeTooLarge) {
			t.Fatalf("ReadMessage: %v, Close: %v; want MessageSizeTooLarge", readErr, closeErr)
		}
		// The error says how large the batch is, so max bytes can be raised.
		size := batchSize.Load()
		if size <= maxBytes || !strings.Contains(readErr.Error(), "("+strconv.FormatInt(size, 10)+" bytes)") ||
			!strings.Contains(readErr.Error(), ctTopic+"/0 at offset 0") {
			t.Errorf("error %q does not give the batch size (%d bytes) and position", readErr, size)
		}
		ctExpectOffset(t, conn, 0)
	}
	// With enough max bytes the batch reads.
	ctExpectOffsets(t, conn, 0, 1)

	// Max bytes is a soft limit: a broker that sends the first batch whole
	// anyway (KIP-74, as the fake does) gets it read.
	ctSeek(t, conn, 0)
	msgs, readErr, closeErr, _ := ctReadBatch(t, conn, ReadBatchConfig{MinBytes: 1, MaxBytes: maxBytes})
	if got := ctOffsets(msgs); !ctEqualInt64s(got, []int64{0, 1}) || readErr != io.EOF || closeErr != nil {
		t.Fatalf("whole first batch over max bytes: %v, %v, %v", got, readErr, closeErr)
	}
}

// Records at or past the high watermark (or, reading committed, the last
// stable offset) are never handed out, even when the broker sends them.
func TestBatchStopsAtHighWatermark(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	c.AppendRecords(ctTopic, 0, "0", "1", "2", "3", "4", "5")
	b := c.Broker(1)
	conn := ctDial(t, nil, c, 0)
	ctSeek(t, conn, 0)

	// The fake sends the whole batch, which straddles the high watermark.
	c.SetReplicaHighWatermark(ctTopic, 0, 1, 3)
	msgs, readErr, _, batch := ctReadBatch(t, conn, ReadBatchConfig{})
	if got := ctOffsets(msgs); !ctEqualInt64s(got, []int64{0, 1, 2}) || readErr != io.EOF {
		t.Fatalf("read %v, %v; want [0 1 2], io.EOF", got, readErr)
	}
	if batch.HighWaterMark() != 3 {
		t.Errorf("HighWaterMark() = %d, want 3", batch.HighWaterMark())
	}
	for _, m := range msgs {
		if m.HighWaterMark != 3 {
			t.Errorf("message %d: HighWaterMark %d", m.Offset, m.HighWaterMark)
		}
	}
	ctExpectOffset(t, conn, 3)

	// Forged: a high watermark of 0 (an empty partition) with records.
	ctSeek(t, conn, 0)
	b.ScriptNext(protocol.Fetch, fakebroker.Step{Edit: ctEditPartition(func(p *protocol.FetchResponsePartition) { p.HighWatermark = 0 })})
	ctExpectOffsets(t, conn)
	ctExpectOffset(t, conn, 0)

	// Forged: an unknown (-1) high watermark.
	b.ScriptNext(protocol.Fetch, fakebroker.Step{Edit: ctEditPartition(func(p *protocol.FetchResponsePartition) { p.HighWatermark = -1 })})
	ctExpectOffsets(t, conn)

	// Reading committed stops at the last stable offset.
	c.SetReplicaHighWatermark(ctTopic, 0, 1, 6)
	b.ScriptNext(protocol.Fetch, fakebroker.Step{Edit: ctEditPartition(func(p *protocol.FetchResponsePartition) { p.LastStableOffset = 2 })})
	msgs, readErr, _, batch = ctReadBatch(t, conn, ReadBatchConfig{MinBytes: 1, MaxBytes: 1 << 20, IsolationLevel: ReadCommitted})
	if got := ctOffsets(msgs); !ctEqualInt64s(got, []int64{0, 1}) || readErr != io.EOF {
		t.Fatalf("read committed: %v, %v; want [0 1], io.EOF", got, readErr)
	}
	if batch.LastStableOffset() != 2 {
		t.Errorf("LastStableOffset() = %d, want 2", batch.LastStableOffset())
	}
	ctExpectOffset(t, conn, 2)
	// Reading uncommitted ignores it.
	b.ScriptNext(protocol.Fetch, fakebroker.Step{Edit: ctEditPartition(func(p *protocol.FetchResponsePartition) { p.LastStableOffset = 2 })})
	ctExpectOffsets(t, conn, 2, 3, 4, 5)
}

// Records before the fetch offset in a batch that starts earlier are
// skipped.
func TestBatchSkipsRecordsBeforeFetchOffset(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	c.AppendRecords(ctTopic, 0, "0", "1", "2", "3", "4")
	c.SetLogStartOffset(ctTopic, 0, 1)
	conn := ctDial(t, nil, c, 0)
	ctSeek(t, conn, 3)
	c.Broker(1).ScriptNext(protocol.Fetch, fakebroker.Step{Edit: func(resp protocol.Response) {
		resp.(*protocol.FetchResponse).ThrottleTimeMs = 250
	}})
	msgs, readErr, _, b := ctReadBatch(t, conn, ReadBatchConfig{})
	if got := ctOffsets(msgs); !ctEqualInt64s(got, []int64{3, 4}) || readErr != io.EOF {
		t.Fatalf("read %v, %v; want [3 4], io.EOF", got, readErr)
	}
	ctExpectOffset(t, conn, 5)
	if b.LogStartOffset() != 1 || b.HighWaterMark() != 5 || b.Partition() != 0 {
		t.Errorf("LogStartOffset %d, HighWaterMark %d, Partition %d; want 1, 5, 0", b.LogStartOffset(), b.HighWaterMark(), b.Partition())
	}
	if b.Throttle() != 250*time.Millisecond {
		t.Errorf("Throttle() = %v, want 250ms", b.Throttle())
	}
}

// Control batches and offsets removed by compaction are read past: the
// Conn's offset after Close is beyond them, even when a response holds
// nothing else.
func TestBatchControlBatchesAndCompactedGaps(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	b := c.Broker(1)
	const pid = 42

	// 0: a commit marker alone.
	c.AppendBatch(ctTopic, 0, ctControlBatch(t, pid, true))
	// 1-2: data.
	c.AppendBatch(ctTopic, 0, ctBatch(t, []string{"a", "b"}, nil, nil))
	// 3-9: compacted, records left at 3 and 6 only (deltas 0 and 3 of 0-6).
	compacted := ctBatch(t, []string{"c", "d"}, []int64{0, 3}, nil)
	ctSetLastOffsetDelta(compacted, 6)
	c.AppendBatch(ctTopic, 0, compacted)
	// 10: another marker, last in the log.
	c.AppendBatch(ctTopic, 0, ctControlBatch(t, pid, true))
	if got := c.Log(ctTopic, 0, 1).LogEnd; got != 11 {
		t.Fatalf("log end %d, want 11", got)
	}

	conn := ctDial(t, nil, c, 0)
	ctSeek(t, conn, 11)
	ctExpectOffsets(t, conn) // caches the topic id
	ctSeek(t, conn, 0)

	// A response holding only the first marker (the fake always returns
	// the first batch; max bytes keep the next one out).
	b.ScriptNext(protocol.Fetch, fakebroker.Step{Edit: ctEditPartition(func(p *protocol.FetchResponsePartition) {
		h, err := protocol.ParseRecordBatchHeader(p.Records)
		if err == nil {
			p.Records = p.Records[:12+int(h.Length)]
		}
	})})
	ctExpectOffsets(t, conn)
	ctExpectOffset(t, conn, 1)

	msgs := ctExpectOffsets(t, conn, 1, 2, 3, 6)
	if got := strings.Join(ctValues(msgs), ""); got != "abcd" {
		t.Fatalf("values %q", got)
	}
	ctExpectOffset(t, conn, 11)

	// From inside the compacted gap.
	ctSeek(t, conn, 7)
	ctExpectOffsets(t, conn)
	ctExpectOffset(t, conn, 11)
}

// Reading committed drops the records of aborted transactions (named by
// the response) and moves past them and their markers.
func TestBatchAbortedTransactions(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	b := c.Broker(1)
	const aborted, committed = 7, 8
	txn := func(pid int64) func(*protocol.RecordBatchBuilder) {
		return func(bb *protocol.RecordBatchBuilder) {
			bb.Transactional, bb.ProducerID, bb.ProducerEpoch, bb.BaseSequence = true, pid, 0, 0
		}
	}
	c.AppendBatch(ctTopic, 0, ctBatch(t, []string{"x1", "x2"}, nil, txn(aborted))) // 0-1
	c.AppendBatch(ctTopic, 0, ctBatch(t, []string{"ok1"}, nil, txn(committed)))    // 2
	c.AppendBatch(ctTopic, 0, ctControlBatch(t, aborted, false))                   // 3
	c.AppendBatch(ctTopic, 0, ctControlBatch(t, committed, true))                  // 4
	c.AppendBatch(ctTopic, 0, ctBatch(t, []string{"plain"}, nil, nil))             // 5
	conn := ctDial(t, nil, c, 0)
	ctSeek(t, conn, 0)

	forge := fakebroker.Step{Edit: ctEditPartition(func(p *protocol.FetchResponsePartition) {
		p.AbortedTransactions = []protocol.FetchAbortedTransaction{{ProducerID: aborted, FirstOffset: 0}}
	})}
	b.ScriptNext(protocol.Fetch, forge)
	msgs, readErr, closeErr, _ := ctReadBatch(t, conn, ReadBatchConfig{MinBytes: 1, MaxBytes: 1 << 20, IsolationLevel: ReadCommitted})
	if got := ctValues(msgs); strings.Join(got, ",") != "ok1,plain" || readErr != io.EOF || closeErr != nil {
		t.Fatalf("read committed: %q, %v, %v; want [ok1 plain]", got, readErr, closeErr)
	}
	ctExpectOffset(t, conn, 6)
	if req := b.Received(protocol.Fetch); req[len(req)-1].Request.(*protocol.FetchRequest).IsolationLevel != 1 {
		t.Errorf("fetch sent with isolation level %d, want 1", req[len(req)-1].Request.(*protocol.FetchRequest).IsolationLevel)
	}

	ctSeek(t, conn, 0)
	b.ScriptNext(protocol.Fetch, forge)
	msgs = ctExpectOffsets(t, conn, 0, 1, 2, 5)
	if got := ctValues(msgs); strings.Join(got, ",") != "x1,x2,ok1,plain" {
		t.Fatalf("read uncommitted: %q", got)
	}
}

// Batch.Read with a buffer too small for the next value: io.ErrShortBuffer,
// and the next ReadBatch starts with that message.
func TestBatchReadShortBuffer(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	c.AppendRecords(ctTopic, 0, "a", "bb", "cccccc", "d")
	conn := ctDial(t, nil, c, 0)
	ctSeek(t, conn, 0)

	buf := make([]byte, 4)
	var got []string
	var readErr, closeErr error
	var offsetAtErr int64
	ctWithin(t, 10*time.Second, "Batch.Read", func() {
		b := conn.ReadBatch(1, 1<<20)
		for {
			n, err := b.Read(buf)
			if err != nil {
				readErr, offsetAtErr = err, b.Offset()
				got = append(got, string(buf[:n]))
				break
			}
			got = append(got, string(buf[:n]))
		}
		closeErr = b.Close()
	})
	if readErr != io.ErrShortBuffer {
		t.Fatalf("Read: %v, want io.ErrShortBuffer", readErr)
	}
	if strings.Join(got, ",") != "a,bb,cccc" {
		t.Fatalf("Read returned %q, want a, bb, then the first 4 bytes of cccccc", got)
	}
	if offsetAtErr != 2 {
		t.Errorf("Batch.Offset() after the short read = %d, want 2", offsetAtErr)
	}
	if !errors.Is(closeErr, io.ErrShortBuffer) {
		t.Errorf("Close: %v, want io.ErrShortBuffer", closeErr)
	}
	ctExpectOffset(t, conn, 2)

	msgs := ctExpectOffsets(t, conn, 2, 3)
	if string(msgs[0].Value) != "cccccc" {
		t.Fatalf("message 2 read again as %q", msgs[0].Value)
	}
}

// Batch.Read copies values exactly and ends with io.EOF; values larger
// than a record's are returned whole with a nil error.
func TestBatchReadValues(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	values := []string{"", "x", strings.Repeat("y", 300)}
	c.AppendRecords(ctTopic, 0, values...)
	conn := ctDial(t, nil, c, 0)
	ctSeek(t, conn, 0)
	var got [][]byte
	var last error
	ctWithin(t, 10*time.Second, "Batch.Read", func() {
		b := conn.ReadBatch(1, 1<<20)
		defer b.Close()
		buf := make([]byte, 1000)
		for {
			n, err := b.Read(buf)
			if err != nil {
				last = err
				return
			}
			got = append(got, bytes.Clone(buf[:n]))
		}
	})
	if last != io.EOF || len(got) != len(values) {
		t.Fatalf("read %d values, ended with %v", len(got), last)
	}
	for i := range values {
		if string(got[i]) != values[i] {
			t.Errorf("value %d: %q", i, got[i])
		}
	}
	ctExpectOffset(t, conn, int64(len(values)))
}

// Messages handed out are copies: they stay intact after the batch is
// closed and its buffer reused by the next fetch.
func TestBatchMessagesOutliveTheBatch(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	for i := 0; i < 3; i++ {
		c.Append(ctTopic, 0, protocol.Record{Key: []byte("key-" + strconv.Itoa(i)), Value: bytes.Repeat([]byte{byte('a' + i)}, 100),
			Headers: []protocol.RecordHeader{{Key: "h", Value: []byte("hv-" + strconv.Itoa(i))}}})
	}
	conn := ctDial(t, nil, c, 0)
	ctSeek(t, conn, 0)
	first := ctExpectOffsets(t, conn, 0, 1, 2)
	ctSeek(t, conn, 0)
	ctExpectOffsets(t, conn, 0, 1, 2) // reuses the response buffer
	for i, m := range first {
		if string(m.Key) != "key-"+strconv.Itoa(i) || !bytes.Equal(m.Value, bytes.Repeat([]byte{byte('a' + i)}, 100)) ||
			len(m.Headers) != 1 || string(m.Headers[0].Value) != "hv-"+strconv.Itoa(i) {
			t.Fatalf("message %d changed after its batch was closed: %q %q %v", i, m.Key, m.Value[:4], m.Headers)
		}
	}
}

// A batch that fails its CRC: the records before it are handed out, then
// an error matching protocol.ErrCRCMismatch; the Conn's offset stops at the
// damaged batch and the connection stays usable.
func TestBatchCorruptRecords(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	c.AppendRecords(ctTopic, 0, "a", "b")
	c.AppendRecords(ctTopic, 0, "c", "d")
	conn := ctDial(t, nil, c, 0)
	ctSeek(t, conn, 0)
	c.Broker(1).ScriptNext(protocol.Fetch, fakebroker.Step{Edit: ctEditPartition(func(p *protocol.FetchResponsePartition) {
		if n := len(p.Records); n > 0 {
			p.Records = bytes.Clone(p.Records)
			p.Records[n-1] ^= 0xff // the last value byte of the second batch
		}
	})})
	msgs, readErr, closeErr, _ := ctReadBatch(t, conn, ReadBatchConfig{})
	if got := ctOffsets(msgs); !ctEqualInt64s(got, []int64{0, 1}) {
		t.Fatalf("read %v before the damaged batch, want [0 1]", got)
	}
	if !errors.Is(readErr, protocol.ErrCRCMismatch) || !errors.Is(closeErr, protocol.ErrCRCMismatch) {
		t.Fatalf("ReadMessage: %v, Close: %v; want protocol.ErrCRCMismatch", readErr, closeErr)
	}
	if !strings.Contains(readErr.Error(), ctTopic+"/0") {
		t.Errorf("error %q does not name the partition", readErr)
	}
	ctExpectOffset(t, conn, 2)
	ctExpectOffsets(t, conn, 2, 3)
}

// A top-level fetch error (v7+, fetch sessions) and an answer without the
// partition asked for: errors naming the partition; the Conn stays usable.
func TestBatchTopLevelErrorAndMissingPartition(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	c.AppendRecords(ctTopic, 0, "a")
	b := c.Broker(1)
	conn := ctDial(t, nil, c, 0)
	ctSeek(t, conn, 0)

	const sessionNotFound = Error(70)
	b.ScriptNext(protocol.Fetch, fakebroker.Step{Edit: func(resp protocol.Response) {
		resp.(*protocol.FetchResponse).ErrorCode = int16(sessionNotFound)
	}})
	_, readErr, closeErr, _ := ctReadBatch(t, conn, ReadBatchConfig{})
	if !errors.Is(readErr, sessionNotFound) || !errors.Is(closeErr, sessionNotFound) || !strings.Contains(readErr.Error(), ctTopic+"/0") {
		t.Fatalf("top-level error: %v, Close %v; want %v naming the partition", readErr, closeErr, sessionNotFound)
	}

	b.ScriptNext(protocol.Fetch, fakebroker.Step{Edit: ctEditPartition(func(p *protocol.FetchResponsePartition) { p.PartitionIndex = 5 })})
	_, readErr, closeErr, _ = ctReadBatch(t, conn, ReadBatchConfig{})
	if readErr == nil || readErr == io.EOF || closeErr == nil || !strings.Contains(readErr.Error(), "missing") || !strings.Contains(readErr.Error(), ctTopic+"/0") {
		t.Fatalf("answer without the partition: %v, Close %v", readErr, closeErr)
	}
	ctExpectOffset(t, conn, 0)
	ctExpectOffsets(t, conn, 0)
}
