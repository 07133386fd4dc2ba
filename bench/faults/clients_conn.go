package faults

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	kafka "github.com/rackfetch/kafka-go"
)

// ---------------------------------------------------------------------------
// A Conn user: what a program built on kafka.Conn does to read from its
// rack, as Batch.PreferredReadReplica documents it. One goroutine per
// partition dials the leader with Dialer.RackID, follows the replica the
// leader names (SeekDontCheck), and on any error closes the connection,
// reports the error (it is the application's) and starts again at the
// leader. No group: the offsets live in memory, from the first one. The
// library routes nothing for it, so its rows show what Conn leaves to its
// user.

type connConsumer struct {
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu    sync.Mutex
	from  map[int]int         // partition -> broker of its open connection
	conns map[int]*kafka.Conn // open connections, closed by close
}

// connReadTimeout bounds a fetch: the read deadline a Conn user sets.
var connReadTimeout = 10 * time.Second

func startConn(cfg consumerConfig) (consumer, error) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &connConsumer{stop: cancel, from: map[int]int{}, conns: map[int]*kafka.Conn{}}
	d := &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, DialFunc: cfg.wire.Dial, RackID: cfg.rack,
		ClientID: "bench-faults-conn"}
	for p := 0; p < Partitions; p++ {
		c.wg.Add(1)
		go func(p int) {
			defer c.wg.Done()
			c.read(ctx, d, cfg, p)
		}(p)
	}
	return c, nil
}

// read consumes partition p until ctx ends.
func (c *connConsumer) read(ctx context.Context, d *kafka.Dialer, cfg consumerConfig, p int) {
	next := int64(-1) // the first offset, once the leader has said it
	preferred := -1   // the replica the leader named, -1: the leader
	seed := p         // the bootstrap address to ask next
	for ctx.Err() == nil {
		conn, err := c.dial(ctx, d, cfg, p, &seed, preferred, &next)
		if err != nil {
			if ctx.Err() == nil {
				cfg.rec.appError(fmt.Errorf("partition %d: %w", p, err))
				preferred = -1
				backoff(ctx)
			}
			continue
		}
		for ctx.Err() == nil {
			_ = conn.SetReadDeadline(time.Now().Add(connReadTimeout))
			batch := conn.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 500 * time.Millisecond})
			for {
				m, err := batch.ReadMessage()
				if err != nil {
					break
				}
				cfg.rec.delivered(p, m.Offset, m.Value)
				next = m.Offset + 1
			}
			err := batch.Close()
			if r := batch.PreferredReadReplica(); err == nil && r >= 0 && r != conn.Broker().ID {
				preferred = r
				break
			}
			if err != nil {
				if ctx.Err() == nil {
					cfg.rec.appError(fmt.Errorf("partition %d, broker %d: %w", p, conn.Broker().ID, err))
					preferred = -1 // back to the leader, which names a replica again
					backoff(ctx)
				}
				break
			}
		}
		c.drop(p, conn)
	}
}

// dial looks the partition up through the bootstrap addresses, in turn,
// and connects to the preferred replica, or to the leader.
func (c *connConsumer) dial(ctx context.Context, d *kafka.Dialer, cfg consumerConfig, p int, seed *int, preferred int, next *int64) (*kafka.Conn, error) {
	var part kafka.Partition
	var err error
	for i := 0; i < len(cfg.brokers); i++ {
		addr := cfg.brokers[*seed%len(cfg.brokers)]
		lctx, cancel := context.WithTimeout(ctx, connReadTimeout)
		part, err = d.LookupPartition(lctx, "tcp", addr, cfg.topic, p)
		cancel()
		if err == nil {
			break
		}
		*seed++
	}
	if err != nil {
		return nil, fmt.Errorf("looking up the partition: %w", err)
	}
	to := part
	if preferred >= 0 {
		for _, r := range part.Replicas {
			if r.ID == preferred {
				to.Leader = r
			}
		}
	}
	dctx, cancel := context.WithTimeout(ctx, connReadTimeout)
	conn, err := d.DialPartition(dctx, "tcp", "", to)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("dialing broker %d: %w", to.Leader.ID, err)
	}
	if *next < 0 {
		_ = conn.SetDeadline(time.Now().Add(connReadTimeout))
		first, err := conn.ReadFirstOffset()
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("reading the first offset: %w", err)
		}
		*next = first
		// SetDeadline bounds writes too, and the reads below set only
		// their read deadline: a write deadline left here would fail the
		// connection's requests 10 s later.
		_ = conn.SetDeadline(time.Time{})
	}
	if _, err := conn.Seek(*next, kafka.SeekAbsolute|kafka.SeekDontCheck); err != nil {
		conn.Close()
		return nil, fmt.Errorf("seeking to %d: %w", *next, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ctx.Err() != nil {
		conn.Close()
		return nil, ctx.Err()
	}
	c.from[p], c.conns[p] = to.Leader.ID, conn
	return conn, nil
}

func (c *connConsumer) drop(p int, conn *kafka.Conn) {
	c.mu.Lock()
	delete(c.from, p)
	delete(c.conns, p)
	c.mu.Unlock()
	conn.Close()
}

func (c *connConsumer) routes() map[int]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.from)
}

func (c *connConsumer) close() error {
	c.stop()
	c.mu.Lock()
	for _, conn := range c.conns {
		conn.Close() // interrupts a fetch in flight
	}
	c.mu.Unlock()
	c.wg.Wait()
	return nil
}
