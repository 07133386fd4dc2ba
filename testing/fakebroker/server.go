package fakebroker

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// maxRequestSize bounds a request frame, like Kafka's
// socket.request.max.bytes.
const maxRequestSize = 100 << 20

// Broker is one fake broker: a TCP listener on 127.0.0.1 answering Kafka
// requests from the cluster's shared model, unless a test replaced or
// scripted the answer.
type Broker struct {
	cluster *Cluster
	id      int32
	rack    string
	addr    string // host:port, kept across Stop/Start

	mu         sync.Mutex
	ln         net.Listener
	conns      map[net.Conn]struct{}
	stopped    chan struct{} // closed by Stop; releases held answers
	running    bool
	unnoticed  bool // stopped, but the cluster still takes it for alive
	wg         sync.WaitGroup
	maxVersion map[protocol.ApiKey]int16
	handlers   map[protocol.ApiKey]HandlerFunc
	scripts    map[protocol.ApiKey]map[int]Step
	lastScript map[protocol.ApiKey]int
	counts     map[protocol.ApiKey]int
	received   map[protocol.ApiKey][]Received
	waiters    []waiter
	fetchBytes int64
}

func newBroker(c *Cluster, id int32, rack string) (*Broker, error) {
	b := &Broker{
		cluster:    c,
		id:         id,
		rack:       rack,
		maxVersion: map[protocol.ApiKey]int16{},
		handlers:   map[protocol.ApiKey]HandlerFunc{},
		scripts:    map[protocol.ApiKey]map[int]Step{},
		lastScript: map[protocol.ApiKey]int{},
		counts:     map[protocol.ApiKey]int{},
		received:   map[protocol.ApiKey][]Received{},
	}
	if err := b.listen("127.0.0.1:0"); err != nil {
		return nil, err
	}
	b.addr = b.ln.Addr().String()
	return b, nil
}

// ID returns the broker id.
func (b *Broker) ID() int32 { return b.id }

// Rack returns the broker's rack ("" when none).
func (b *Broker) Rack() string { return b.rack }

// Addr returns host:port of the listener; it stays the same across
// Stop and Start.
func (b *Broker) Addr() string { return b.addr }

// Host and Port split Addr.
func (b *Broker) Host() string { h, _, _ := net.SplitHostPort(b.addr); return h }
func (b *Broker) Port() int32 {
	_, p, _ := net.SplitHostPort(b.addr)
	n, _ := strconv.Atoi(p)
	return int32(n)
}

// Running reports whether the broker is listening.
func (b *Broker) Running() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.running
}

// seenUp reports whether the cluster takes the broker for alive: running,
// or stopped unnoticed (StopUnnoticed).
func (b *Broker) seenUp() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.running || b.unnoticed
}

func (b *Broker) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.ln = ln
	b.conns = map[net.Conn]struct{}{}
	b.stopped = make(chan struct{})
	b.running, b.unnoticed = true, false
	b.wg.Add(1)
	b.mu.Unlock()
	go b.accept(ln)
	return nil
}

// Stop simulates the broker dying: the listener is closed, every
// connection is reset and held answers are dropped. It returns once no
// goroutine of the broker is left. Metadata from other brokers stops
// listing it; partition leadership is left as it is (use SetLeader).
func (b *Broker) Stop() {
	b.mu.Lock()
	if !b.running {
		b.mu.Unlock()
		return
	}
	b.running = false
	b.ln.Close()
	close(b.stopped)
	for c := range b.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0) // reset, as a crashed process would
		}
		c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
}

// StopUnnoticed stops the broker as Stop does, but the cluster does not
// notice: metadata keeps listing it in its partitions' ISRs and leaders
// keep naming it as a preferred read replica, as Kafka's do for a killed
// follower until replica.lag.time.max.ms drops it from the ISR.
func (b *Broker) StopUnnoticed() {
	b.Stop()
	b.mu.Lock()
	b.unnoticed = !b.running
	b.mu.Unlock()
}

// Start brings a stopped broker back on the same port.
func (b *Broker) Start() {
	if b.Running() {
		return
	}
	if err := b.listen(b.addr); err != nil {
		b.cluster.t.Fatalf("fakebroker: restarting broker %d on %s: %v", b.id, b.addr, err)
	}
}

func (b *Broker) accept(ln net.Listener) {
	defer b.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		if !b.running {
			b.mu.Unlock()
			c.Close()
			return
		}
		b.conns[c] = struct{}{}
		b.wg.Add(1)
		stopped := b.stopped
		b.mu.Unlock()
		go b.serve(c, stopped)
	}
}

// conn is the per-connection state.
type conn struct {
	net.Conn
	stopped       <-chan struct{}
	authenticated bool
	mechanism     string       // chosen by SaslHandshake
	exchange      SASLExchange // of a mechanism from Config.SASLMechanisms
	closeAfter    bool         // close once the answer is written (failed auth)
}

func (b *Broker) serve(nc net.Conn, stopped <-chan struct{}) {
	defer b.wg.Done()
	defer func() {
		b.mu.Lock()
		delete(b.conns, nc)
		b.mu.Unlock()
		nc.Close()
	}()
	defer func() {
		// A bug in a handler must fail the test, not crash the binary.
		if r := recover(); r != nil {
			b.cluster.t.Errorf("fakebroker: broker %d: panic serving a request: %v", b.id, r)
		}
	}()
	c := &conn{Conn: nc, stopped: stopped, authenticated: !b.cluster.requiresSASL()}
	for {
		// A fresh buffer per frame: decoded requests alias it, and tests
		// keep them (Received, handlers).
		body, err := protocol.ReadFrame(c, nil, maxRequestSize)
		if err != nil {
			return
		}
		if err := b.handleFrame(c, body); err != nil {
			return
		}
	}
}

// errClose makes serve close the connection.
var errClose = errors.New("close connection")

// handleFrame answers one request frame. An error closes the connection,
// which is what Kafka does with requests it cannot parse.
func (b *Broker) handleFrame(c *conn, body []byte) error {
	hdr, d, err := protocol.DecodeRequestHeader(body, protocol.FlexibleFrom)
	if err != nil {
		return err
	}
	n := b.count(hdr)
	req := protocol.NewRequest(hdr.Key)
	if req == nil {
		return fmt.Errorf("unknown api key %d", hdr.Key)
	}
	if vr, ok := b.Versions()[hdr.Key]; !ok || hdr.Version < vr.Min || hdr.Version > vr.Max {
		if hdr.Key == protocol.ApiVersions {
			// KIP-511: answer in v0 so the client can retry lower.
			resp := &protocol.ApiVersionsResponse{ErrorCode: errUnsupportedVersion, ApiKeys: b.apiKeys()}
			return b.write(c, hdr, resp, 0, false)
		}
		return fmt.Errorf("%s v%d not supported", hdr.Key, hdr.Version)
	}
	if err := req.Decode(d, hdr.Version); err != nil {
		return err
	}
	b.record(hdr, req)
	if !c.authenticated && hdr.Key != protocol.ApiVersions && hdr.Key != protocol.SaslHandshake && hdr.Key != protocol.SaslAuthenticate {
		return errClose // Kafka drops unauthenticated clients
	}

	step, scripted := b.step(hdr.Key, n)
	var resp protocol.Response
	var act Action
	switch {
	case scripted:
		if !hold(step.Action, c.stopped) {
			return errClose
		}
		if step.Close {
			return errClose
		}
		resp = step.Response
		if resp == nil && step.ErrorCode != 0 {
			if resp = errorResponse(req, step.ErrorCode); resp == nil {
				b.cluster.t.Errorf("fakebroker: Step.ErrorCode is not supported for %s; use Step.Response", hdr.Key)
				return errClose
			}
		}
		if resp == nil {
			resp, act = b.answer(c, req, hdr)
		}
		if step.Edit != nil && resp != nil {
			step.Edit(resp)
		}
	default:
		resp, act = b.answer(c, req, hdr)
	}
	if !hold(act, c.stopped) {
		return errClose
	}
	if act.Close {
		return errClose
	}
	if resp == nil {
		return nil // e.g. a produce with acks=0
	}
	if err := b.write(c, hdr, resp, hdr.Version, protocol.IsFlexible(req, hdr.Version)); err != nil {
		return err
	}
	if c.closeAfter {
		return errClose
	}
	return nil
}

// answer runs the test's replacement handler or the default one.
func (b *Broker) answer(c *conn, req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, Action) {
	b.mu.Lock()
	h := b.handlers[hdr.Key]
	b.mu.Unlock()
	if h != nil {
		return h(req, hdr)
	}
	return b.defaultAnswer(c, req, hdr)
}

func (b *Broker) write(c *conn, hdr protocol.RequestHeader, resp protocol.Response, v int16, flexible bool) error {
	if r, ok := resp.(*protocol.ApiVersionsResponse); ok && r.ErrorCode == errUnsupportedVersion {
		// Kafka answers an ApiVersions version it refuses in the v0 layout,
		// the one every client can read.
		v, flexible = 0, false
	}
	frame := protocol.AppendResponse(nil, resp, v, flexible, hdr.CorrelationID)
	if hdr.Key == protocol.Fetch {
		b.mu.Lock()
		b.fetchBytes += int64(len(frame))
		b.mu.Unlock()
	}
	_, err := c.Write(frame)
	return err
}

// hold waits for act.Wait, then act.Delay, unless the broker stops first;
// false means stopped.
func hold(act Action, stopped <-chan struct{}) bool {
	if act.Wait != nil {
		select {
		case <-act.Wait:
		case <-stopped:
			return false
		}
	}
	if act.Delay > 0 {
		t := time.NewTimer(act.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-stopped:
			return false
		}
	}
	return true
}
