package netfault

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// dialTimeout bounds the proxy's connect to a broker; a broker that is down refuses at once.
const dialTimeout = 5 * time.Second

// Proxy forwards one listening address per broker to that broker, applying each broker's Fault.
type Proxy struct {
	mu     sync.Mutex
	paths  map[int]*path
	closed bool
}

// New returns a Proxy with no broker; Add gives it one.
func New() *Proxy { return &Proxy{paths: map[int]*path{}} }

// Stats count what went through one broker's path since it was added.
type Stats struct {
	Accepted      int64 `json:"accepted"`        // client connections accepted
	Dialed        int64 `json:"dialed"`          // connections made to the broker
	Open          int64 `json:"open"`            // client connections open now
	BytesToBroker int64 `json:"bytes_to_broker"` // forwarded client → broker
	BytesToClient int64 `json:"bytes_to_client"` // forwarded broker → client
}

// BrokerStatus is one broker's path: addresses, the fault in force and the counters.
type BrokerStatus struct {
	ID       int    `json:"id"`
	Listen   string `json:"listen"`
	Upstream string `json:"upstream"`
	Fault    Fault  `json:"fault"`
	Stats    Stats  `json:"stats"`
}

// path is the proxy for one broker.
type path struct {
	id       int
	upstream string
	ln       net.Listener

	mu      sync.Mutex
	fault   Fault
	gen     int           // counts Set and Clear: a fault's timer clears only its own fault
	changed chan struct{} // closed when the fault changes
	timer   *time.Timer
	links   map[*link]struct{}
	buckets [2]bucket // by direction

	accepted, dialed, toBroker, toClient atomic.Int64
}

// Add listens on listen (host:port; port 0 picks one) for broker id's clients and forwards to upstream.
// It returns the address it listens on.
func (p *Proxy) Add(id int, listen, upstream string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return "", errors.New("netfault: proxy closed")
	}
	if _, dup := p.paths[id]; dup {
		return "", fmt.Errorf("netfault: broker %d added twice", id)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return "", fmt.Errorf("netfault: listening for broker %d: %w", id, err)
	}
	pa := &path{id: id, upstream: upstream, ln: ln, changed: make(chan struct{}), links: map[*link]struct{}{}}
	p.paths[id] = pa
	go pa.acceptLoop()
	return ln.Addr().String(), nil
}

func (p *Proxy) path(id int) (*path, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pa := p.paths[id]
	if pa == nil {
		return nil, fmt.Errorf("netfault: no broker %d", id)
	}
	return pa, nil
}

func (p *Proxy) all() []*path {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*path, 0, len(p.paths))
	for _, pa := range p.paths {
		out = append(out, pa)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// Set puts fault f on broker id's path, replacing the one in force. With f.For it clears itself.
func (p *Proxy) Set(id int, f Fault) error {
	if f.Loss < 0 || f.Loss >= 1 || f.Rate < 0 || f.Delay < 0 || f.For < 0 {
		return fmt.Errorf("netfault: invalid fault %+v", f)
	}
	pa, err := p.path(id)
	if err != nil {
		return err
	}
	pa.set(f)
	return nil
}

// Clear undoes the fault on broker id's path.
func (p *Proxy) Clear(id int) error {
	pa, err := p.path(id)
	if err != nil {
		return err
	}
	pa.set(Fault{})
	return nil
}

// ClearAll undoes every fault.
func (p *Proxy) ClearAll() {
	for _, pa := range p.all() {
		pa.set(Fault{})
	}
}

// Status returns every broker's path, by id.
func (p *Proxy) Status() []BrokerStatus {
	var out []BrokerStatus
	for _, pa := range p.all() {
		pa.mu.Lock()
		s := BrokerStatus{ID: pa.id, Listen: pa.ln.Addr().String(), Upstream: pa.upstream, Fault: pa.fault}
		s.Stats.Open = int64(len(pa.links))
		pa.mu.Unlock()
		s.Stats.Accepted, s.Stats.Dialed = pa.accepted.Load(), pa.dialed.Load()
		s.Stats.BytesToBroker, s.Stats.BytesToClient = pa.toBroker.Load(), pa.toClient.Load()
		out = append(out, s)
	}
	return out
}

// Close stops listening and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for _, pa := range p.all() {
		pa.ln.Close()
		pa.mu.Lock()
		if pa.timer != nil {
			pa.timer.Stop()
		}
		links := pa.linkList()
		pa.mu.Unlock()
		for _, l := range links {
			l.close()
		}
	}
	return nil
}

func (pa *path) set(f Fault) {
	pa.mu.Lock()
	pa.fault = f
	pa.gen++
	close(pa.changed)
	pa.changed = make(chan struct{})
	if pa.timer != nil {
		pa.timer.Stop()
		pa.timer = nil
	}
	if f.For > 0 {
		gen := pa.gen
		pa.timer = time.AfterFunc(f.For, func() {
			pa.mu.Lock()
			own := pa.gen == gen
			pa.mu.Unlock()
			if own {
				pa.set(Fault{})
			}
		})
	}
	var victims []*link
	if f.Reset || f.Silent {
		victims = pa.linkList()
	}
	pa.mu.Unlock()
	for _, l := range victims {
		l.reset()
	}
}

// linkList: pa.mu held.
func (pa *path) linkList() []*link {
	out := make([]*link, 0, len(pa.links))
	for l := range pa.links {
		out = append(out, l)
	}
	return out
}

// current returns the fault in force and a channel closed when it changes.
func (pa *path) current() (Fault, <-chan struct{}) {
	pa.mu.Lock()
	defer pa.mu.Unlock()
	return pa.fault, pa.changed
}

// waitOpen blocks while the fault stalls direction d; false when done closes first.
func (pa *path) waitOpen(d direction, done <-chan struct{}) bool {
	for {
		f, changed := pa.current()
		if !f.stalls(d) {
			return true
		}
		select {
		case <-changed:
		case <-done:
			return false
		}
	}
}

func (pa *path) acceptLoop() {
	for {
		c, err := pa.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // closed
		}
		pa.accepted.Add(1)
		l := &link{path: pa, client: c, done: make(chan struct{})}
		pa.mu.Lock()
		reset := pa.fault.Reset
		if !reset {
			pa.links[l] = struct{}{}
		}
		pa.mu.Unlock()
		if reset {
			l.reset()
			continue
		}
		go l.run()
	}
}
