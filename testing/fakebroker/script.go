package fakebroker

import (
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// HandlerFunc answers a request in place of the default behaviour. It may
// call Broker.Default to start from the default answer.
type HandlerFunc func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, Action)

// Action says what to do besides sending the response.
type Action struct {
	// Close closes the connection instead of answering.
	Close bool
	// Wait holds the answer until Wait is closed (or receives). A stopped
	// broker drops held answers and closes their connections.
	Wait <-chan struct{}
	// Delay holds the answer this long (after Wait), as a slow or
	// overloaded broker would. A stopped broker drops it too.
	Delay time.Duration
}

// Step is a one-shot answer to the Nth request of a kind (see Script).
// Fields combine: Wait and Delay first, then Close, then the answer is built from
// Response, else ErrorCode, else the handler (test's or default), and Edit
// changes it last.
type Step struct {
	Action
	// Response is sent as is.
	Response protocol.Response
	// ErrorCode answers with this code in every topic, partition or group
	// the request names (the top-level code for requests without any).
	ErrorCode int16
	// Edit changes the answer before it is sent, e.g. PreferReplica.
	Edit func(protocol.Response)
}

// Received is one request a broker decoded.
type Received struct {
	Header  protocol.RequestHeader
	Request protocol.Request
}

type waiter struct {
	key protocol.ApiKey
	n   int
	ch  chan struct{}
}

// Handle replaces the broker's handler for key; nil restores the default.
func (b *Broker) Handle(key protocol.ApiKey, h HandlerFunc) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if h == nil {
		delete(b.handlers, key)
		return
	}
	b.handlers[key] = h
}

// Default returns the answer the broker would give by default, for use in
// handlers that change it.
func (b *Broker) Default(req protocol.Request, hdr protocol.RequestHeader) protocol.Response {
	b.mu.Lock()
	stopped := b.stopped
	b.mu.Unlock()
	resp, _ := b.defaultAnswer(&conn{stopped: stopped, authenticated: true}, req, hdr)
	return resp
}

// Script makes the broker answer the nth request of kind key (counting from
// 1 over the broker's life, the same count Requests returns) with s.
// Scripting a request already received has no effect.
func (b *Broker) Script(key protocol.ApiKey, n int, s Step) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.scripts[key] == nil {
		b.scripts[key] = map[int]Step{}
	}
	b.scripts[key][n] = s
	if n > b.lastScript[key] {
		b.lastScript[key] = n
	}
}

// ScriptNext queues s for the next request of kind key that is neither
// received nor scripted yet, and returns its ordinal.
func (b *Broker) ScriptNext(key protocol.ApiKey, s Step) int {
	b.mu.Lock()
	n := b.counts[key]
	if l := b.lastScript[key]; l > n {
		n = l
	}
	b.mu.Unlock()
	b.Script(key, n+1, s)
	return n + 1
}

func (b *Broker) step(key protocol.ApiKey, n int) (Step, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.scripts[key][n]
	if ok {
		delete(b.scripts[key], n)
	}
	return s, ok
}

// count registers a request and returns its ordinal for its key.
func (b *Broker) count(hdr protocol.RequestHeader) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.counts[hdr.Key]++
	n := b.counts[hdr.Key]
	kept := b.waiters[:0]
	for _, w := range b.waiters {
		if w.key == hdr.Key && n >= w.n {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	b.waiters = kept
	return n
}

// maxReceived bounds the requests kept per key: a consumer polling a fake
// that never waits sends many.
const maxReceived = 1024

func (b *Broker) record(hdr protocol.RequestHeader, req protocol.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	rs := append(b.received[hdr.Key], Received{Header: hdr, Request: req})
	if len(rs) > maxReceived {
		rs = append(rs[:0], rs[len(rs)-maxReceived/2:]...)
	}
	b.received[hdr.Key] = rs
}

// Requests returns how many requests of kind key the broker has received
// (including ones it could not decode or refused).
func (b *Broker) Requests(key protocol.ApiKey) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.counts[key]
}

// Received returns the decoded requests of kind key, oldest first. Past
// 1024 the oldest are dropped (the latest 512 at least are kept).
func (b *Broker) Received(key protocol.ApiKey) []Received {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Received(nil), b.received[key]...)
}

// Await returns a channel closed once the broker has received n requests
// of kind key: tests synchronise on it instead of sleeping.
func (b *Broker) Await(key protocol.ApiKey, n int) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch := make(chan struct{})
	if b.counts[key] >= n {
		close(ch)
		return ch
	}
	b.waiters = append(b.waiters, waiter{key: key, n: n, ch: ch})
	return ch
}

// FetchBytes returns the bytes (frames, size included) the broker has sent
// in Fetch responses.
func (b *Broker) FetchBytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fetchBytes
}

// SetMaxVersion makes the broker advertise and accept key only up to
// version v, as an older broker would; v < 0 removes the API.
func (b *Broker) SetMaxVersion(key protocol.ApiKey, v int16) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.maxVersion[key] = v
}

// Versions returns the API versions the broker advertises.
func (b *Broker) Versions() protocol.Versions {
	vs := protocol.Implemented()
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, max := range b.maxVersion {
		r, ok := vs[k]
		switch {
		case !ok:
		case max < r.Min:
			delete(vs, k)
		case max < r.Max:
			r.Max = max
			vs[k] = r
		}
	}
	return vs
}

// PreferReplica is a Step.Edit for Fetch answers that forges a KIP-392
// redirect: every partition without an error names broker id as its
// preferred read replica and carries no records.
func PreferReplica(id int32) func(protocol.Response) {
	return func(resp protocol.Response) {
		fr, ok := resp.(*protocol.FetchResponse)
		if !ok {
			return
		}
		for i := range fr.Topics {
			for j := range fr.Topics[i].Partitions {
				if p := &fr.Topics[i].Partitions[j]; p.ErrorCode == errNone {
					p.PreferredReadReplica, p.Records = id, nil
				}
			}
		}
	}
}
