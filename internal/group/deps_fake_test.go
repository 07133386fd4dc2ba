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

func (nopLog) Printf(string, ...interface{})              {}
func (nopLog) Errorf(string, ...interface{})              {}
func (nopLog) Commit(bool, string, int32, string, string) {}

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
