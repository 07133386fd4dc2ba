package kafka

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// Conn is a connection to one Kafka broker, optionally bound to a topic and
// partition. It is safe for concurrent use; requests are serialized.
type Conn struct {
	conn net.Conn
	rbuf *bufio.Reader

	// mu serializes requests and guards the buffers and correlationID.
	mu            sync.Mutex
	wbuf          []byte
	rbody         []byte
	correlationID int32
	broken        error
	closed        atomic.Bool

	versions  atomic.Value // protocol.Versions
	rdeadline deadline
	wdeadline deadline

	// offsetMu guards offset, the position of the next read.
	offsetMu sync.Mutex
	offset   int64

	clientID        string
	topic           string
	partition       int32
	broker          int32
	rack            string // the broker's
	rackID          string // the client's
	transactionalID *string
	requiredAcks    atomic.Int32

	// leaderEpoch is the partition's leader epoch as last seen in
	// metadata (-1: unknown); fetches carry it so stale replicas are fenced.
	leaderEpoch atomic.Int32

	// topicIDs caches topic ids for Fetch v13+, which names topics by id.
	topicIDs sync.Map // string -> [16]byte

	// fetchVersionLimit caps the Fetch version (-1: none); set by tests
	// that pin old versions.
	fetchVersionLimit int16
}

// ConnConfig is a configuration object used to create new instances of Conn.
type ConnConfig struct {
	ClientID  string
	Topic     string
	Partition int
	Broker    int
	// Rack is the rack of the broker the connection goes to (kafka-go's
	// meaning), reported by Conn.Broker; the client's own rack is RackID.
	Rack string

	// RackID is the client's own rack. Fetches carry it (Fetch v11+) so the
	// partition leader can name an in-sync replica in the same rack, reported
	// by Batch.PreferredReadReplica.
	//
	// The client's rack is Rack on ReaderConfig (and on Writer, WriterConfig
	// or Transport should they get one) and RackID on Dialer and ConnConfig,
	// where kafka-go's ConnConfig.Rack already means the broker's rack.
	RackID string

	// TransactionalID is sent with produce requests; empty means none.
	TransactionalID string
}

// DefaultClientID is the default value used as ClientID of kafka
// connections.
var DefaultClientID string

func init() {
	progname := filepath.Base(os.Args[0])
	hostname, _ := os.Hostname()
	DefaultClientID = fmt.Sprintf("%s@%s (github.com/rackfetch/kafka-go)", progname, hostname)
}

// NewConn returns a new kafka connection for the given topic and partition.
func NewConn(conn net.Conn, topic string, partition int) *Conn {
	return NewConnWith(conn, ConnConfig{Topic: topic, Partition: partition})
}

// NewConnWith returns a new kafka connection configured with config. The
// offset is initialized to FirstOffset.
func NewConnWith(conn net.Conn, config ConnConfig) *Conn {
	if config.ClientID == "" {
		config.ClientID = DefaultClientID
	}
	if config.Partition < 0 || config.Partition > math.MaxInt32 {
		panic(fmt.Sprintf("invalid partition number: %d", config.Partition))
	}
	c := &Conn{
		conn:              conn,
		rbuf:              bufio.NewReaderSize(conn, 64<<10),
		clientID:          config.ClientID,
		topic:             config.Topic,
		partition:         int32(config.Partition),
		broker:            int32(config.Broker),
		rack:              config.Rack,
		rackID:            config.RackID,
		offset:            FirstOffset,
		fetchVersionLimit: -1,
	}
	if config.TransactionalID != "" {
		id := config.TransactionalID
		c.transactionalID = &id
	}
	c.requiredAcks.Store(-1)
	c.leaderEpoch.Store(-1)
	return c
}

// Close closes the connection.
func (c *Conn) Close() error {
	c.closed.Store(true)
	return c.conn.Close()
}

// LocalAddr returns the local network address.
func (c *Conn) LocalAddr() net.Addr { return c.conn.LocalAddr() }

// RemoteAddr returns the remote network address.
func (c *Conn) RemoteAddr() net.Addr { return c.conn.RemoteAddr() }

// SetDeadline sets the read and write deadlines of the connection. A request
// in flight when a deadline passes fails with a timeout and closes the
// connection, since the byte stream can no longer be trusted.
func (c *Conn) SetDeadline(t time.Time) error {
	c.rdeadline.set(t)
	c.wdeadline.set(t)
	return nil
}

// SetReadDeadline sets the deadline for future reads.
func (c *Conn) SetReadDeadline(t time.Time) error { c.rdeadline.set(t); return nil }

// SetWriteDeadline sets the deadline for future writes.
func (c *Conn) SetWriteDeadline(t time.Time) error { c.wdeadline.set(t); return nil }

// SetRequiredAcks sets the number of acknowledgements produce requests wait
// for: -1 (all in-sync replicas), 0 (none) or 1 (the leader).
func (c *Conn) SetRequiredAcks(n int) error {
	switch n {
	case -1, 0, 1:
		c.requiredAcks.Store(int32(n))
		return nil
	default:
		return InvalidRequiredAcks
	}
}

// Broker returns the broker this connection was established to, as far as
// the Conn knows it (ID and Rack come from the Dialer's metadata lookup).
func (c *Conn) Broker() Broker {
	addr, _ := c.conn.RemoteAddr().(*net.TCPAddr)
	b := Broker{ID: int(c.broker), Rack: c.rack}
	if addr != nil {
		b.Host, b.Port = addr.IP.String(), addr.Port
	}
	return b
}

// deadline is a time read by every request and set by SetDeadline.
type deadline struct{ v atomic.Int64 } // unix nanoseconds, 0 = none

func (d *deadline) set(t time.Time) {
	if t.IsZero() {
		d.v.Store(0)
	} else {
		d.v.Store(t.UnixNano())
	}
}

func (d *deadline) get() time.Time {
	if n := d.v.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// clientSoftwareName is sent in ApiVersions v3+ so broker operators can see
// which client connected.
const clientSoftwareName = "rackfetch-kafka-go"

// errConnBroken is returned by every request after an I/O failure left the
// connection's byte stream in an unknown state.
var errConnBroken = errors.New("kafka: connection closed after an earlier I/O error")

// apiVersions returns the broker's version table, asking for it on first use.
func (c *Conn) apiVersions() (protocol.Versions, error) {
	if vs, _ := c.versions.Load().(protocol.Versions); vs != nil {
		return vs, nil
	}
	vs, err := c.loadApiVersions(context.Background())
	if err != nil {
		return nil, err
	}
	return vs, nil
}

// loadApiVersions asks the broker for its versions. A broker that does not
// know our ApiVersions version answers UNSUPPORTED_VERSION (in the v0
// layout) with its own range; we then retry at the highest version it
// names, or at v0 when it names none, as the Java client does.
func (c *Conn) loadApiVersions(ctx context.Context) (protocol.Versions, error) {
	req := &protocol.ApiVersionsRequest{ClientSoftwareName: clientSoftwareName, ClientSoftwareVersion: libraryVersion}
	v := req.MaxVersion()
	for {
		var resp protocol.ApiVersionsResponse
		err := c.exchange(ctx, req, &resp, v)
		if err == nil && resp.ErrorCode == 0 {
			vs := resp.Versions()
			c.versions.Store(vs)
			return vs, nil
		}
		if err == nil && Error(resp.ErrorCode) == UnsupportedVersion && v > 0 {
			next := int16(0)
			if r, ok := resp.Versions()[protocol.ApiVersions]; ok && r.Max < v {
				next = r.Max
			}
			if next >= 0 {
				v = next // strictly lower: the loop ends
				continue
			}
		}
		if err == nil {
			err = fmt.Errorf("at v%d: %w", v, Error(resp.ErrorCode))
		}
		return nil, fmt.Errorf("asking %s for its API versions: %w", c.conn.RemoteAddr(), err)
	}
}

// roundTrip sends req at the highest version both sides support (at most
// limit when limit >= 0) and returns the decoded response and its version.
func (c *Conn) roundTrip(ctx context.Context, req protocol.Request, limit int16) (protocol.Response, int16, error) {
	vs, err := c.apiVersions()
	if err != nil {
		return nil, 0, err
	}
	v, err := vs.Pick(req, limit)
	if err != nil {
		return nil, 0, err
	}
	resp := req.NewResponse()
	if err := c.exchange(ctx, req, resp, v); err != nil {
		return nil, v, err
	}
	return resp, v, nil
}

// exchange writes req at version v and decodes the answer into resp. A nil
// resp means the request has no response (Produce with acks=0). Requests on
// one Conn are serialized: the response is read before the lock is released,
// so correlation ids never interleave.
//
// The response keeps its frame: byte fields decoded from it (JoinGroup
// metadata, SyncGroup assignments, SASL tokens) alias the frame, so it is
// never recycled here. Only the fetch path, whose Batch knows when nothing
// points into its frame any more, hands buffers back (releaseBuffer).
func (c *Conn) exchange(ctx context.Context, req protocol.Request, resp protocol.Response, v int16) error {
	_, err := c.exchangeRetain(ctx, req, resp, v)
	return err
}

// exchangeRetain is exchange for responses that alias the frame (Fetch):
// the caller owns the returned buffer and hands it back with releaseBuffer
// once nothing points into it.
func (c *Conn) exchangeRetain(ctx context.Context, req protocol.Request, resp protocol.Response, v int16) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return nil, c.broken
	}

	c.correlationID++
	id := c.correlationID
	c.wbuf = protocol.AppendRequest(c.wbuf[:0], req, v, id, c.clientID)

	deadline, stop := c.applyDeadlines(ctx)
	defer stop()

	if _, err := c.conn.Write(c.wbuf); err != nil {
		return nil, c.fail(ctx, fmt.Errorf("sending %s v%d request to %s: %w", req.Key(), v, c.conn.RemoteAddr(), err))
	}
	if resp == nil {
		return nil, nil
	}
	if start, ok := ctx.Value(responseStartKey{}).(time.Time); ok && (deadline.IsZero() || start.Before(deadline)) {
		if err := c.awaitResponseStart(ctx, start, c.ownDeadline()); err != nil {
			return nil, c.fail(ctx, fmt.Errorf("waiting for the %s v%d response from %s: no byte by %s, the broker seems stalled: %w",
				req.Key(), v, c.conn.RemoteAddr(), start.Format("15:04:05.000"), err))
		}
	}
	if c.versions.Load() == nil {
		// The first answer of a connection: say so when the peer is no
		// Kafka broker (an HTTP server, a TLS listener).
		if peer := c.sniffPeer(ctx, stop); peer != "" {
			// (Not the context's error: the peer, not the time, failed it.)
			return nil, c.fail(context.Background(), &PeerProtocolError{Addr: c.conn.RemoteAddr().String(), Peer: peer,
				Err: fmt.Errorf("reading the %s v%d response: not a Kafka response frame", req.Key(), v)})
		}
	}
	buf := c.rbody
	c.rbody = nil
	body, err := protocol.ReadFrameExpecting(c.rbuf, buf, protocol.MaxResponseSize, expectedSize(req))
	if err != nil {
		return nil, c.fail(ctx, fmt.Errorf("reading %s v%d response from %s: %w", req.Key(), v, c.conn.RemoteAddr(), err))
	}
	if err := protocol.DecodeResponse(body, resp, v, protocol.IsFlexible(req, v), id); err != nil {
		// The frame was read whole, so the stream is still in sync; but a
		// broker that sends garbage is not one to keep talking to.
		return nil, c.fail(ctx, err)
	}
	return body, nil
}

// expectedSize is how large the response to req may be by the client's own
// choice: a fetch's MaxBytes plus room for its headers. The frame reader
// allocates that much before the bytes arrive; the size the broker
// declares is not trusted that far.
func expectedSize(req protocol.Request) int {
	if f, ok := req.(*protocol.FetchRequest); ok && f.MaxBytes > 0 {
		return int(f.MaxBytes) + 64<<10
	}
	return 0
}

// releaseBuffer gives a response buffer back for reuse unless it is
// unusually large, so one huge fetch does not pin memory for the life of
// the connection.
func (c *Conn) releaseBuffer(b []byte) {
	if b == nil || cap(b) > 4<<20 {
		return
	}
	c.mu.Lock()
	if cap(b) > cap(c.rbody) {
		c.rbody = b[:0]
	}
	c.mu.Unlock()
}

// responseStartKey keys, in a request's context, the time by which the
// broker must start answering (withResponseStart).
type responseStartKey struct{}

// withResponseStart bounds the wait for the first byte of the response
// only: a broker silent until then is taken as stalled, while a response
// already arriving gets the rest of ctx's time, however large it is. The
// Reader uses it for fetches from followers, whose stall it can route
// around by going back to the leader.
func withResponseStart(ctx context.Context, by time.Time) context.Context {
	return context.WithValue(ctx, responseStartKey{}, by)
}

// awaitResponseStart waits until the response's first byte is buffered or
// start passes. It bounds the wait with a timer of its own, not the
// socket's deadline: a socket deadline moved later by the next request
// stays in the runtime's timer heap at its old time and wakes the process
// for nothing, once per request, which is most of what an idle consumer's
// long polls would cost; a stopped timer is dropped. own is the socket
// deadline the request runs under (applyDeadlines).
func (c *Conn) awaitResponseStart(ctx context.Context, start, own time.Time) error {
	var (
		mu            sync.Mutex
		peeked, fired bool
	)
	t := time.AfterFunc(time.Until(start), func() {
		mu.Lock()
		defer mu.Unlock()
		if !peeked {
			fired = true
			_ = c.conn.SetReadDeadline(time.Unix(1, 0))
		}
	})
	_, err := c.rbuf.Peek(1)
	mu.Lock()
	peeked = true
	mu.Unlock()
	t.Stop()
	if fired && err == nil {
		// The first byte came as the bound passed: the rest of the answer
		// gets the request's own time.
		_ = c.conn.SetReadDeadline(own)
		if ctx.Err() != nil {
			// A cancellation that fired meanwhile set a past deadline,
			// which the line above replaced: it must still interrupt.
			_ = c.conn.SetDeadline(time.Unix(1, 0))
		}
	}
	return err
}

// ownDeadline is the earlier of the Conn's read and write deadlines
// (SetDeadline), zero for none.
func (c *Conn) ownDeadline() time.Time {
	own := c.rdeadline.get()
	if w := c.wdeadline.get(); !w.IsZero() && (own.IsZero() || w.Before(own)) {
		own = w
	}
	return own
}

// applyDeadlines sets the socket deadline from the Conn's deadlines
// (SetDeadline) and makes ctx's end, its deadline included, interrupt
// blocked I/O. It returns the deadline the request runs under and a func
// that undoes the interruption. A context's deadline is kept by the
// context's own timer, not the socket's: see awaitResponseStart.
func (c *Conn) applyDeadlines(ctx context.Context) (time.Time, func()) {
	own := c.ownDeadline()
	deadline := own
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	_ = c.conn.SetDeadline(own)
	if ctx.Done() == nil {
		return deadline, func() {}
	}
	stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Unix(1, 0)) })
	return deadline, func() { stop() }
}

// fail marks the connection unusable after an I/O error and closes it: the
// position in the byte stream is unknown, so no later response could be
// trusted. A cancelled context is reported as such.
func (c *Conn) fail(ctx context.Context, err error) error {
	c.broken = errConnBroken
	c.closed.Store(true)
	_ = c.conn.Close()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%w (%w)", ctxErr, err)
	}
	// The socket deadline may fire a moment before the context's own timer:
	// report the context's deadline, not a broker timeout.
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return fmt.Errorf("%w (%w)", context.DeadlineExceeded, err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: %w", RequestTimedOut, err)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %w", io.ErrUnexpectedEOF, err)
	}
	return err
}

// isBroken reports whether the connection was closed, by Close or after an
// I/O error.
func (c *Conn) isBroken() bool { return c.closed.Load() }

// sniffPeer waits for the first bytes of the first answer on the
// connection, which should be a Kafka response frame's size, and names the
// protocol of a peer that is not Kafka: no valid frame starts with "HTTP" or
// a TLS record header, each would be a size above MaxResponseSize. A peer
// silent until the deadline may be an HTTP server waiting for the end of a
// request line: it is sent one, with a moment to answer (a stalled Kafka
// broker drops the connection on the bogus size it makes). stop undoes the
// request's deadlines; a caller that cancelled ctx is not kept waiting. It
// returns "" when the peer may be Kafka.
func (c *Conn) sniffPeer(ctx context.Context, stop func()) string {
	head, err := c.rbuf.Peek(4)
	var ne net.Error
	if err != nil && len(head) == 0 && errors.As(err, &ne) && ne.Timeout() && !errors.Is(ctx.Err(), context.Canceled) {
		stop()
		_ = c.conn.SetDeadline(time.Now().Add(peerProbeTimeout))
		if _, err = c.conn.Write([]byte("\r\n\r\n")); err == nil {
			head, err = c.rbuf.Peek(4)
		}
		_ = c.conn.SetDeadline(time.Unix(1, 0)) // the request fails as it would have
	}
	if err != nil {
		return ""
	}
	switch {
	case string(head) == "HTTP":
		return "HTTP"
	case head[1] == 3 && (head[0] == 0x15 || head[0] == 0x16): // a TLS alert or handshake record, version 3.x
		return "TLS"
	}
	return ""
}

// peerProbeTimeout bounds the wait for an HTTP server's answer to the
// probe of sniffPeer.
const peerProbeTimeout = 300 * time.Millisecond
