package integration

// apiSpy: the requests a Dialer's connections send, read from the plaintext byte stream (API key, frame
// size, when, on which connection, and the whole frame of the API keys asked for), and a crash that cuts every connection and fails new dials, like a process that died.

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"time"

	kafka "github.com/rackfetch/kafka-go"
)

// apiSpy records the requests that connections of its dialer send.
type apiSpy struct {
	// keep lists the API keys whose frames are kept whole; set it before dialing.
	keep map[int16]bool

	mu      sync.Mutex
	sent    []sentRequest
	crashed bool
	conns   map[*spyConn]bool
	dialed  int
}

type sentRequest struct {
	apiKey int16
	size   int // bytes after the size prefix
	at     time.Time
	conn   int    // the connection's number, in the order of the dials
	addr   string // the address the connection dialed
	frame  []byte // after the size prefix, for the API keys in keep
}

// dialer returns d with a DialFunc whose connections report to s.
func (s *apiSpy) dialer(d *kafka.Dialer) *kafka.Dialer {
	d.DialFunc = s.dial
	return d
}

var errSpyCrashed = errors.New("apiSpy: a crashed client dials nothing")

func (s *apiSpy) dial(ctx context.Context, network, address string) (net.Conn, error) {
	s.mu.Lock()
	crashed := s.crashed
	s.mu.Unlock()
	if crashed {
		return nil, errSpyCrashed
	}
	nc, err := (&net.Dialer{}).DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.crashed {
		nc.Close()
		return nil, errSpyCrashed
	}
	c := &spyConn{Conn: nc, spy: s, id: s.dialed, addr: address}
	s.dialed++
	if s.conns == nil {
		s.conns = map[*spyConn]bool{}
	}
	s.conns[c] = true
	return c, nil
}

// crash cuts every connection and fails the dials that follow.
func (s *apiSpy) crash() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.crashed = true
	for c := range s.conns {
		c.Conn.Close()
	}
}

func (s *apiSpy) reset() {
	s.mu.Lock()
	s.sent = nil
	s.mu.Unlock()
}

// requests returns what was sent with apiKey.
func (s *apiSpy) requests(apiKey int16) []sentRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sentRequest
	for _, r := range s.sent {
		if r.apiKey == apiKey {
			out = append(out, r)
		}
	}
	return out
}

// count returns how many requests with apiKey (any: -1) were sent in [from, to).
func (s *apiSpy) count(apiKey int16, from, to time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.sent {
		if (apiKey < 0 || r.apiKey == apiKey) && !r.at.Before(from) && r.at.Before(to) {
			n++
		}
	}
	return n
}

// last returns when the last request with apiKey before t was sent (zero: none).
func (s *apiSpy) last(apiKey int16, t time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var at time.Time
	for _, r := range s.sent {
		if r.apiKey == apiKey && r.at.Before(t) {
			at = r.at
		}
	}
	return at
}

type spyConn struct {
	net.Conn
	spy  *apiSpy
	id   int
	addr string

	mu  sync.Mutex
	buf []byte // the start of a request not yet written whole
}

func (c *spyConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = append(c.buf, p...)
	for len(c.buf) >= 6 {
		size := int(binary.BigEndian.Uint32(c.buf))
		if len(c.buf) < 4+size {
			break
		}
		r := sentRequest{apiKey: int16(binary.BigEndian.Uint16(c.buf[4:])), size: size, at: time.Now(), conn: c.id, addr: c.addr}
		if c.spy.keep[r.apiKey] {
			r.frame = append([]byte(nil), c.buf[4:4+size]...)
		}
		c.spy.mu.Lock()
		c.spy.sent = append(c.spy.sent, r)
		c.spy.mu.Unlock()
		c.buf = c.buf[4+size:]
	}
	return c.Conn.Write(p)
}

func (c *spyConn) Close() error {
	c.spy.mu.Lock()
	delete(c.spy.conns, c)
	c.spy.mu.Unlock()
	return c.Conn.Close()
}
