package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// Client is kafka-go's request-level API: one method per Kafka request,
// each taking a context and a request value and returning the broker's
// answer in this package's types.
//
// Unlike kafka-go's, the Client routes requests itself: it reads the
// cluster's metadata from Addr and sends each request to the broker that
// must answer it (a partition's leader, a group's coordinator, the
// controller), through Transport. Errors a broker reports for one topic,
// partition or group are returned in the response, as in kafka-go; the
// method's own error means the request as a whole failed.
//
// Clients are safe for concurrent use as long as their fields are not
// changed after first use.
type Client struct {
	// Addr is the address of the cluster (any of its brokers, or several
	// through TCP). A request's own Addr field takes precedence.
	Addr net.Addr

	// Timeout bounds every request of the Client; zero means no timeout
	// beyond the context's.
	Timeout time.Duration

	// Transport carries the requests to the brokers; nil means
	// DefaultTransport.
	Transport RoundTripper
}

// The default time limits kafka-go's Client gives requests that carry one.
const (
	defaultCreateTopicsTimeout     = 2 * time.Second
	defaultDeleteTopicsTimeout     = 2 * time.Second
	defaultCreatePartitionsTimeout = 2 * time.Second
	defaultProduceTimeout          = 500 * time.Millisecond
	defaultClientMaxWait           = 500 * time.Millisecond
)

// Request and Response are the messages a RoundTripper carries: package
// protocol's typed requests and responses.
type (
	Request  = protocol.Request
	Response = protocol.Response
)

func (c *Client) transport() RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return DefaultTransport
}

// address picks the request's address, else the Client's.
func (c *Client) address(addr net.Addr) (net.Addr, error) {
	if addr != nil {
		return addr, nil
	}
	if c.Addr != nil {
		return c.Addr, nil
	}
	return nil, errors.New("kafka.(*Client): no address: set Client.Addr or the request's Addr")
}

// withTimeout applies the Client's Timeout to ctx.
func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.Timeout > 0 {
		return context.WithTimeout(ctx, c.Timeout)
	}
	return context.WithCancel(ctx)
}

// roundTrip sends req to addr: the bootstrap address for requests any
// broker answers, or one broker's address.
func (c *Client) roundTrip(ctx context.Context, addr net.Addr, req protocol.Request) (protocol.Response, error) {
	rt := c.transport()
	if rt == nil {
		return nil, errors.New("kafka.(*Client): no Transport (DefaultTransport is nil)")
	}
	resp, err := rt.RoundTrip(ctx, addr, req)
	if err != nil {
		return nil, fmt.Errorf("sending %s to %s: %w", req.Key(), addr, err)
	}
	if resp == nil {
		return nil, fmt.Errorf("sending %s to %s: no response", req.Key(), addr)
	}
	return resp, nil
}

// responseAs takes a round trip's result and checks that the response is
// the type its request asks for, so callers need not assert it themselves.
func responseAs[T protocol.Response](resp protocol.Response, err error) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	r, ok := resp.(T)
	if !ok {
		return zero, fmt.Errorf("unexpected response: want %T, got %T", zero, resp)
	}
	return r, nil
}

// clientEach runs fn(0..n-1) concurrently (one call inline) and returns
// the first error by index, so the outcome does not depend on timing.
func clientEach(n int, fn func(i int) error) error {
	if n == 1 {
		return fn(0)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = fn(i)
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// clientThrottle converts a response's throttle time.
func clientThrottle(ms int32) time.Duration { return time.Duration(ms) * time.Millisecond }

// clientTime is a broker timestamp in milliseconds as a time: zero for none
// (-1), UTC otherwise, as kafka-go returns them.
func clientTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// clientSortedKeys returns m's keys in order, so that requests built from
// kafka-go's maps do not depend on map order.
func clientSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// clientGroupsNullable maps kafka-go's "" (absent) to a null string. Every
// Client method uses it; the name is the one client_groups_test.go knows.
func clientGroupsNullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// clientIntsAs converts broker ids or partitions between kafka-go's int
// and the protocol's int32; nil stays nil (null on the wire where the field
// is nullable).
func clientIntsAs[To, From int | int32](s []From) []To {
	if s == nil {
		return nil
	}
	out := make([]To, len(s))
	for i, x := range s {
		out[i] = To(x)
	}
	return out
}

// clientBrokerTimeout is the time limit a request gives the broker, as
// kafka-go computes it: half of the Client's Timeout (or of what is left of
// the context's deadline, when sooner) so the answer has time to come back;
// def when the Client has no Timeout.
func (c *Client) clientBrokerTimeout(ctx context.Context, def time.Duration) time.Duration {
	timeout := c.Timeout
	if deadline, ok := ctx.Deadline(); ok {
		if left := time.Until(deadline); left < timeout {
			timeout = left
		}
	}
	if timeout > 0 {
		return timeout / 2
	}
	return def
}

// clientCluster is what one call learned of the cluster: its brokers and
// controller, from one metadata response.
type clientCluster struct {
	brokers    map[int32]Broker
	controller int32
	metadata   *protocol.MetadataResponse
}

// metadata reads the cluster's metadata from addr. topics nil asks for
// every topic; an empty non-nil slice for none. The answer goes through
// the process's metadata cache of addr (internal/metadata), shared with
// the Writers, Readers and other Clients of the same brokers: concurrent
// calls for the same topics send one request (one sent after the call
// began), and every answer keeps the cache current.
func (c *Client) metadata(ctx context.Context, addr net.Addr, topics []string) (*clientCluster, error) {
	rt := c.transport()
	if rt == nil {
		return nil, errors.New("kafka.(*Client): no Transport (DefaultTransport is nil)")
	}
	// Through RoundTrip to addr, as kafka-go's Client asks, on the
	// Transport's connection to addr.
	// Only an answer sent after the call began: it sees what the caller
	// changed before (a topic it created).
	start := time.Now()
	tc := newTransportCluster(nil, addr, rt)
	defer tc.cl.close()
	m, err := tc.read(ctx, topics, false, start)
	if err != nil {
		return nil, fmt.Errorf("reading metadata from %s: %w", addr, err)
	}
	cl := &clientCluster{brokers: make(map[int32]Broker, len(m.Brokers)), controller: m.ControllerID, metadata: m}
	for _, b := range m.Brokers {
		cl.brokers[b.NodeID] = makeBroker(b)
	}
	return cl, nil
}

// brokerAddr is the address to send a request to one broker.
func brokerAddr(b Broker) net.Addr {
	return TCP(net.JoinHostPort(b.Host, strconv.Itoa(b.Port)))
}

// toBroker sends req to the broker with the given id.
func (c *Client) toBroker(ctx context.Context, cl *clientCluster, id int32, req protocol.Request) (protocol.Response, error) {
	b, ok := cl.brokers[id]
	if !ok {
		return nil, fmt.Errorf("sending %s to broker %d: the broker is not in the cluster's metadata", req.Key(), id)
	}
	return c.roundTrip(ctx, brokerAddr(b), req)
}

// toController sends req to the cluster's controller, read from addr's
// metadata. (KRaft brokers forward admin requests to the active controller
// themselves; ZooKeeper brokers only accept them at the controller.)
func (c *Client) toController(ctx context.Context, addr net.Addr, req protocol.Request) (protocol.Response, error) {
	cl, err := c.metadata(ctx, addr, []string{})
	if err != nil {
		return nil, err
	}
	if _, known := cl.brokers[cl.controller]; !known {
		// No controller among the brokers (KRaft clusters may name none to
		// clients): any broker forwards the request.
		return c.roundTrip(ctx, addr, req)
	}
	return c.toBroker(ctx, cl, cl.controller, req)
}

// findCoordinator asks any broker of addr which broker coordinates key.
func (c *Client) findCoordinator(ctx context.Context, addr net.Addr, key string, keyType int8) (Broker, error) {
	req := &protocol.FindCoordinatorRequest{
		CoordinatorKey:  key, // v1-3
		KeyType:         keyType,
		CoordinatorKeys: []string{key}, // v4+
	}
	r, err := responseAs[*protocol.FindCoordinatorResponse](c.roundTrip(ctx, addr, req))
	if err != nil {
		return Broker{}, err
	}
	b := Broker{ID: int(r.NodeID), Host: r.Host, Port: int(r.Port)}
	code, msg := r.ErrorCode, r.ErrorMessage
	if len(r.Coordinators) > 0 { // v4+
		co := r.Coordinators[0]
		b = Broker{ID: int(co.NodeID), Host: co.Host, Port: int(co.Port)}
		code, msg = co.ErrorCode, co.ErrorMessage
	}
	if code != 0 {
		return Broker{}, fmt.Errorf("finding the coordinator of %q: %w", key, makeError(code, deref(msg)))
	}
	return b, nil
}

// sendToAny is roundTrip for a Client method, for requests any broker
// answers: addr is the request's Addr, else the Client's, and
// Client.Timeout applies.
func (c *Client) sendToAny(ctx context.Context, addr net.Addr, req protocol.Request) (protocol.Response, error) {
	addr, err := c.address(addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	return c.roundTrip(ctx, addr, req)
}

// sendToController is toController for a Client method: addr is the
// request's Addr, else the Client's, and Client.Timeout applies. Admin and
// security changes (topics, ACLs, quotas, SCRAM) are cluster metadata the
// controller owns; reading them at the same broker sees the writes made
// through it soonest.
func (c *Client) sendToController(ctx context.Context, addr net.Addr, req protocol.Request) (protocol.Response, error) {
	addr, err := c.address(addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	return c.toController(ctx, addr, req)
}

// sendToCoordinator is toCoordinator for a Client method: addr is the
// request's Addr, else the Client's, and Client.Timeout applies.
func (c *Client) sendToCoordinator(ctx context.Context, addr net.Addr, key string, keyType int8, req protocol.Request) (protocol.Response, error) {
	addr, err := c.address(addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	return c.toCoordinator(ctx, addr, key, keyType, req)
}

// toCoordinator sends req to the coordinator of a group (keyType 0) or of
// a transactional id (keyType 1).
func (c *Client) toCoordinator(ctx context.Context, addr net.Addr, key string, keyType int8, req protocol.Request) (protocol.Response, error) {
	b, err := c.findCoordinator(ctx, addr, key, keyType)
	if err != nil {
		return nil, err
	}
	return c.roundTrip(ctx, brokerAddr(b), req)
}
