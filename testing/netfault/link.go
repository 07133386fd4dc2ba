package netfault

import (
	"net"
	"sync"
	"time"
)

const (
	// chunkSize is the most one read takes from a source.
	chunkSize = 32 << 10
	// queueChunks bounds what one direction of one connection holds in flight (delayed chunks): at most
	// queueChunks*chunkSize bytes (2 MiB), enough for a 1 MB fetch response under a 1 s delay.
	queueChunks = 64
)

// link is one client connection and its connection to the broker.
type link struct {
	path   *path
	client net.Conn

	mu     sync.Mutex
	server net.Conn // nil until dialled
	closed bool
	done   chan struct{}
}

type chunk struct {
	data []byte
	due  time.Time
}

// run connects to the broker once the path forwards requests, then forwards both directions. A
// connection accepted on a black-holed path never reaches the broker: the client's connect succeeds (the
// proxy's kernel accepts it) and nothing answers, the nearest a user-space proxy comes to a lost SYN.
func (l *link) run() {
	pa := l.path
	if !pa.waitOpen(toBroker, l.done) {
		return
	}
	server, err := net.DialTimeout("tcp", pa.upstream, dialTimeout)
	if err != nil {
		l.reset() // the broker refused: so does the proxy
		return
	}
	pa.dialed.Add(1)
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		server.Close()
		return
	}
	l.server = server
	l.mu.Unlock()
	go l.pipe(toBroker, l.client, server, &pa.toBroker)
	go l.pipe(toClient, server, l.client, &pa.toClient)
}

// pipe forwards src to dst in direction d: a reader applies stalls, loss and the rate as it takes chunks
// from src; a writer holds each chunk until its delay has passed.
func (l *link) pipe(d direction, src, dst net.Conn, count interface{ Add(int64) int64 }) {
	pa := l.path
	queue := make(chan chunk, queueChunks)
	go func() {
		defer l.close()
		for c := range queue {
			if !l.sleep(time.Until(c.due)) || !pa.waitOpen(d, l.done) {
				return
			}
			// Counted before the write: the peer may read (and a test look at the
			// counters) before Write returns. What did not go out is taken back.
			count.Add(int64(len(c.data)))
			if n, err := dst.Write(c.data); err != nil {
				count.Add(-int64(len(c.data) - n))
				return
			}
		}
	}()
	defer close(queue)
	buf := make([]byte, chunkSize)
	for {
		if !pa.waitOpen(d, l.done) {
			return
		}
		n, err := src.Read(buf)
		if n > 0 {
			f, _ := pa.current()
			if !l.sleep(lossStall(n, f.Loss)) || !l.sleep(pa.buckets[d].take(n, f.Rate)) {
				return
			}
			select {
			case queue <- chunk{data: append([]byte(nil), buf[:n]...), due: time.Now().Add(f.Delay)}:
			case <-l.done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// sleep waits d unless the link closes first (false then).
func (l *link) sleep(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-l.done:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.done:
		return false
	}
}

func (l *link) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	close(l.done)
	server := l.server
	l.mu.Unlock()
	l.client.Close()
	if server != nil {
		server.Close()
	}
	pa := l.path
	pa.mu.Lock()
	delete(pa.links, l)
	pa.mu.Unlock()
}

// reset closes both connections with an RST (no linger) instead of a FIN.
func (l *link) reset() {
	l.mu.Lock()
	conns := []net.Conn{l.client, l.server}
	l.mu.Unlock()
	for _, c := range conns {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
	}
	l.close()
}
