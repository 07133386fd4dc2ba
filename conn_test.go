package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// Tests of Conn against the in-process fake broker (testing/fakebroker) and,
// for byte-level hostility, against ctRawBroker. Nothing here sleeps to
// synchronise: calls that must not hang run under ctWithin, and the fake's
// held answers wait on channels the test closes.

const ctTopic = "conn-test"

// ctCluster starts a fake cluster holding ctTopic.
func ctCluster(t testing.TB, cfg fakebroker.Config, partitions, replicationFactor int) *fakebroker.Cluster {
	t.Helper()
	c := fakebroker.NewCluster(t, cfg)
	c.CreateTopic(ctTopic, partitions, replicationFactor)
	return c
}

// ctDial opens a Conn to the leader of ctTopic/partition, bootstrapping
// from broker 1.
func ctDial(t testing.TB, d *Dialer, c *fakebroker.Cluster, partition int) *Conn {
	t.Helper()
	if d == nil {
		d = &Dialer{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := d.DialLeader(ctx, "tcp", c.Broker(1).Addr(), ctTopic, partition)
	if err != nil {
		t.Fatalf("DialLeader(%s/%d): %v", ctTopic, partition, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// ctWithin fails the test unless fn returns within d. fn must not call
// t.Fatal; it reports through the variables it captures.
func ctWithin(t testing.TB, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// ctReadAll reads messages until the batch reports an error, which it
// returns (io.EOF at the normal end of a batch).
func ctReadAll(b *Batch) ([]Message, error) {
	var msgs []Message
	for {
		m, err := b.ReadMessage()
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, m)
	}
}

func ctOffsets(msgs []Message) []int64 {
	offs := make([]int64, len(msgs))
	for i, m := range msgs {
		offs[i] = m.Offset
	}
	return offs
}

func ctValues(msgs []Message) []string {
	vals := make([]string, len(msgs))
	for i, m := range msgs {
		vals[i] = string(m.Value)
	}
	return vals
}

func ctEqualInt64s(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ctReadBatch fetches once and reads the whole batch: the messages, the
// error that ended reading, and Close's error.
func ctReadBatch(t testing.TB, conn *Conn, cfg ReadBatchConfig) (msgs []Message, readErr, closeErr error, b *Batch) {
	t.Helper()
	if cfg.MaxBytes == 0 {
		cfg.MinBytes, cfg.MaxBytes = 1, 1<<20
	}
	ctWithin(t, 10*time.Second, "ReadBatch", func() {
		b = conn.ReadBatchWith(cfg)
		msgs, readErr = ctReadAll(b)
		closeErr = b.Close()
	})
	return msgs, readErr, closeErr, b
}

// ctExpectOffsets reads one batch and checks it returned exactly offsets,
// ended with io.EOF and closed cleanly.
func ctExpectOffsets(t testing.TB, conn *Conn, want ...int64) []Message {
	t.Helper()
	msgs, readErr, closeErr, _ := ctReadBatch(t, conn, ReadBatchConfig{})
	if !errors.Is(readErr, io.EOF) || closeErr != nil {
		t.Fatalf("batch ended with %v, Close: %v; want io.EOF and nil", readErr, closeErr)
	}
	if got := ctOffsets(msgs); !ctEqualInt64s(got, want) {
		t.Fatalf("read offsets %v, want %v", got, want)
	}
	return msgs
}

func ctExpectOffset(t testing.TB, conn *Conn, want int64) {
	t.Helper()
	if off, whence := conn.Offset(); off != want || whence != SeekAbsolute {
		t.Fatalf("Conn.Offset() = %d, %d; want %d, SeekAbsolute", off, whence, want)
	}
}

// ctSeek positions conn without asking the broker.
func ctSeek(t testing.TB, conn *Conn, offset int64) {
	t.Helper()
	if _, err := conn.Seek(offset, SeekAbsolute|SeekDontCheck); err != nil {
		t.Fatalf("Seek(%d, SeekAbsolute|SeekDontCheck): %v", offset, err)
	}
}

// --- Byte-level hostility -------------------------------------------------

// ctRawBroker is a peer that speaks just enough Kafka for a Conn to
// connect (ApiVersions, advertising Fetch up to v12 so no topic id lookup
// is needed) and answers every other request with the bytes answer
// returns. It serves one connection.
type ctRawBroker struct {
	t      testing.TB
	ln     net.Listener
	answer func(hdr protocol.RequestHeader, req protocol.Request) (raw []byte, closeConn bool)
	// clientGone is closed when the client's side of the connection ends
	// while the raw broker kept it open: the Conn closed its socket.
	clientGone chan struct{}
	// served is closed when the connection is over, whoever ended it.
	served chan struct{}

	mu     sync.Mutex
	nc     net.Conn
	closed bool
}

func newCtRawBroker(t testing.TB, answer func(hdr protocol.RequestHeader, req protocol.Request) ([]byte, bool)) *ctRawBroker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rb := &ctRawBroker{t: t, ln: ln, answer: answer, clientGone: make(chan struct{}), served: make(chan struct{})}
	go rb.serve()
	t.Cleanup(func() {
		rb.mu.Lock()
		rb.closed = true
		if rb.nc != nil {
			rb.nc.Close()
		}
		rb.mu.Unlock()
		ln.Close()
		<-rb.served
	})
	return rb
}

func (rb *ctRawBroker) serve() {
	defer close(rb.served)
	nc, err := rb.ln.Accept()
	if err != nil {
		return
	}
	defer nc.Close()
	rb.mu.Lock()
	rb.nc = nc
	closed := rb.closed
	rb.mu.Unlock()
	if closed {
		return
	}
	for {
		body, err := protocol.ReadFrame(nc, nil, 1<<20)
		if err != nil {
			close(rb.clientGone)
			return
		}
		hdr, d, err := protocol.DecodeRequestHeader(body, protocol.FlexibleFrom)
		if err != nil {
			rb.t.Errorf("raw broker: %v", err)
			return
		}
		req := protocol.NewRequest(hdr.Key)
		if req == nil || req.Decode(d, hdr.Version) != nil {
			rb.t.Errorf("raw broker: cannot decode %s v%d", hdr.Key, hdr.Version)
			return
		}
		var raw []byte
		closeConn := false
		if hdr.Key == protocol.ApiVersions {
			raw = protocol.AppendResponse(nil, ctRawApiVersions(), hdr.Version, protocol.IsFlexible(req, hdr.Version), hdr.CorrelationID)
		} else {
			raw, closeConn = rb.answer(hdr, req)
		}
		if _, err := nc.Write(raw); err != nil {
			return
		}
		if closeConn {
			return
		}
	}
}

func ctRawApiVersions() *protocol.ApiVersionsResponse {
	resp := &protocol.ApiVersionsResponse{}
	for k, r := range protocol.Implemented() {
		if k == protocol.Fetch && r.Max > 12 {
			r.Max = 12
		}
		resp.ApiKeys = append(resp.ApiKeys, protocol.ApiVersionsKey{ApiKey: k, MinVersion: r.Min, MaxVersion: r.Max})
	}
	return resp
}

// dial opens a Conn to the raw broker for ctTopic/0 at offset 0.
func (rb *ctRawBroker) dial(t testing.TB) *Conn {
	t.Helper()
	host, port, _ := net.SplitHostPort(rb.ln.Addr().String())
	portNum, _ := strconv.Atoi(port)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := (&Dialer{}).DialPartition(ctx, "tcp", rb.ln.Addr().String(), Partition{
		Topic: ctTopic, ID: 0, Leader: Broker{ID: 1, Host: host, Port: portNum},
	})
	if err != nil {
		t.Fatalf("DialPartition: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	ctSeek(t, conn, 0)
	return conn
}

// ctFetchFrame encodes a valid Fetch answer to hdr with three records.
func ctFetchFrame(t testing.TB, hdr protocol.RequestHeader, correlationID int32) []byte {
	bb := protocol.NewRecordBatchBuilder()
	for i := 0; i < 3; i++ {
		bb.Add(protocol.Record{Timestamp: 1700000000000, Value: []byte("value-" + strconv.Itoa(i))})
	}
	records, err := bb.AppendTo(nil)
	if err != nil {
		t.Errorf("building records: %v", err)
	}
	resp := &protocol.FetchResponse{Topics: []protocol.FetchResponseTopic{{
		Topic: ctTopic,
		Partitions: []protocol.FetchResponsePartition{{
			PartitionIndex: 0, HighWatermark: 3, LastStableOffset: 3, LogStartOffset: 0,
			PreferredReadReplica: -1, Records: records,
		}},
	}}}
	return protocol.AppendResponse(nil, resp, hdr.Version, protocol.IsFlexible(&protocol.FetchRequest{}, hdr.Version), correlationID)
}

func TestConnHostileResponses(t *testing.T) {
	sizePrefix := func(n uint32, rest ...byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, n), rest...)
	}
	tests := []struct {
		name string
		// answer returns the bytes for the Fetch and whether to close.
		answer func(t testing.TB, hdr protocol.RequestHeader) ([]byte, bool)
		// deadline, when set, bounds the read (for answers that leave the
		// connection open and silent).
		deadline time.Duration
		// want are substrings of the error; wantIs, errors it matches.
		want   []string
		wantIs []error
	}{{
		name: "truncated frame then close",
		answer: func(t testing.TB, hdr protocol.RequestHeader) ([]byte, bool) {
			f := ctFetchFrame(t, hdr, hdr.CorrelationID)
			return f[:len(f)/2], true
		},
		want:   []string{"reading Fetch v12 response"},
		wantIs: []error{io.ErrUnexpectedEOF},
	}, {
		name: "truncated frame, peer stays silent",
		answer: func(t testing.TB, hdr protocol.RequestHeader) ([]byte, bool) {
			f := ctFetchFrame(t, hdr, hdr.CorrelationID)
			return f[:len(f)-1], false
		},
		deadline: 200 * time.Millisecond,
		want:     []string{"reading Fetch v12 response"},
		wantIs:   []error{RequestTimedOut},
	}, {
		name: "size prefix claims 2 GB",
		answer: func(t testing.TB, hdr protocol.RequestHeader) ([]byte, bool) {
			return sizePrefix(2_000_000_000, 0, 0, 0, 1), false
		},
		want: []string{"reading Fetch v12 response", "2000000000"},
	}, {
		name: "negative size prefix",
		answer: func(t testing.TB, hdr protocol.RequestHeader) ([]byte, bool) {
			return sizePrefix(0xffffffff), false
		},
		want: []string{"reading Fetch v12 response", "-1"},
	}, {
		name: "size prefix too short for a correlation id",
		answer: func(t testing.TB, hdr protocol.RequestHeader) ([]byte, bool) {
			return sizePrefix(2, 0, 0), false
		},
		want: []string{"Fetch"},
	}, {
		name: "wrong correlation id",
		answer: func(t testing.TB, hdr protocol.RequestHeader) ([]byte, bool) {
			return ctFetchFrame(t, hdr, hdr.CorrelationID+1), false
		},
		want: []string{"correlation id", "Fetch"},
	}, {
		name: "garbage body",
		answer: func(t testing.TB, hdr protocol.RequestHeader) ([]byte, bool) {
			body := binary.BigEndian.AppendUint32(nil, uint32(hdr.CorrelationID))
			body = append(body, bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 16)...)
			return sizePrefix(uint32(len(body)), body...), false
		},
		want: []string{"decoding Fetch v12 response"},
	}, {
		name: "valid header, body cut inside the records",
		answer: func(t testing.TB, hdr protocol.RequestHeader) ([]byte, bool) {
			f := ctFetchFrame(t, hdr, hdr.CorrelationID)
			// Keep the frame well formed but drop its last 40 bytes: the
			// records length then claims more than the frame holds.
			f = f[:len(f)-40]
			binary.BigEndian.PutUint32(f, uint32(len(f)-4))
			return f, false
		},
		want: []string{"decoding Fetch v12 response"},
	}, {
		name: "an HTTP server",
		answer: func(t testing.TB, hdr protocol.RequestHeader) ([]byte, bool) {
			return []byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"), false
		},
		want: []string{"reading Fetch v12 response", "frame size"},
	}}
	for _, tt := range tests {
		tt := tt
		t.Run(tt.name, func(t *testing.T) {
			rb := newCtRawBroker(t, func(hdr protocol.RequestHeader, req protocol.Request) ([]byte, bool) {
				if hdr.Key != protocol.Fetch {
					t.Errorf("raw broker: unexpected %s", hdr.Key)
					return nil, true
				}
				return tt.answer(t, hdr)
			})
			conn := rb.dial(t)
			if tt.deadline > 0 {
				conn.SetReadDeadline(time.Now().Add(tt.deadline))
			}

			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var b *Batch
			var readErr, closeErr error
			ctWithin(t, 10*time.Second, "ReadBatch", func() {
				b = conn.ReadBatch(1, 1<<20)
				_, readErr = b.ReadMessage()
				closeErr = b.Close()
			})
			runtime.ReadMemStats(&after)

			if readErr == nil || readErr == io.EOF {
				t.Fatalf("ReadMessage: got %v, want an error", readErr)
			}
			if closeErr == nil || closeErr.Error() != readErr.Error() {
				t.Errorf("Close: got %v, want the batch's error %v", closeErr, readErr)
			}
			msg := readErr.Error()
			if !strings.Contains(msg, "fetching "+ctTopic+"/0 at offset 0") {
				t.Errorf("error %q does not say what was being done", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			for _, target := range tt.wantIs {
				if !errors.Is(readErr, target) {
					t.Errorf("error %q: errors.Is(err, %v) = false", msg, target)
				}
			}
			// A hostile size prefix must not be trusted for allocation.
			if grown := after.TotalAlloc - before.TotalAlloc; grown > 64<<20 {
				t.Errorf("reading the answer allocated %d bytes", grown)
			}

			// The Conn is closed: the peer sees its socket end ...
			ctWithin(t, 10*time.Second, "the Conn closing its socket", func() {
				select {
				case <-rb.clientGone:
				case <-rb.served:
				}
			})
			// ... and later calls fail at once, whatever they are.
			conn.SetReadDeadline(time.Time{})
			var again *Batch
			var offErr error
			ctWithin(t, 10*time.Second, "calls after the failure", func() {
				again = conn.ReadBatch(1, 1<<20)
				_, offErr = conn.ReadLastOffset()
			})
			if err := again.Err(); err == nil {
				t.Errorf("ReadBatch after the failure: no error")
			}
			if offErr == nil {
				t.Errorf("ReadLastOffset after the failure: no error")
			}
		})
	}
}

// A broken ListOffsets answer closes the Conn too, and says it was a
// ListOffsets.
func TestConnHostileListOffsets(t *testing.T) {
	rb := newCtRawBroker(t, func(hdr protocol.RequestHeader, req protocol.Request) ([]byte, bool) {
		resp := &protocol.ListOffsetsResponse{}
		return protocol.AppendResponse(nil, resp, hdr.Version, protocol.IsFlexible(req, hdr.Version), hdr.CorrelationID+7), false
	})
	conn := rb.dial(t)
	var err error
	ctWithin(t, 10*time.Second, "ReadFirstOffset", func() { _, err = conn.ReadFirstOffset() })
	if err == nil || !strings.Contains(err.Error(), "listing offsets of "+ctTopic+"/0") || !strings.Contains(err.Error(), "correlation id") {
		t.Fatalf("ReadFirstOffset: %v; want a correlation id error naming the ListOffsets", err)
	}
	ctWithin(t, 10*time.Second, "the Conn closing its socket", func() { <-rb.clientGone })
	if _, err := conn.ReadLastOffset(); err == nil {
		t.Fatal("ReadLastOffset after the failure: no error")
	}
}

// --- Deadlines ------------------------------------------------------------

// A read deadline already past fails the fetch with RequestTimedOut (which
// is also a net.Error whose Timeout is true) without sending it, and the
// Conn then refuses further requests instead of hanging.
func TestConnReadDeadlineInThePast(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	c.AppendRecords(ctTopic, 0, "a", "b")
	conn := ctDial(t, nil, c, 0)
	// A first read caches the topic id, so the next request is the fetch.
	ctExpectOffsets(t, conn, 0, 1)
	ctSeek(t, conn, 0)
	fetches := c.Broker(1).Requests(protocol.Fetch)

	conn.SetReadDeadline(time.Now().Add(-time.Second))
	msgs, readErr, closeErr, _ := ctReadBatch(t, conn, ReadBatchConfig{})
	if len(msgs) != 0 {
		t.Fatalf("read %d messages past the deadline", len(msgs))
	}
	if !errors.Is(readErr, RequestTimedOut) || !errors.Is(closeErr, RequestTimedOut) {
		t.Fatalf("ReadMessage: %v, Close: %v; want errors matching RequestTimedOut", readErr, closeErr)
	}
	var ne net.Error
	if !errors.As(readErr, &ne) || !ne.Timeout() {
		t.Fatalf("%v: not reported as a net.Error timeout", readErr)
	}
	if !strings.Contains(readErr.Error(), "sending Fetch") {
		t.Errorf("error %q does not say the fetch was being sent", readErr)
	}
	if n := c.Broker(1).Requests(protocol.Fetch); n != fetches {
		t.Errorf("the broker received %d fetches past the deadline", n-fetches)
	}
	ctExpectOffset(t, conn, 0)

	conn.SetReadDeadline(time.Time{})
	_, readErr, _, _ = ctReadBatch(t, conn, ReadBatchConfig{})
	if !errors.Is(readErr, errConnBroken) {
		t.Fatalf("fetch after the timeout: %v; want the connection reported broken", readErr)
	}
}

// A broker that holds its answer past the read deadline: the fetch fails
// with RequestTimedOut once the deadline passes, the broker was told to
// answer before it (MaxWait inferred from the deadline), and the Conn is
// closed.
func TestConnReadDeadlineWhileBrokerHolds(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	c.AppendRecords(ctTopic, 0, "a")
	b := c.Broker(1)
	conn := ctDial(t, nil, c, 0)
	// A first read caches the topic id, so the next request is the fetch.
	ctExpectOffsets(t, conn, 0)
	ctSeek(t, conn, 0)

	release := make(chan struct{})
	defer close(release)
	n := b.ScriptNext(protocol.Fetch, fakebroker.Step{Action: fakebroker.Action{Wait: release}})

	const deadline = 300 * time.Millisecond
	conn.SetReadDeadline(time.Now().Add(deadline))
	start := time.Now()
	_, readErr, _, _ := ctReadBatch(t, conn, ReadBatchConfig{})
	elapsed := time.Since(start)
	if !errors.Is(readErr, RequestTimedOut) {
		t.Fatalf("ReadMessage: %v; want RequestTimedOut", readErr)
	}
	if !strings.Contains(readErr.Error(), "reading Fetch") {
		t.Errorf("error %q does not say the answer was being read", readErr)
	}
	if elapsed < deadline/2 {
		t.Errorf("failed after %v, before the %v deadline", elapsed, deadline)
	}
	got := b.Received(protocol.Fetch)
	if len(got) < n {
		t.Fatalf("the broker received %d fetches, want %d", len(got), n)
	}
	if w := got[n-1].Request.(*protocol.FetchRequest).MaxWaitMs; w >= int32(deadline/time.Millisecond) {
		t.Errorf("fetch MaxWaitMs = %d, want less than the %v left before the deadline", w, deadline)
	}
	if _, err := conn.ReadLastOffset(); !errors.Is(err, errConnBroken) {
		t.Fatalf("ReadLastOffset after the timeout: %v; want the connection reported broken", err)
	}
}

// --- ReadBatch arguments --------------------------------------------------

func TestConnReadBatchRejectsBadBounds(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	conn := ctDial(t, nil, c, 0)
	ctSeek(t, conn, 0)
	for _, tc := range [][2]int{{10, 5}, {-1, 5}, {0, -1}} {
		b := conn.ReadBatch(tc[0], tc[1])
		if b.Err() == nil {
			t.Errorf("ReadBatch(%d, %d): no error", tc[0], tc[1])
		}
		if _, err := b.ReadMessage(); err == nil || errors.Is(err, io.EOF) {
			t.Errorf("ReadBatch(%d, %d): ReadMessage returned %v", tc[0], tc[1], err)
		}
		b.Close()
	}
	if n := c.Broker(1).Requests(protocol.Fetch); n != 0 {
		t.Errorf("%d fetches sent for invalid bounds", n)
	}
	ctExpectOffset(t, conn, 0)
}

// --- Seek -----------------------------------------------------------------

func TestConnSeek(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	for i := 0; i < 10; i++ {
		c.AppendRecords(ctTopic, 0, "v"+strconv.Itoa(i))
	}
	c.SetLogStartOffset(ctTopic, 0, 2) // partition holds [2, 10)
	b := c.Broker(1)
	conn := ctDial(t, nil, c, 0)

	if off, whence := conn.Offset(); off != 0 || whence != SeekStart {
		t.Fatalf("new Conn: Offset() = %d, %d; want 0, SeekStart", off, whence)
	}

	steps := []struct {
		offset  int64
		whence  int
		want    int64 // the new offset, or the unchanged one on error
		wantErr error
		checked bool // a ListOffsets is expected
	}{
		{0, SeekStart, 2, nil, true},
		{1, SeekStart, 3, nil, true},
		{0, SeekEnd, 10, nil, true},
		{3, SeekEnd, 7, nil, true},
		{2, SeekCurrent, 9, nil, true},
		{-4, SeekCurrent, 5, nil, true},
		{4, SeekAbsolute, 4, nil, true},
		{4, SeekAbsolute, 4, nil, false}, // unchanged: nothing to check
		{1, SeekAbsolute, 4, OffsetOutOfRange, true},
		{11, SeekAbsolute, 4, OffsetOutOfRange, true},
		{-1, SeekStart, 4, OffsetOutOfRange, true},
		{-1, SeekEnd, 4, OffsetOutOfRange, true},
		{7, SeekCurrent, 4, OffsetOutOfRange, true},
		{1000, SeekAbsolute | SeekDontCheck, 1000, nil, false},
		{-995, SeekCurrent | SeekDontCheck, 5, nil, false},
		{0, 7, 5, nil, false},
		{0, 7 | SeekDontCheck, 5, nil, false},
		// SeekDontCheck only applies to SeekAbsolute and SeekCurrent.
		{0, SeekStart | SeekDontCheck, 2, nil, true},
		{0, SeekEnd | SeekDontCheck, 10, nil, true},
		{5, SeekAbsolute | SeekDontCheck, 5, nil, false},
	}
	for _, s := range steps {
		before := b.Requests(protocol.ListOffsets)
		got, err := conn.Seek(s.offset, s.whence)
		sent := b.Requests(protocol.ListOffsets) - before
		name := fmt.Sprintf("Seek(%d, %#x)", s.offset, s.whence)
		switch {
		case s.whence&^SeekDontCheck == 7:
			if err == nil || !strings.Contains(err.Error(), "whence") {
				t.Errorf("%s: %v; want an error about whence", name, err)
			}
		case s.wantErr != nil:
			if !errors.Is(err, s.wantErr) {
				t.Errorf("%s: %v; want %v", name, err, s.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case got != s.want:
			t.Errorf("%s = %d, want %d", name, got, s.want)
		}
		ctExpectOffset(t, conn, s.want)
		if s.checked && sent == 0 {
			t.Errorf("%s sent no ListOffsets", name)
		}
		if !s.checked && sent != 0 {
			t.Errorf("%s sent %d ListOffsets, want none", name, sent)
		}
	}

	// Reading starts at the seeked offset.
	ctExpectOffsets(t, conn, 5, 6, 7, 8, 9)
	ctExpectOffset(t, conn, 10)
}

// A new Conn resolves its FirstOffset position at the first read; with
// LastOffset it reads only what comes next.
func TestConnReadFromFirstAndLastOffset(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	c.AppendRecords(ctTopic, 0, "a", "b", "c")
	c.SetLogStartOffset(ctTopic, 0, 1)

	conn := ctDial(t, nil, c, 0)
	ctExpectOffsets(t, conn, 1, 2)
	ctExpectOffset(t, conn, 3)

	conn2 := ctDial(t, nil, c, 0)
	conn2.setOffset(LastOffset)
	if off, whence := conn2.Offset(); off != 0 || whence != SeekEnd {
		t.Fatalf("Offset() = %d, %d; want 0, SeekEnd", off, whence)
	}
	ctExpectOffsets(t, conn2)
	ctExpectOffset(t, conn2, 3)
	c.AppendRecords(ctTopic, 0, "d")
	ctExpectOffsets(t, conn2, 3)
}

// --- Produce --------------------------------------------------------------

func TestConnWriteCompressedRoundTrip(t *testing.T) {
	codecs := []struct {
		name  string
		codec CompressionCodec
		code  Compression
	}{
		{"none", nil, 0},
		{"gzip", Gzip.Codec(), Gzip},
		{"snappy", Snappy.Codec(), Snappy},
		{"lz4", Lz4.Codec(), Lz4},
		{"zstd", Zstd.Codec(), Zstd},
	}
	for _, cc := range codecs {
		cc := cc
		t.Run(cc.name, func(t *testing.T) {
			c := ctCluster(t, fakebroker.Config{}, 1, 1)
			b := c.Broker(1)
			conn := ctDial(t, nil, c, 0)

			stamp := time.UnixMilli(1700000000123)
			big := bytes.Repeat([]byte("compressible "), 200)
			msgs := []Message{
				{Key: []byte("k0"), Value: big, Time: stamp, Headers: []Header{{Key: "h1", Value: []byte("x")}, {Key: "h2", Value: []byte{}}}},
				{Value: []byte("no key"), Time: stamp.Add(time.Millisecond)},
				{Key: []byte("tombstone"), Time: stamp.Add(2 * time.Millisecond)},
				{Topic: ctTopic, Key: []byte("now"), Value: []byte("time set by the Conn")},
			}
			wantBytes := 0
			for _, m := range msgs {
				wantBytes += len(m.Key) + len(m.Value)
			}
			var offsets []int64
			writeStart := time.Now().Truncate(time.Millisecond)
			for round := 0; round < 2; round++ {
				n, partition, offset, appendTime, err := conn.WriteCompressedMessagesAt(cc.codec, msgs...)
				if err != nil {
					t.Fatalf("WriteCompressedMessagesAt: %v", err)
				}
				if n != wantBytes || partition != 0 || !appendTime.IsZero() {
					t.Fatalf("WriteCompressedMessagesAt = %d bytes, partition %d, append time %v; want %d, 0, zero", n, partition, appendTime, wantBytes)
				}
				offsets = append(offsets, offset)

				// What went on the wire is compressed with the codec.
				got := b.Received(protocol.Produce)
				req := got[len(got)-1].Request.(*protocol.ProduceRequest)
				h, err := protocol.ParseRecordBatchHeader(req.Topics[0].Partitions[0].Records)
				if err != nil {
					t.Fatalf("produced batch: %v", err)
				}
				if h.Compression() != cc.code || h.NumRecords != int32(len(msgs)) {
					t.Fatalf("produced batch: compression %v with %d records; want %v with %d", h.Compression(), h.NumRecords, cc.code, len(msgs))
				}
				if req.Acks != -1 {
					t.Errorf("produce acks = %d, want -1 (the default)", req.Acks)
				}
			}
			writeEnd := time.Now()
			if offsets[0] != 0 || offsets[1] != int64(len(msgs)) {
				t.Fatalf("first offsets of the writes: %v, want [0 %d]", offsets, len(msgs))
			}

			ctSeek(t, conn, 0)
			got := ctExpectOffsets(t, conn, 0, 1, 2, 3, 4, 5, 6, 7)
			for i, m := range got {
				want := msgs[i%len(msgs)]
				if m.Topic != ctTopic || m.Partition != 0 || m.HighWaterMark != 8 {
					t.Errorf("message %d: topic %q partition %d high watermark %d", i, m.Topic, m.Partition, m.HighWaterMark)
				}
				if !bytes.Equal(m.Key, want.Key) || (m.Key == nil) != (want.Key == nil) {
					t.Errorf("message %d: key %q, want %q", i, m.Key, want.Key)
				}
				if !bytes.Equal(m.Value, want.Value) || (m.Value == nil) != (want.Value == nil) {
					t.Errorf("message %d: value of %d bytes (nil %v), want %d (nil %v)", i, len(m.Value), m.Value == nil, len(want.Value), want.Value == nil)
				}
				if len(m.Headers) != len(want.Headers) {
					t.Errorf("message %d: %d headers, want %d", i, len(m.Headers), len(want.Headers))
				} else {
					for j, h := range m.Headers {
						if h.Key != want.Headers[j].Key || !bytes.Equal(h.Value, want.Headers[j].Value) || h.Value == nil {
							t.Errorf("message %d header %d: %q=%q, want %q=%q", i, j, h.Key, h.Value, want.Headers[j].Key, want.Headers[j].Value)
						}
					}
				}
				if !want.Time.IsZero() && !m.Time.Equal(want.Time) {
					t.Errorf("message %d: time %v, want %v", i, m.Time, want.Time)
				}
				if want.Time.IsZero() && (m.Time.Before(writeStart) || m.Time.After(writeEnd)) {
					t.Errorf("message %d: time %v, want the time of the write, within [%v, %v]", i, m.Time, writeStart, writeEnd)
				}
			}
		})
	}
}

// With acks=0 the Conn does not wait for an answer (the broker sends none):
// the write returns while the broker still holds the request, and the
// connection stays in step for the next request.
func TestConnWriteAcksZero(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	b := c.Broker(1)
	conn := ctDial(t, nil, c, 0)
	if err := conn.SetRequiredAcks(0); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	b.ScriptNext(protocol.Produce, fakebroker.Step{Action: fakebroker.Action{Wait: release}})

	var offset int64
	var err error
	ctWithin(t, 5*time.Second, "an acks=0 write", func() {
		_, _, offset, _, err = conn.WriteCompressedMessagesAt(nil, Message{Value: []byte("a")}, Message{Value: []byte("b")})
	})
	if err != nil {
		t.Fatalf("write: %v", err)
	}
	if offset != -1 {
		t.Errorf("acks=0 write reported offset %d, want -1 (unknown)", offset)
	}
	<-b.Await(protocol.Produce, 1)
	got := b.Received(protocol.Produce)
	if acks := got[0].Request.(*protocol.ProduceRequest).Acks; acks != 0 {
		t.Fatalf("produce sent with acks %d, want 0", acks)
	}
	close(release)
	released = true

	var last int64
	ctWithin(t, 5*time.Second, "ReadLastOffset after an acks=0 write", func() { last, err = conn.ReadLastOffset() })
	if err != nil || last != 2 {
		t.Fatalf("ReadLastOffset = %d, %v; want 2", last, err)
	}
	ctSeek(t, conn, 0)
	if got := ctValues(ctExpectOffsets(t, conn, 0, 1)); got[0] != "a" || got[1] != "b" {
		t.Fatalf("read back %q", got)
	}
}

func TestConnSetRequiredAcks(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	conn := ctDial(t, nil, c, 0)
	for _, n := range []int{-1, 0, 1} {
		if err := conn.SetRequiredAcks(n); err != nil {
			t.Errorf("SetRequiredAcks(%d): %v", n, err)
		}
	}
	if err := conn.SetRequiredAcks(2); !errors.Is(err, InvalidRequiredAcks) {
		t.Errorf("SetRequiredAcks(2): %v; want InvalidRequiredAcks", err)
	}
	if _, err := conn.WriteMessages(Message{Value: []byte("x")}); err != nil {
		t.Fatalf("write with acks=1: %v", err)
	}
	got := c.Broker(1).Received(protocol.Produce)
	if acks := got[0].Request.(*protocol.ProduceRequest).Acks; acks != 1 {
		t.Errorf("produce sent with acks %d, want 1", acks)
	}
}

func TestConnWriteRejectsTopicAndPartition(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 2, 1)
	b := c.Broker(1)
	conn := ctDial(t, nil, c, 0)
	for _, tc := range []struct {
		msgs []Message
		want error
	}{
		{[]Message{{Topic: "other", Value: []byte("x")}}, errInvalidWriteTopic},
		{[]Message{{Partition: 1, Value: []byte("x")}}, errInvalidWritePartition},
		{[]Message{{Value: []byte("ok")}, {Topic: "other", Value: []byte("x")}}, errInvalidWriteTopic},
		{[]Message{{Value: []byte("ok")}, {Partition: 1, Value: []byte("x")}}, errInvalidWritePartition},
	} {
		n, err := conn.WriteMessages(tc.msgs...)
		if !errors.Is(err, tc.want) || n != 0 {
			t.Errorf("WriteMessages(%+v) = %d, %v; want 0, %v", tc.msgs, n, err, tc.want)
		}
	}
	if n := b.Requests(protocol.Produce); n != 0 {
		t.Fatalf("%d produce requests sent for rejected messages", n)
	}
	// The Conn's own topic may be named.
	if _, err := conn.WriteMessages(Message{Topic: ctTopic, Value: []byte("ok")}); err != nil {
		t.Fatalf("writing with the Conn's topic: %v", err)
	}
	if recs := c.Records(ctTopic, 0); len(recs) != 1 || string(recs[0].Value) != "ok" {
		t.Fatalf("partition holds %d records", len(recs))
	}
}

func TestConnWriteProduceError(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	b := c.Broker(1)
	conn := ctDial(t, nil, c, 0)
	b.ScriptNext(protocol.Produce, fakebroker.Step{ErrorCode: int16(NotLeaderForPartition)})
	_, err := conn.WriteMessages(Message{Value: []byte("x")})
	if !errors.Is(err, NotLeaderForPartition) || !strings.Contains(err.Error(), "producing to "+ctTopic+"/0") {
		t.Fatalf("WriteMessages: %v; want NotLeaderForPartition naming the partition", err)
	}
	// The Conn is still usable.
	if _, err := conn.WriteMessages(Message{Value: []byte("y")}); err != nil {
		t.Fatalf("write after the error: %v", err)
	}
	if recs := c.Records(ctTopic, 0); len(recs) != 1 || string(recs[0].Value) != "y" {
		t.Fatalf("partition holds %d records", len(recs))
	}
}

// Fetch answers with a few bytes flipped anywhere after the correlation
// id: whatever the damage, reading ends (records, then an error or
// io.EOF) without a panic or a hang, and never returns a record before the
// fetch offset.
func TestConnFetchCorruptedResponses(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		flips := make([][2]int, 1+rng.Intn(3))
		for j := range flips {
			flips[j] = [2]int{rng.Int(), 1 + rng.Intn(255)}
		}
		rb := newCtRawBroker(t, func(hdr protocol.RequestHeader, req protocol.Request) ([]byte, bool) {
			f := ctFetchFrame(t, hdr, hdr.CorrelationID)
			for _, fl := range flips {
				f[8+fl[0]%(len(f)-8)] ^= byte(fl[1])
			}
			return f, false
		})
		conn := rb.dial(t)
		var msgs []Message
		ctWithin(t, 10*time.Second, "reading a corrupted answer", func() {
			b := conn.ReadBatch(1, 1<<20)
			msgs, _ = ctReadAll(b)
			b.Close()
		})
		for _, m := range msgs {
			if m.Offset < 0 {
				t.Fatalf("case %d: message at offset %d, before the fetch offset 0", i, m.Offset)
			}
		}
		conn.Close()
	}
}

// Requests from several goroutines on one Conn are serialized: every
// write gets its own offsets and every answer reaches its caller.
func TestConnConcurrentUse(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	conn := ctDial(t, nil, c, 0)
	const writers, writes = 4, 25
	type result struct {
		offset int64
		err    error
	}
	results := make(chan result, writers*writes)
	lastErrs := make(chan error, writers*writes)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < writes; i++ {
				_, _, off, _, err := conn.WriteCompressedMessagesAt(nil, Message{Value: []byte(fmt.Sprintf("%d-%d", w, i))}, Message{Value: []byte("second")})
				results <- result{off, err}
				_, err = conn.ReadLastOffset()
				lastErrs <- err
			}
		}(w)
	}
	ctWithin(t, 30*time.Second, "concurrent writes", wg.Wait)
	close(results)
	close(lastErrs)
	seen := map[int64]bool{}
	for r := range results {
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.offset%2 != 0 || seen[r.offset] {
			t.Fatalf("write got first offset %d (seen before: %v)", r.offset, seen[r.offset])
		}
		seen[r.offset] = true
	}
	for err := range lastErrs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if last, err := conn.ReadLastOffset(); err != nil || last != 2*writers*writes {
		t.Fatalf("ReadLastOffset = %d, %v; want %d", last, err, 2*writers*writes)
	}
}

// Closing the Conn from another goroutine ends a fetch the broker holds.
func TestConnCloseEndsABlockedFetch(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	b := c.Broker(1)
	conn := ctDial(t, nil, c, 0)
	ctSeek(t, conn, 0)
	release := make(chan struct{})
	defer close(release)
	n := b.ScriptNext(protocol.Fetch, fakebroker.Step{Action: fakebroker.Action{Wait: release}})
	go func() {
		<-b.Await(protocol.Fetch, n)
		conn.Close()
	}()
	_, readErr, _, _ := ctReadBatch(t, conn, ReadBatchConfig{})
	if readErr == nil || readErr == io.EOF {
		t.Fatalf("ReadMessage: %v; want the fetch to fail", readErr)
	}
	if _, err := conn.ReadLastOffset(); err == nil {
		t.Fatal("ReadLastOffset on a closed Conn: no error")
	}
}

// The append time of topics with log append time comes back from the
// write; writing nothing sends nothing.
func TestConnWriteLogAppendTimeAndNothing(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	b := c.Broker(1)
	conn := ctDial(t, nil, c, 0)
	if n, err := conn.WriteMessages(); n != 0 || err != nil {
		t.Fatalf("WriteMessages() = %d, %v", n, err)
	}
	if n := b.Requests(protocol.Produce); n != 0 {
		t.Fatalf("writing nothing sent %d produce requests", n)
	}
	const appendMs = 1700000000999
	b.ScriptNext(protocol.Produce, fakebroker.Step{Edit: func(resp protocol.Response) {
		for i := range resp.(*protocol.ProduceResponse).Topics {
			ps := resp.(*protocol.ProduceResponse).Topics[i].Partitions
			for j := range ps {
				ps[j].LogAppendTimeMs = appendMs
			}
		}
	}})
	_, _, offset, appendTime, err := conn.WriteCompressedMessagesAt(nil, Message{Value: []byte("x")})
	if err != nil || offset != 0 || !appendTime.Equal(time.UnixMilli(appendMs)) {
		t.Fatalf("WriteCompressedMessagesAt: offset %d, append time %v, %v; want 0, %v", offset, appendTime, err, time.UnixMilli(appendMs))
	}
}

// --- One-message reads ----------------------------------------------------

func TestConnReadMessageAndRead(t *testing.T) {
	c := ctCluster(t, fakebroker.Config{}, 1, 1)
	c.AppendRecords(ctTopic, 0, "first", "second", "a longer third value")
	conn := ctDial(t, nil, c, 0)

	m, err := conn.ReadMessage(1 << 20)
	if err != nil || string(m.Value) != "first" || m.Offset != 0 {
		t.Fatalf("ReadMessage = offset %d %q, %v; want offset 0 \"first\"", m.Offset, m.Value, err)
	}
	if off, _ := conn.Offset(); off != 1 {
		t.Fatalf("after ReadMessage the offset is %d, want 1", off)
	}

	buf := make([]byte, 64)
	n, err := conn.Read(buf)
	if err != nil || string(buf[:n]) != "second" {
		t.Fatalf("Read = %q, %v; want \"second\"", buf[:n], err)
	}

	// A value longer than the buffer: ErrShortBuffer, and the offset stays
	// on that message so a larger buffer reads it.
	small := make([]byte, 4)
	if _, err := conn.Read(small); !errors.Is(err, io.ErrShortBuffer) {
		t.Fatalf("Read into 4 bytes: %v, want io.ErrShortBuffer", err)
	}
	if off, _ := conn.Offset(); off != 2 {
		t.Fatalf("after a short read the offset is %d, want 2", off)
	}
	n, err = conn.Read(buf)
	if err != nil || string(buf[:n]) != "a longer third value" {
		t.Fatalf("Read after the short read = %q, %v", buf[:n], err)
	}

	// Nothing more before the deadline: no message and no error.
	conn.SetReadDeadline(time.Now().Add(1500 * time.Millisecond))
	ctWithin(t, 10*time.Second, "ReadMessage at the end of the log", func() {
		m, err = conn.ReadMessage(1 << 20)
	})
	if err != nil || m.Value != nil {
		t.Fatalf("ReadMessage at the end = %q, %v; want nothing and no error", m.Value, err)
	}
	if off, _ := conn.Offset(); off != 3 {
		t.Fatalf("after the empty read the offset is %d, want 3", off)
	}
}

// --- Response start deadline (the Reader's stalled-follower check) -------

// A broker silent past the response-start deadline fails the fetch with
// RequestTimedOut, long before the request's own deadline; a response that
// started in time completes although its last bytes come after it.
func TestConnResponseStartDeadline(t *testing.T) {
	t.Run("silent", func(t *testing.T) {
		silence := make(chan struct{})
		rb := newCtRawBroker(t, func(hdr protocol.RequestHeader, req protocol.Request) ([]byte, bool) {
			<-silence
			return nil, true
		})
		// Registered after the broker's cleanup, so it runs first and lets
		// the broker's goroutine end.
		t.Cleanup(func() { close(silence) })
		conn := rb.dial(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var err error
		ctWithin(t, 10*time.Second, "a fetch from a silent broker", func() {
			b := conn.fetch(withResponseStart(ctx, time.Now().Add(200*time.Millisecond)), 0, ReadBatchConfig{MinBytes: 1, MaxBytes: 1 << 20}, 100*time.Millisecond, "")
			err = b.Close()
		})
		if !errors.Is(err, RequestTimedOut) || !strings.Contains(err.Error(), "stalled") {
			t.Fatalf("fetch from a silent broker: %v, want RequestTimedOut saying the broker stalled", err)
		}
	})
	t.Run("slow", func(t *testing.T) {
		const start = 200 * time.Millisecond
		var rb *ctRawBroker
		rb = newCtRawBroker(t, func(hdr protocol.RequestHeader, req protocol.Request) ([]byte, bool) {
			frame := ctFetchFrame(t, hdr, hdr.CorrelationID)
			rb.mu.Lock()
			nc := rb.nc
			rb.mu.Unlock()
			if _, err := nc.Write(frame[:10]); err != nil {
				return nil, true
			}
			// The rest comes well after the start deadline.
			timer := time.NewTimer(3 * start)
			defer timer.Stop()
			<-timer.C
			return frame[10:], false
		})
		conn := rb.dial(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		b := conn.fetch(withResponseStart(ctx, time.Now().Add(start)), 0, ReadBatchConfig{MinBytes: 1, MaxBytes: 1 << 20}, 100*time.Millisecond, "")
		msgs, readErr := ctReadAll(b)
		if err := b.Close(); err != nil || readErr != io.EOF || len(msgs) != 3 {
			t.Fatalf("slow but started response: %d messages, read %v, close %v; want 3 and no error", len(msgs), readErr, err)
		}
	})
}
