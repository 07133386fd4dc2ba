package netfault

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// echoServer answers every byte it reads with the same byte and counts what it read.
type echoServer struct {
	ln   net.Listener
	mu   sync.Mutex
	read int
	got  chan struct{} // a byte arrived
}

func newEchoServer(t *testing.T) *echoServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &echoServer{ln: ln, got: make(chan struct{}, 1)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						s.mu.Lock()
						s.read += n
						s.mu.Unlock()
						select {
						case s.got <- struct{}{}:
						default:
						}
						if _, err := c.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return s
}

func (s *echoServer) bytesRead() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read
}

// newTestProxy is a proxy for broker 1 in front of an echo server.
func newTestProxy(t *testing.T) (*Proxy, *echoServer, string) {
	up := newEchoServer(t)
	p := New()
	t.Cleanup(func() { p.Close() })
	addr, err := p.Add(1, "127.0.0.1:0", up.ln.Addr().String())
	require.NoError(t, err)
	return p, up, addr
}

func dial(t *testing.T, addr string) net.Conn {
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// connected dials addr and makes one round trip ("a") through the proxy.
func connected(t *testing.T, addr string) net.Conn {
	c := dial(t, addr)
	_, err := roundTrip(c, "a", 2*time.Second)
	require.NoError(t, err, "a round trip through the proxy")
	return c
}

// roundTrip writes msg and reads its echo within d.
func roundTrip(c net.Conn, msg string, d time.Duration) (string, error) {
	c.SetDeadline(time.Now().Add(d))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	buf := make([]byte, len(msg))
	_, err := io.ReadFull(c, buf)
	return string(buf), err
}

// requireNoAnswer: msg written on c gets no answer within 300 ms.
func requireNoAnswer(t *testing.T, c net.Conn, msg, what string) {
	t.Helper()
	_, err := roundTrip(c, msg, 300*time.Millisecond)
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "%s: %v", what, err)
}

func stats(p *Proxy) Stats { return p.Status()[0].Stats }

func TestProxyForwards(t *testing.T) {
	p, _, addr := newTestProxy(t)
	c := dial(t, addr)
	got, err := roundTrip(c, "hello", 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "hello", got)
	s := stats(p)
	assert.Equal(t, Stats{Accepted: 1, Dialed: 1, Open: 1, BytesToBroker: 5, BytesToClient: 5}, s)
}

// A black hole holds the bytes (neither lost nor forwarded) and reaches no broker with new connections;
// Clear lets them through.
func TestProxyBlackhole(t *testing.T) {
	p, up, addr := newTestProxy(t)
	c := connected(t, addr)

	require.NoError(t, p.Set(1, Fault{Blackhole: true}))
	requireNoAnswer(t, c, "b", "an answer through a black hole")
	fresh := dial(t, addr) // accepted by the kernel, never forwarded
	requireNoAnswer(t, fresh, "c", "a new connection answered through a black hole")
	assert.Equal(t, 1, up.bytesRead(), "bytes reached the broker through a black hole")
	assert.EqualValues(t, 1, stats(p).Dialed, "a connection made to the broker through a black hole")

	require.NoError(t, p.Clear(1))
	buf := make([]byte, 1)
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := io.ReadFull(c, buf)
	require.NoError(t, err, "the held byte after Clear")
	assert.Equal(t, "b", string(buf))
	fresh.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err = io.ReadFull(fresh, buf)
	require.NoError(t, err, "the new connection's byte after Clear")
	assert.Equal(t, "c", string(buf))
}

func TestProxyDropReplies(t *testing.T) {
	p, up, addr := newTestProxy(t)
	c := dial(t, addr)
	require.NoError(t, p.Set(1, Fault{DropReplies: true}))
	requireNoAnswer(t, c, "req", "a reply on a one-way path")
	assert.Equal(t, 3, up.bytesRead(), "the request must reach the broker")
}

func TestProxyLatency(t *testing.T) {
	p, _, addr := newTestProxy(t)
	c := dial(t, addr)
	require.NoError(t, p.Set(1, Fault{Delay: 100 * time.Millisecond}))
	start := time.Now()
	got, err := roundTrip(c, "x", 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "x", got)
	rtt := time.Since(start)
	assert.GreaterOrEqual(t, rtt, 200*time.Millisecond, "a round trip gains the delay each way")
	assert.Less(t, rtt, time.Second)
}

func TestProxyRate(t *testing.T) {
	p, _, addr := newTestProxy(t)
	c := dial(t, addr)
	const rate = 1 << 20 // bytes/s each way
	require.NoError(t, p.Set(1, Fault{Rate: rate}))
	msg := make([]byte, 512<<10)
	start := time.Now()
	go c.Write(msg)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.ReadFull(c, make([]byte, len(msg)))
	require.NoError(t, err)
	took := time.Since(start)
	// Half a second of data each way, the two directions pipelined, less one burst.
	assert.GreaterOrEqual(t, took, 400*time.Millisecond)
	assert.Less(t, took, 2*time.Second)
}

func TestProxyReset(t *testing.T) {
	p, up, addr := newTestProxy(t)
	c := connected(t, addr)
	require.NoError(t, p.Set(1, Fault{Reset: true}))
	_, err := roundTrip(c, "b", 2*time.Second)
	assert.True(t, errors.Is(err, syscall.ECONNRESET), "an open connection after reset: %v", err)
	// A new connection is reset on accept: the dial itself may see the RST.
	fresh, err := net.Dial("tcp", addr)
	if err == nil {
		defer fresh.Close()
		_, err = roundTrip(fresh, "c", 2*time.Second)
	}
	assert.True(t, errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE), "a new connection after reset: %v", err)
	assert.Equal(t, 1, up.bytesRead())
}

func TestProxySilent(t *testing.T) {
	p, up, addr := newTestProxy(t)
	c := connected(t, addr)
	require.NoError(t, p.Set(1, Fault{Silent: true}))
	_, err := roundTrip(c, "b", 2*time.Second)
	assert.True(t, errors.Is(err, syscall.ECONNRESET), "an open connection of a silent peer: %v", err)
	fresh := dial(t, addr)
	requireNoAnswer(t, fresh, "c", "a silent peer answered")
	assert.Equal(t, 1, up.bytesRead())
	assert.EqualValues(t, 1, stats(p).Dialed)
}

func TestProxyFaultClearsItself(t *testing.T) {
	p, _, addr := newTestProxy(t)
	c := dial(t, addr)
	require.NoError(t, p.Set(1, Fault{Blackhole: true, For: 200 * time.Millisecond}))
	start := time.Now()
	got, err := roundTrip(c, "x", 3*time.Second)
	require.NoError(t, err, "the fault did not clear itself")
	assert.Equal(t, "x", got)
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
	assert.Equal(t, Fault{}, p.Status()[0].Fault)
	// A later fault is not cleared by an earlier one's timer.
	require.NoError(t, p.Set(1, Fault{Delay: time.Millisecond, For: 50 * time.Millisecond}))
	require.NoError(t, p.Set(1, Fault{Delay: 2 * time.Millisecond}))
	deadline := time.NewTimer(200 * time.Millisecond)
	<-deadline.C // past the first fault's timer: the second must remain
	assert.Equal(t, Fault{Delay: 2 * time.Millisecond}, p.Status()[0].Fault)
}

func TestControlAPI(t *testing.T) {
	p, _, addr := newTestProxy(t)
	srv := httptest.NewServer(p.Handler())
	defer srv.Close()
	cl := &Client{Addr: srv.Listener.Addr().String()}
	ctx := context.Background()
	before := goleak.IgnoreCurrent()
	require.NoError(t, cl.Set(ctx, 1, Fault{Delay: 300 * time.Millisecond, For: time.Minute}))
	st, err := cl.Status(ctx)
	require.NoError(t, err)
	require.Len(t, st, 1)
	assert.Equal(t, addr, st[0].Listen)
	assert.Equal(t, Fault{Delay: 300 * time.Millisecond, For: time.Minute}, st[0].Fault)
	assert.Error(t, cl.Set(ctx, 7, Fault{Blackhole: true}), "an unknown broker")
	require.NoError(t, cl.Clear(ctx, 0))
	st, err = cl.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, Fault{}, st[0].Fault)
	// The control proxy outlives a test: the Client keeps no connection (nor its goroutines) to it.
	goleak.VerifyNone(t, before)
}
