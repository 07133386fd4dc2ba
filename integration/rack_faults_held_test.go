package integration

import (
	"context"
	"net"
	"sync"
	"time"
)

// rfHeld records, per broker address, when a request of the producer's
// was at the broker unanswered: from its first byte written to the first
// byte of the answer. A produce held there is the broker's time, not the
// client's: on Kafka 2.8 a leader whose ISR the metadata already shows
// without a killed follower kept an acks=all write for 4.8 s more, until
// that follower rejoined (the leader still counted it until the
// controller confirmed the shrink), with the Writer's request in flight
// at the right leader all along.
type rfHeld struct {
	mu     sync.Mutex
	since  map[*rfHeldConn]time.Time // requests in flight
	done   map[string][][2]time.Time // answered ones, per address
	dialer net.Dialer
}

// rfHeldKept bounds the answered requests kept per address.
const rfHeldKept = 4096

func newRFHeld() *rfHeld {
	return &rfHeld{since: map[*rfHeldConn]time.Time{}, done: map[string][][2]time.Time{}}
}

func (h *rfHeld) dial(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := h.dialer.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &rfHeldConn{Conn: c, h: h, addr: address}, nil
}

// rfHeldAfter is how long a request must have been at the broker before
// the rest of its wait counts as the broker's: requests answered in
// milliseconds, as nearly all are, never count, and a broker slow to answer
// is still charged to the client for this long.
const rfHeldAfter = time.Second

// heldAt reports whether a request to address had been unanswered for
// rfHeldAfter or more at t.
func (h *rfHeld) heldAt(address string, t time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c, since := range h.since {
		if c.addr == address && !t.Before(since.Add(rfHeldAfter)) {
			return true
		}
	}
	for _, iv := range h.done[address] {
		if !t.Before(iv[0].Add(rfHeldAfter)) && !t.After(iv[1]) {
			return true
		}
	}
	return false
}

type rfHeldConn struct {
	net.Conn
	h    *rfHeld
	addr string
}

func (c *rfHeldConn) Write(p []byte) (int, error) {
	h := c.h
	h.mu.Lock()
	if _, ok := h.since[c]; !ok {
		h.since[c] = time.Now()
	}
	h.mu.Unlock()
	return c.Conn.Write(p)
}

func (c *rfHeldConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 || err != nil {
		c.answered()
	}
	return n, err
}

func (c *rfHeldConn) Close() error {
	c.answered()
	return c.Conn.Close()
}

// answered closes the interval of the request in flight, if any.
func (c *rfHeldConn) answered() {
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	since, ok := h.since[c]
	if !ok {
		return
	}
	delete(h.since, c)
	// Only what can matter for a stall.
	if now := time.Now(); now.Sub(since) > rfHeldAfter && len(h.done[c.addr]) < rfHeldKept {
		h.done[c.addr] = append(h.done[c.addr], [2]time.Time{since, now})
	}
}
