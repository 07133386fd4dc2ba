package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/rackfetch/kafka-go/internal/retry"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/sasl"
)

// Dialer is like net.Dialer but knows Kafka: it negotiates API versions,
// authenticates with SASL, and tells brokers the client's rack.
type Dialer struct {
	// Unique identifier for client connections established by this Dialer.
	ClientID string

	// DialFunc, when set, opens network connections instead of net.Dialer;
	// LocalAddr, DualStack, FallbackDelay and KeepAlive are then ignored.
	DialFunc func(ctx context.Context, network string, address string) (net.Conn, error)

	// Timeout bounds how long a dial (connect, TLS, SASL) may take. Zero
	// means no timeout.
	Timeout time.Duration

	// Deadline is the absolute time after which dials fail.
	Deadline time.Time

	// LocalAddr is the local address to use when dialing an address.
	LocalAddr net.Addr

	// DualStack enables RFC 6555 "Happy Eyeballs" dialing.
	DualStack bool

	// FallbackDelay is the delay before a fallback connection with
	// DualStack (default 300ms).
	FallbackDelay time.Duration

	// KeepAlive is the TCP keep-alive period (zero: none).
	KeepAlive time.Duration

	// Resolver optionally converts broker addresses, for custom service
	// discovery.
	Resolver Resolver

	// TLS enables Dialer to open secure connections. If nil, standard
	// net.Conn will be used.
	TLS *tls.Config

	// SASLMechanism configures SASL authentication. If nil, none is done.
	SASLMechanism sasl.Mechanism

	// TransactionalID is sent with produce requests; empty means none.
	TransactionalID string

	// RackID is the client's rack (client.rack in the Java client). Every
	// fetch on connections of this Dialer carries it (Fetch v11+), so a
	// broker with a replica selector can name an in-sync replica in the same
	// rack: see Batch.PreferredReadReplica. A Reader with this Dialer and no
	// ReaderConfig.Rack uses it as its Rack.
	//
	// The client's rack is Rack on ReaderConfig (and on Writer, WriterConfig
	// or Transport should they get one) and RackID on Dialer and ConnConfig,
	// where kafka-go's ConnConfig.Rack already means the broker's rack.
	RackID string
}

// Resolver converts a broker host name into addresses, for custom service
// discovery.
type Resolver interface {
	// LookupHost looks up the given host using the local resolver.
	// It returns a slice of that host's addresses.
	LookupHost(ctx context.Context, host string) (addrs []string, err error)
}

// DefaultDialer is the default dialer used when none is specified.
var DefaultDialer = &Dialer{
	Timeout:   10 * time.Second,
	DualStack: true,
}

// Dial connects to the address on the named network.
func (d *Dialer) Dial(network string, address string) (*Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

// DialContext connects to the address on the named network. Once connected,
// the expiry of ctx no longer affects the connection.
func (d *Dialer) DialContext(ctx context.Context, network string, address string) (*Conn, error) {
	return d.connect(ctx, network, address, ConnConfig{})
}

// DialLeader opens a connection to the leader of the partition for a given
// topic; address is only used to discover the cluster.
func (d *Dialer) DialLeader(ctx context.Context, network string, address string, topic string, partition int) (*Conn, error) {
	p, id, err := d.lookupPartition(ctx, network, address, topic, partition)
	if err != nil {
		return nil, err
	}
	c, err := d.DialPartition(ctx, network, address, p)
	if err == nil && id != ([16]byte{}) {
		// The lookup's answer names the topic's ID: fetches on the new
		// connection need not ask for it (Fetch v13+).
		c.topicIDs.Store(topic, id)
	}
	return c, err
}

// DialPartition opens a connection to the leader of the partition described
// by partition (as returned by LookupPartition(s)).
func (d *Dialer) DialPartition(ctx context.Context, network string, address string, partition Partition) (*Conn, error) {
	leader, err := partitionLeader(partition, nil)
	if err != nil {
		return nil, err
	}
	return d.dialBroker(ctx, network, leader, partition)
}

// dialBroker connects to broker b for partition p: the leader, or a
// follower a rack-aware fetch was pointed to.
func (d *Dialer) dialBroker(ctx context.Context, network string, b Broker, p Partition) (*Conn, error) {
	if b.Host == "" {
		// Not ":0", which would fail as a refused connection.
		return nil, fmt.Errorf("dialing broker %d: no address for it in the metadata: %w", b.ID, BrokerNotAvailable)
	}
	c, err := d.connect(ctx, network, net.JoinHostPort(b.Host, strconv.Itoa(b.Port)), ConnConfig{
		Topic:     p.Topic,
		Partition: p.ID,
		Broker:    b.ID,
		Rack:      b.Rack,
	})
	if err != nil {
		return nil, err
	}
	c.leaderEpoch.Store(int32(p.LeaderEpoch))
	return c, nil
}

// LookupLeader returns the broker leading a partition.
func (d *Dialer) LookupLeader(ctx context.Context, network string, address string, topic string, partition int) (Broker, error) {
	p, err := d.LookupPartition(ctx, network, address, topic, partition)
	return p.Leader, err
}

// LookupPartition returns the description of one partition, retrying
// temporary errors (a leader election in progress) until ctx ends.
func (d *Dialer) LookupPartition(ctx context.Context, network string, address string, topic string, partition int) (Partition, error) {
	p, _, err := d.lookupPartition(ctx, network, address, topic, partition)
	return p, err
}

// lookupPartition is LookupPartition, also returning the topic's ID (zero
// when the broker names none).
func (d *Dialer) lookupPartition(ctx context.Context, network string, address string, topic string, partition int) (Partition, [16]byte, error) {
	c, err := d.DialContext(ctx, network, address)
	if err != nil {
		return Partition{}, [16]byte{}, err
	}
	defer c.Close()
	for attempt := 0; ; attempt++ {
		if attempt > 0 && !retry.Sleep(ctx, retry.Backoff(attempt, 100*time.Millisecond, 2*time.Second)) {
			return Partition{}, [16]byte{}, fmt.Errorf("looking up %s/%d: %w (last error: %w)", topic, partition, ctx.Err(), err)
		}
		var partitions []Partition
		partitions, err = c.readPartitions(ctx, topic)
		if err != nil {
			if isTemporary(err) {
				continue
			}
			return Partition{}, [16]byte{}, err
		}
		for _, p := range partitions {
			if p.ID == partition {
				if p.Error != nil && isTemporary(p.Error) {
					err = p.Error
					break
				}
				var id [16]byte
				if v, ok := c.topicIDs.Load(topic); ok {
					id = v.([16]byte)
				}
				return p, id, p.Error
			}
		}
		if err == nil {
			return Partition{}, [16]byte{}, fmt.Errorf("looking up %s/%d: %w", topic, partition, UnknownTopicOrPartition)
		}
	}
}

// LookupPartitions returns the partitions of a topic.
func (d *Dialer) LookupPartitions(ctx context.Context, network string, address string, topic string) ([]Partition, error) {
	c, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.readPartitions(ctx, topic)
}

// connect opens a connection, negotiates versions and authenticates.
func (d *Dialer) connect(ctx context.Context, network, address string, cfg ConnConfig) (*Conn, error) {
	if d.Timeout != 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	if !d.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Deadline)
		defer cancel()
	}
	nc, err := d.dialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	cfg.ClientID = d.ClientID
	cfg.TransactionalID = d.TransactionalID
	cfg.RackID = d.RackID
	c := NewConnWith(nc, cfg)
	if _, err := c.loadApiVersions(ctx); err != nil {
		c.Close()
		return nil, d.namePeer(ctx, network, address, err)
	}
	if d.SASLMechanism != nil {
		host, port, _ := net.SplitHostPort(address)
		portNum, _ := strconv.Atoi(port)
		md := &sasl.Metadata{Host: host, Port: portNum}
		if err := c.authenticateSASL(sasl.WithMetadata(ctx, md), d.SASLMechanism); err != nil {
			c.Close()
			return nil, fmt.Errorf("authenticating to %s with SASL %s: %w", address, d.SASLMechanism.Name(), err)
		}
	}
	return c, nil
}

func (d *Dialer) dialContext(ctx context.Context, network string, addr string) (net.Conn, error) {
	address, err := lookupHost(ctx, addr, d.Resolver)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", addr, err)
	}
	dial := d.DialFunc
	if dial == nil {
		dial = (&net.Dialer{
			LocalAddr:     d.LocalAddr,
			FallbackDelay: d.FallbackDelay,
			KeepAlive:     d.KeepAlive,
		}).DialContext
	}
	nc, err := dial(ctx, network, address)
	if err != nil {
		return nil, fmt.Errorf("dialing %s: %w", address, err)
	}
	if d.TLS == nil {
		return nc, nil
	}
	cfg := d.TLS
	if cfg.ServerName == "" {
		cfg = cfg.Clone()
		cfg.ServerName, _, _ = net.SplitHostPort(address)
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, fmt.Errorf("TLS handshake with %s: %w", address, d.tlsHandshakeError(ctx, network, address, err))
	}
	return tc, nil
}

// Dial is a convenience wrapper for DefaultDialer.Dial.
func Dial(network string, address string) (*Conn, error) {
	return DefaultDialer.Dial(network, address)
}

// DialContext is a convenience wrapper for DefaultDialer.DialContext.
func DialContext(ctx context.Context, network string, address string) (*Conn, error) {
	return DefaultDialer.DialContext(ctx, network, address)
}

// DialLeader is a convenience wrapper for DefaultDialer.DialLeader.
func DialLeader(ctx context.Context, network string, address string, topic string, partition int) (*Conn, error) {
	return DefaultDialer.DialLeader(ctx, network, address, topic, partition)
}

// DialPartition is a convenience wrapper for DefaultDialer.DialPartition.
func DialPartition(ctx context.Context, network string, address string, partition Partition) (*Conn, error) {
	return DefaultDialer.DialPartition(ctx, network, address, partition)
}

// LookupPartition is a convenience wrapper for DefaultDialer.LookupPartition.
func LookupPartition(ctx context.Context, network string, address string, topic string, partition int) (Partition, error) {
	return DefaultDialer.LookupPartition(ctx, network, address, topic, partition)
}

// LookupPartitions is a convenience wrapper for DefaultDialer.LookupPartitions.
func LookupPartitions(ctx context.Context, network string, address string, topic string) ([]Partition, error) {
	return DefaultDialer.LookupPartitions(ctx, network, address, topic)
}

// splitHostPort splits an address, defaulting the port to 9092.
func splitHostPort(s string) (host, port string) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return s, "9092"
	}
	return host, port
}

func lookupHost(ctx context.Context, address string, resolver Resolver) (string, error) {
	host, port := splitHostPort(address)
	if resolver != nil {
		resolved, err := resolver.LookupHost(ctx, host)
		if err != nil {
			return "", err
		}
		if len(resolved) > 0 {
			rhost, rport, err := net.SplitHostPort(resolved[0])
			if err != nil {
				rhost = resolved[0]
			}
			host = rhost
			if port == "" {
				port = rport
			}
		}
	}
	return net.JoinHostPort(host, port), nil
}

// isTemporary reports whether err is worth retrying.
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// isUnexpectedEOF reports a connection closed by the peer mid-exchange.
func isUnexpectedEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// partitionLeader returns the broker leading p with its address: the one
// the metadata gave with the partition, else the one known holds (the
// cluster's broker list, when the caller keeps one). Metadata can name a
// leader that is not among the brokers it lists (a broker that went away
// between the two parts of the answer); the error then names the topic,
// the partition and the broker, and wraps LeaderNotAvailable, as metadata
// read again usually names a leader that can be reached.
func partitionLeader(p Partition, known func(id int) (Broker, bool)) (Broker, error) {
	if p.Leader.Host != "" {
		return p.Leader, nil
	}
	if p.Leader.ID < 0 {
		return Broker{}, fmt.Errorf("looking up the leader of %s/%d: %w", p.Topic, p.ID, LeaderNotAvailable)
	}
	if known != nil {
		if b, ok := known(p.Leader.ID); ok && b.Host != "" {
			return b, nil
		}
	}
	return Broker{}, fmt.Errorf("looking up the leader of %s/%d: broker %d is not among the brokers the metadata lists: %w",
		p.Topic, p.ID, p.Leader.ID, LeaderNotAvailable)
}

// authenticateSASL runs the SaslHandshake and SaslAuthenticate exchange.
// Errors never carry the mechanism's credentials.
func (c *Conn) authenticateSASL(ctx context.Context, m sasl.Mechanism) error {
	hs, v, err := c.roundTrip(ctx, &protocol.SaslHandshakeRequest{Mechanism: m.Name()}, -1)
	if err != nil {
		return fmt.Errorf("SASL handshake: %w", err)
	}
	if code := hs.(*protocol.SaslHandshakeResponse).ErrorCode; code != 0 {
		enabled := hs.(*protocol.SaslHandshakeResponse).Mechanisms
		if Error(code) == IllegalSASLState && len(enabled) == 0 {
			// What a PLAINTEXT or SSL listener answers: it takes no SASL.
			return fmt.Errorf("SASL handshake for %s: the listener at %s does not take SASL (a PLAINTEXT or SSL listener?): %w", m.Name(), c.conn.RemoteAddr(), Error(code))
		}
		return fmt.Errorf("SASL handshake for %s (broker enables %v): %w", m.Name(), enabled, Error(code))
	}
	if v < 1 {
		// Handshake v0 means raw, unframed SASL tokens; every broker this
		// library supports speaks v1.
		return fmt.Errorf("SASL handshake v0 (unframed tokens) is not supported")
	}
	sess, state, err := m.Start(ctx)
	if err != nil {
		return fmt.Errorf("starting SASL %s: %w", m.Name(), err)
	}
	for done := false; !done; {
		resp, _, err := c.roundTrip(ctx, &protocol.SaslAuthenticateRequest{AuthBytes: state}, -1)
		if err != nil {
			if isUnexpectedEOF(err) {
				// Some brokers report a failed exchange by closing the socket.
				return fmt.Errorf("%w: broker closed the connection", SASLAuthenticationFailed)
			}
			return err
		}
		r := resp.(*protocol.SaslAuthenticateResponse)
		if r.ErrorCode != 0 {
			return makeError(r.ErrorCode, deref(r.ErrorMessage))
		}
		done, state, err = sess.Next(ctx, r.AuthBytes)
		if err != nil {
			return fmt.Errorf("SASL %s exchange: %w", m.Name(), err)
		}
	}
	return nil
}

// tlsHandshakeError names the likely cause of a failed TLS handshake with
// addr: a peer that answered in HTTP, or one that closed the connection
// without a TLS answer, as a Kafka plaintext listener does with a
// ClientHello it reads as an oversized request. A broker shutting down
// closes connections too, so "plaintext" is said only when a Kafka
// ApiVersions answer on a new plaintext connection confirms it (a failure
// named so is not retried).
func (d *Dialer) tlsHandshakeError(ctx context.Context, network, addr string, err error) error {
	var rhe tls.RecordHeaderError
	switch {
	case errors.As(err, &rhe) && string(rhe.RecordHeader[:4]) == "HTTP":
		return &PeerProtocolError{Addr: addr, Peer: "HTTP", Err: err}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		if ctx.Err() == nil && d.answersPlaintext(ctx, network, addr) {
			return &PeerProtocolError{Addr: addr, Peer: "plaintext", Err: err}
		}
	}
	return err
}

// answersPlaintext reports whether addr answers ApiVersions without TLS.
func (d *Dialer) answersPlaintext(ctx context.Context, network, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, tlsProbeTimeout)
	defer cancel()
	probe := *d
	probe.TLS = nil
	nc, err := probe.dialContext(ctx, network, addr)
	if err != nil {
		return false
	}
	c := NewConnWith(nc, ConnConfig{ClientID: d.ClientID})
	defer c.Close()
	_, err = c.loadApiVersions(ctx)
	return err == nil
}

// namePeer names the peer at address after the first request of a
// plaintext connection failed with err: a peer that closed the connection
// without a byte of answer may be a TLS server (what one does with bytes
// that are not TLS), which a TLS handshake on a new connection tells.
func (d *Dialer) namePeer(ctx context.Context, network, address string, err error) error {
	if d.TLS != nil || !(errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) || ctx.Err() != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, tlsProbeTimeout)
	defer cancel()
	probe := *d
	// Only to learn whether the peer speaks TLS: nothing is sent over it.
	probe.TLS = &tls.Config{InsecureSkipVerify: true} //nolint:gosec
	nc, perr := probe.dialContext(ctx, network, address)
	if perr != nil {
		return err
	}
	nc.Close()
	return &PeerProtocolError{Addr: address, Peer: "TLS", Err: err}
}

// tlsProbeTimeout bounds the handshake of namePeer.
const tlsProbeTimeout = time.Second
