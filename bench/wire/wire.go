// Package wire counts what Kafka clients send and receive at their sockets,
// per broker address: dials, request frames (by API key) and bytes read.
// Every client under test dials through Wire.Dial, so every client is
// counted the same way, below its own accounting.
package wire

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
)

// Requests are counted where they leave the client: the connections split
// what the client writes into Kafka frames (a 4-byte size, then the request
// header's API key).

// Wire counts dials, requests and bytes read per broker address.
type Wire struct {
	mu    sync.Mutex
	addrs map[string]*addrCounts
	// OnRequest, when set before the first Dial, is told of every request
	// frame as it leaves: for looking into when a client sends what.
	OnRequest func(addr string, api int16)
}

type addrCounts struct {
	dials, failedDials atomic.Int64
	requests           atomic.Int64
	bytesRead          atomic.Int64
	byAPI              [80]atomic.Int64 // by API key; keys past the array count in requests only
	open               atomic.Int64
}

// New returns a Wire with nothing counted.
func New() *Wire { return &Wire{addrs: map[string]*addrCounts{}} }

func (w *Wire) counts(addr string) *addrCounts {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.addrs[addr]
	if c == nil {
		c = &addrCounts{}
		w.addrs[addr] = c
	}
	return c
}

// Dial is a DialContext-shaped function for every client.
func (w *Wire) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c := w.counts(addr)
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	c.dials.Add(1)
	if err != nil {
		c.failedDials.Add(1)
		return nil, err
	}
	c.open.Add(1)
	return &countingConn{Conn: conn, c: c, addr: addr, onRequest: w.OnRequest}, nil
}

// Snapshot is the counts at one moment, by broker address.
type Snapshot map[string]AddrSnapshot

// AddrSnapshot is one address's counts.
type AddrSnapshot struct {
	Dials       int64           `json:"dials"`
	FailedDials int64           `json:"failed_dials"`
	Requests    int64           `json:"requests"`
	BytesRead   int64           `json:"bytes_read,omitempty"`
	ByAPI       map[int16]int64 `json:"by_api,omitempty"`
	Open        int64           `json:"open"`
}

// Snapshot returns the counts so far.
func (w *Wire) Snapshot() Snapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := Snapshot{}
	for addr, c := range w.addrs {
		a := AddrSnapshot{Dials: c.dials.Load(), FailedDials: c.failedDials.Load(), Requests: c.requests.Load(),
			BytesRead: c.bytesRead.Load(), Open: c.open.Load(), ByAPI: map[int16]int64{}}
		for k := range c.byAPI {
			if n := c.byAPI[k].Load(); n > 0 {
				a.ByAPI[int16(k)] = n
			}
		}
		s[addr] = a
	}
	return s
}

// Sub returns s minus an earlier snapshot (Open stays s's).
func (s Snapshot) Sub(before Snapshot) Snapshot {
	d := Snapshot{}
	for addr, a := range s {
		b := before[addr]
		x := AddrSnapshot{Dials: a.Dials - b.Dials, FailedDials: a.FailedDials - b.FailedDials,
			Requests: a.Requests - b.Requests, BytesRead: a.BytesRead - b.BytesRead, Open: a.Open, ByAPI: map[int16]int64{}}
		for k, n := range a.ByAPI {
			if n-b.ByAPI[k] > 0 {
				x.ByAPI[k] = n - b.ByAPI[k]
			}
		}
		d[addr] = x
	}
	return d
}

// Total adds up every address.
func (s Snapshot) Total() AddrSnapshot {
	t := AddrSnapshot{ByAPI: map[int16]int64{}}
	for _, a := range s {
		t.Dials += a.Dials
		t.FailedDials += a.FailedDials
		t.Requests += a.Requests
		t.BytesRead += a.BytesRead
		t.Open += a.Open
		for k, n := range a.ByAPI {
			t.ByAPI[k] += n
		}
	}
	return t
}

// countingConn counts the request frames written through it and the bytes
// read from it. Frames may be
// written in pieces: it tracks how much of the current frame is left.
type countingConn struct {
	net.Conn
	c         *addrCounts
	addr      string
	onRequest func(addr string, api int16)
	left      int64   // bytes of the current frame not yet written
	head      [6]byte // the next frame's size and API key, as far as written
	headN     int
	closed    atomic.Bool
}

func (cc *countingConn) Write(p []byte) (int, error) {
	n, err := cc.Conn.Write(p)
	cc.count(p[:n])
	return n, err
}

func (cc *countingConn) Read(p []byte) (int, error) {
	n, err := cc.Conn.Read(p)
	cc.c.bytesRead.Add(int64(n))
	return n, err
}

func (cc *countingConn) count(p []byte) {
	for len(p) > 0 {
		if cc.left > 0 {
			k := min(int64(len(p)), cc.left)
			cc.left -= k
			p = p[k:]
			continue
		}
		k := copy(cc.head[cc.headN:], p)
		cc.headN += k
		p = p[k:]
		if cc.headN < len(cc.head) {
			return
		}
		size := int64(binary.BigEndian.Uint32(cc.head[:4]))
		api := binary.BigEndian.Uint16(cc.head[4:6])
		cc.c.requests.Add(1)
		if int(api) < len(cc.c.byAPI) {
			cc.c.byAPI[api].Add(1)
		}
		if cc.onRequest != nil {
			cc.onRequest(cc.addr, int16(api))
		}
		cc.left = size - 2 // the API key is part of the frame
		cc.headN = 0
	}
}

func (cc *countingConn) Close() error {
	if cc.closed.CompareAndSwap(false, true) {
		cc.c.open.Add(-1)
	}
	return cc.Conn.Close()
}
