package kafka

import (
	"bufio"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
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
