package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/sasl"
)

// RoundTripper sends one request to one Kafka broker and returns its
// response. It is the Writer's way to the cluster, and a seam for programs
// that want to observe or alter the requests a Writer sends.
//
// Unlike kafka-go's RoundTripper, which takes the cluster's address and
// routes each request itself, this one is given the address of the broker
// that must receive the request: the Writer does the routing (metadata,
// leaders, retries). Requests and responses are package protocol's types.
//
// A Produce request with Acks 0 has no response: RoundTrip then returns a
// nil Response and a nil error once the request is sent.
type RoundTripper interface {
	RoundTrip(ctx context.Context, addr net.Addr, req protocol.Request) (protocol.Response, error)
}

// BrokerResolver translates a broker of the cluster's metadata into the IP
// addresses to dial, for custom service discovery.
//
// Resolvers must be safe for concurrent use.
type BrokerResolver interface {
	// LookupBrokerIPAddr returns the IP addresses of broker.
	LookupBrokerIPAddr(ctx context.Context, broker Broker) ([]net.IPAddr, error)
}

// NewBrokerResolver returns a BrokerResolver that looks broker host names
// up with r (net.DefaultResolver when r is nil).
func NewBrokerResolver(r *net.Resolver) BrokerResolver { return netBrokerResolver{r} }

type netBrokerResolver struct{ r *net.Resolver }

func (nr netBrokerResolver) LookupBrokerIPAddr(ctx context.Context, b Broker) ([]net.IPAddr, error) {
	r := nr.r
	if r == nil {
		r = net.DefaultResolver
	}
	ips, err := r.LookupIPAddr(ctx, b.Host)
	if err == nil && len(ips) == 0 {
		err = fmt.Errorf("no address for broker %d (%s)", b.ID, b.Host)
	}
	return ips, err
}

// Transport is the RoundTripper of this package: it holds the connection
// settings of the clients that use it and the state they share.
//
// Writers using the same Transport and the same Addr share one metadata
// cache and one control connection per broker (for metadata requests);
// each Writer produces on connections of its own, one per broker, so that
// produce requests never queue behind metadata requests or behind another
// Writer's produce requests.
//
// Transport values are safe for concurrent use. The configuration must not
// be changed once the Transport is in use.
type Transport struct {
	// Dial opens network connections; nil uses a net.Dialer.
	Dial func(ctx context.Context, network string, address string) (net.Conn, error)

	// DialTimeout bounds how long opening a connection may take, TLS
	// handshake, version negotiation and SASL included.
	//
	// Default: 5s.
	DialTimeout time.Duration

	// IdleTimeout is how long a produce or RoundTrip connection may stay
	// unused before it is closed and dialed again on next use. Brokers
	// close connections idle longer than connections.max.idle.ms (10
	// minutes by default); redialing first avoids a failed attempt.
	// Control (metadata) connections are not subject to it: a failed
	// metadata request drops its connection and tries another broker.
	//
	// Default: 30s.
	IdleTimeout time.Duration

	// MetadataTTL is how old the cached metadata of a topic may get
	// before it is read again. A stale entry is still used while it is
	// being refreshed in the background; errors that mean the leader moved
	// refresh it at once.
	//
	// Default: 6s.
	MetadataTTL time.Duration

	// MetadataTopics are topics whose metadata is read along with every
	// metadata request, so that they are known before first use. Unlike
	// kafka-go, leaving it empty does not mean all topics: only the topics
	// in use are asked for.
	MetadataTopics []string

	// ClientID is sent to the brokers with every request (DefaultClientID
	// when empty).
	ClientID string

	// TLS, when set, makes connections use TLS. An empty ServerName is
	// filled in with the broker's host name.
	TLS *tls.Config

	// SASL, when set, authenticates every connection.
	SASL sasl.Mechanism

	// Resolver, when set, translates brokers into the IP addresses to
	// dial; Dial then receives resolved addresses. It is called for every
	// new connection, not for every request.
	Resolver BrokerResolver

	// Context bounds the requests made through the Transport: once it is
	// done, produce and metadata requests fail. Nil means
	// context.Background().
	Context context.Context

	// dialer, set by NewWriter, replaces the fields above with a Dialer's
	// settings (kafka-go's pre-0.4 API).
	dialer *Dialer

	mu       sync.Mutex
	clusters map[string]*transportCluster
	conns    map[string]*transportConn
}

// DefaultTransport is the Transport used by Writers whose Transport field is
// nil.
var DefaultTransport RoundTripper = &Transport{}

func (t *Transport) dialTimeout() time.Duration { return positiveOr(t.DialTimeout, 5*time.Second) }

// idleTimeout is also asked of the nil Transport of a Writer on a custom
// RoundTripper, whose produce lanes stop after it.
func (t *Transport) idleTimeout() time.Duration {
	if t == nil {
		return 30 * time.Second
	}
	return positiveOr(t.IdleTimeout, 30*time.Second)
}

func (t *Transport) metadataTTL() time.Duration { return positiveOr(t.MetadataTTL, 6*time.Second) }

func (t *Transport) context() context.Context {
	if t.Context != nil {
		return t.Context
	}
	return context.Background()
}

// newDialer returns the Dialer for connections of the Transport. lookup
// names the broker behind an address, for the BrokerResolver.
func (t *Transport) newDialer(lookup func(host string, port int) Broker) *Dialer {
	if t.dialer != nil {
		return t.dialer
	}
	d := &Dialer{
		ClientID:      t.ClientID,
		Timeout:       t.dialTimeout(),
		DualStack:     true,
		TLS:           t.TLS,
		SASLMechanism: t.SASL,
		DialFunc:      t.Dial,
	}
	if d.DialFunc == nil {
		d.DialFunc = (&net.Dialer{}).DialContext
	}
	if r := t.Resolver; r != nil {
		dial := d.DialFunc
		d.DialFunc = func(ctx context.Context, network, address string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			n, _ := strconv.Atoi(port)
			b := Broker{Host: host, Port: n, ID: -1}
			if lookup != nil {
				b = lookup(host, n)
			}
			ips, err := r.LookupBrokerIPAddr(ctx, b)
			if err != nil {
				return nil, fmt.Errorf("resolving broker %d (%s): %w", b.ID, address, err)
			}
			if len(ips) == 0 {
				return nil, fmt.Errorf("resolving broker %d (%s): no address", b.ID, address)
			}
			return dial(ctx, network, net.JoinHostPort(ips[0].String(), port))
		}
	}
	return d
}

// CloseIdleConnections closes the connections of RoundTrip and forgets
// cluster state no Writer uses any more. Connections of Writers in use are
// closed by their Writer's Close.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	conns := t.conns
	t.conns = nil
	for k, tc := range t.clusters {
		if tc.refs == 0 {
			delete(t.clusters, k)
			tc.cl.close()
		}
	}
	t.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// RoundTrip sends req to the broker at addr (the first that answers when
// addr names several, as TCP("a:9092", "b:9092") does) at the highest
// version both sides support, and returns the response. Connections are
// kept per address and reused; requests on one connection are serialized.
func (t *Transport) RoundTrip(ctx context.Context, addr net.Addr, req protocol.Request) (protocol.Response, error) {
	if addr == nil {
		return nil, errors.New("kafka.(*Transport).RoundTrip: nil address")
	}
	addrs := splitAddr(addr)
	failed := &brokersError{tried: len(addrs)}
	for _, a := range addrs {
		tcn, reused, err := t.grabConn(ctx, a)
		if err != nil {
			var kerr Error
			if len(addrs) == 1 || ctx.Err() != nil || (errors.As(err, &kerr) && permanentFailure(err)) {
				return nil, err // refused credentials are the same everywhere
			}
			failed.add(err) // every address's failure is kept, not only the last
			continue
		}
		resp, err := sendRequest(ctx, tcn.c, req)
		if err != nil && tcn.c.isBroken() {
			t.dropConn(a, tcn)
			if reused && peerClosed(err) && ctx.Err() == nil && req.Key() != protocol.Produce {
				// A kept connection the broker had closed (it restarted,
				// or dropped it as idle): the request never reached a
				// live broker, so a fresh connection gets it an answer.
				// (Not a Produce: a broker that died mid-request may
				// have written it.)
				if tcn, _, err = t.grabConn(ctx, a); err != nil {
					return nil, err
				}
				resp, err = sendRequest(ctx, tcn.c, req)
				if err != nil && tcn.c.isBroken() {
					t.dropConn(a, tcn)
				}
			}
		}
		return resp, err
	}
	return nil, failed
}

// peerClosed reports whether err says the peer had closed the connection
// before a byte of the response came (io.EOF where a response began; a
// response cut short is io.ErrUnexpectedEOF, a broken broker's, not a
// stale connection's).
func peerClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// sendRequest sends req on c: Produce is capped at version 10 (11+ change
// transactional semantics) and, with Acks 0, waits for no response.
func sendRequest(ctx context.Context, c *Conn, req protocol.Request) (protocol.Response, error) {
	limit := int16(-1)
	if p, ok := req.(*protocol.ProduceRequest); ok {
		limit = 10
		if p.Acks == 0 {
			vs, err := c.apiVersions()
			if err != nil {
				return nil, err
			}
			v, err := vs.Pick(req, limit)
			if err != nil {
				return nil, err
			}
			return nil, c.exchange(ctx, req, nil, v)
		}
	}
	resp, _, err := c.roundTrip(ctx, req, limit)
	return resp, err
}

// transportConn is a connection of RoundTrip.
type transportConn struct {
	c        *Conn
	mu       sync.Mutex
	lastUsed time.Time
}

func (tcn *transportConn) close() { tcn.c.Close() }

// grabConn returns the connection to address, kept (reused) or dialed.
func (t *Transport) grabConn(ctx context.Context, address string) (tcn *transportConn, reused bool, err error) {
	t.mu.Lock()
	tcn = t.conns[address]
	t.mu.Unlock()
	if tcn != nil {
		tcn.mu.Lock()
		idle := time.Since(tcn.lastUsed) > t.idleTimeout()
		tcn.lastUsed = time.Now()
		tcn.mu.Unlock()
		if !idle && !tcn.c.isBroken() {
			return tcn, true, nil
		}
		t.dropConn(address, tcn)
	}
	c, err := t.newDialer(nil).DialContext(ctx, "tcp", address)
	if err != nil {
		return nil, false, err
	}
	tcn = &transportConn{c: c, lastUsed: time.Now()}
	t.mu.Lock()
	if t.conns == nil {
		t.conns = map[string]*transportConn{}
	}
	if old := t.conns[address]; old != nil && !old.c.isBroken() {
		// Another caller dialed meanwhile: keep one connection.
		t.mu.Unlock()
		c.Close()
		return old, true, nil
	}
	t.conns[address] = tcn
	t.mu.Unlock()
	return tcn, false, nil
}

func (t *Transport) dropConn(address string, tcn *transportConn) {
	t.mu.Lock()
	if t.conns[address] == tcn {
		delete(t.conns, address)
	}
	t.mu.Unlock()
	tcn.close()
}

// acquire returns the shared cluster state for addr, counting a reference
// that release gives back.
func (t *Transport) acquire(addr net.Addr) *transportCluster {
	key := addr.Network() + "://" + addr.String()
	t.mu.Lock()
	defer t.mu.Unlock()
	if tc := t.clusters[key]; tc != nil {
		tc.refs++
		return tc
	}
	tc := newTransportCluster(t, addr, nil)
	tc.key = key
	tc.refs = 1
	if t.clusters == nil {
		t.clusters = map[string]*transportCluster{}
	}
	t.clusters[key] = tc
	return tc
}

// release drops a reference taken by acquire; the last one closes the
// control connections.
func (t *Transport) release(tc *transportCluster) {
	t.mu.Lock()
	tc.refs--
	last := tc.refs == 0
	if last && t.clusters[tc.key] == tc {
		delete(t.clusters, tc.key)
	}
	t.mu.Unlock()
	if last {
		tc.stop()
		tc.cl.close()
	}
}

// TCP returns the address of a Kafka cluster reachable at one or more
// host:port addresses (a bootstrap list), as the Writer's Addr expects.
func TCP(address ...string) net.Addr {
	return tcpAddrs(append([]string(nil), address...))
}

type tcpAddrs []string

func (a tcpAddrs) Network() string { return "tcp" }
func (a tcpAddrs) String() string  { return strings.Join(a, ",") }

// splitAddr lists the host:port addresses of addr.
func splitAddr(addr net.Addr) []string {
	if a, ok := addr.(tcpAddrs); ok {
		return a
	}
	var out []string
	for _, s := range strings.Split(addr.String(), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
