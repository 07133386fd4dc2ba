package group

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rackfetch/kafka-go/protocol"
)

// codeError is the tests' stand-in for the client's error type: a broker's
// error code.
type codeError int16

func (e codeError) Error() string { return fmt.Sprintf("error code %d", int16(e)) }

// fakeErrors classifies codeErrors as the client classifies its Errors.
type fakeErrors struct{}

func (fakeErrors) FromCode(code int16, message string) error {
	if code == 0 {
		return nil
	}
	if message != "" {
		return fmt.Errorf("%w: %s", codeError(code), message)
	}
	return codeError(code)
}
func (fakeErrors) Is(err error, code int16) bool { return errors.Is(err, codeError(code)) }
func (fakeErrors) Kafka(err error) bool {
	var e codeError
	return errors.As(err, &e)
}
func (fakeErrors) Temporary(err error) bool { return false }
func (fakeErrors) Permanent(err error) bool { return false }
func (fakeErrors) JoinFatal(err error) bool { return false }

// scriptConn answers each request with the next response its handler
// gives, at version v, and records the requests.
type scriptConn struct {
	v      int16
	handle func(req protocol.Request) (protocol.Response, error)

	mu     sync.Mutex
	reqs   []protocol.Request
	closed bool
}

func (c *scriptConn) RoundTrip(ctx context.Context, req protocol.Request, limit int16) (protocol.Response, int16, error) {
	c.mu.Lock()
	c.reqs = append(c.reqs, req)
	c.mu.Unlock()
	resp, err := c.handle(req)
	return resp, c.v, err
}

func (c *scriptConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return nil
}

func (c *scriptConn) Broken() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

func (c *scriptConn) requests() []protocol.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]protocol.Request(nil), c.reqs...)
}

// nopLog drops log lines.
type nopLog struct{}

func (nopLog) Printf(string, ...interface{})                              {}
func (nopLog) Errorf(string, ...interface{})                              {}
func (nopLog) Commit(bool, string, int32, string, string, ...interface{}) {}

// newTestGroup is a Group that runs nothing: its methods are called
// directly.
func newTestGroup(cfg Config, deps Deps) *Group {
	if deps.Errors == nil {
		deps.Errors = fakeErrors{}
	}
	if deps.Log == nil {
		deps.Log = nopLog{}
	}
	g := &Group{cfg: cfg, deps: deps, done: make(chan struct{}), coordMu: make(chan struct{}, 1)}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	return g
}

// fakeBalancers offers names; Assign gives every partition of topics to
// the first member.
type fakeBalancers struct {
	names      []string
	partitions map[string]int
}

func (b *fakeBalancers) Protocols() ([]Protocol, error) {
	out := make([]Protocol, len(b.names))
	for i, n := range b.names {
		out[i] = Protocol{Name: n}
	}
	return out, nil
}

func (b *fakeBalancers) Assign(protocol string, members []Member, topics []string) (map[string]map[string][]int, bool) {
	out := map[string]map[string][]int{}
	for _, m := range members {
		out[m.ID] = map[string][]int{}
	}
	for _, t := range topics {
		for p := 0; p < b.partitions[t]; p++ {
			out[members[0].ID][t] = append(out[members[0].ID][t], p)
		}
	}
	return out, true
}

// fakeCluster dials scriptConns that coordinator answers; the first
// failDials dials (all, when 0) fail with dialErr when it is set.
type fakeCluster struct {
	coordinator func(req protocol.Request) (protocol.Response, error)
	partitions  map[string]int

	mu        sync.Mutex
	dials     int
	dialErr   error
	failDials int
	answered  []error
}

func (c *fakeCluster) setDialErr(err error) {
	c.mu.Lock()
	c.dialErr = err
	c.mu.Unlock()
}

func (c *fakeCluster) dialCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dials
}

func (c *fakeCluster) DialCoordinator(ctx context.Context) (CoordinatorConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dials++
	if c.dialErr != nil && (c.failDials == 0 || c.dials <= c.failDials) {
		return nil, c.dialErr
	}
	handle := c.coordinator
	if handle == nil {
		handle = func(protocol.Request) (protocol.Response, error) { return nil, errors.New("no answer") }
	}
	return &scriptConn{v: 4, handle: handle}, nil
}

func (c *fakeCluster) CoordinatorAnswered(conn CoordinatorConn, err error) {
	c.mu.Lock()
	c.answered = append(c.answered, err)
	c.mu.Unlock()
}

func (c *fakeCluster) Refresh(ctx context.Context, topics ...string) error { return nil }

func (c *fakeCluster) PartitionCount(topic string) (int, bool) {
	n, ok := c.partitions[topic]
	return n, ok
}

func (c *fakeCluster) LeaderConn(ctx context.Context, topic string, partition int) (Conn, error) {
	return nil, errors.New("no leader")
}

func (c *fakeCluster) DropConn(Conn) {}

// fakeFailures remembers the last failure set.
type fakeFailures struct {
	mu  sync.Mutex
	err error
}

func (f *fakeFailures) Set(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

func (f *fakeFailures) Clear() { f.Set(nil) }

func (f *fakeFailures) last() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *fakeFailures) WithCause(err error) error { return err }
