package faults

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/bench/wire"
)

// Clients in the order a run measures them.
var Clients = []string{"rackfetch", "franz-go", "conn"}

// consumerConfig is what a window gives its consumer.
type consumerConfig struct {
	brokers []string // the fault proxy's addresses
	topic   string
	group   string
	rack    string
	wire    *wire.Wire
	rec     *record
	logs    *logCount
}

// consumer is a running group consumer of one client.
type consumer interface {
	// routes returns, by partition, the broker it is read from now (-1 or
	// absent: none known).
	routes() map[int]int
	// close stops consuming and closes the client.
	close() error
}

var consumers = map[string]func(consumerConfig) (consumer, error){
	"rackfetch": startRackfetch,
	"franz-go":  startFranz,
	"conn":      startConn,
}

// logCount counts a client's log lines, those at warning or error level
// apart, and the group generations in which it was assigned partitions; it
// keeps the first lines, timed, to tell what a client did in a window.
type logCount struct {
	lines, errs, assigned atomic.Int64
	mu                    sync.Mutex
	kept                  []logLine
}

type logLine struct {
	at   time.Time
	text string
}

// maxKept bounds the lines a window keeps.
const maxKept = 5000

func (l *logCount) add(isErr bool, text string) {
	l.lines.Add(1)
	if isErr {
		l.errs.Add(1)
	}
	l.mu.Lock()
	if len(l.kept) < maxKept {
		l.kept = append(l.kept, logLine{at: time.Now(), text: text})
	}
	l.mu.Unlock()
}

// between returns up to n lines logged in [from, to), with their times,
// but for the routine commit lines.
func (l *logCount) between(from, to time.Time, n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, ln := range l.kept {
		if len(out) == n {
			break
		}
		if !ln.at.Before(from) && ln.at.Before(to) && !strings.Contains(ln.text, "committed offsets") {
			out = append(out, ln.at.UTC().Format("15:04:05.000")+" "+ln.text)
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// This library: a group Reader in the rack, its defaults but for the commit
// interval (1 s, asynchronous: the default commits each message in turn)
// and the counting dialer; FetchMessage then CommitMessages per message.

type rackfetchConsumer struct {
	r     *kafka.Reader
	topic string
	stop  context.CancelFunc
	done  chan struct{}
}

func startRackfetch(cfg consumerConfig) (consumer, error) {
	info := kafka.LoggerFunc(func(format string, args ...any) {
		cfg.logs.add(false, fmt.Sprintf(format, args...))
		if strings.Contains(format, "generation %d: assigned") {
			cfg.logs.assigned.Add(1)
		}
	})
	errl := kafka.LoggerFunc(func(format string, args ...any) { cfg.logs.add(true, "error: "+fmt.Sprintf(format, args...)) })
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:        cfg.brokers,
		GroupID:        cfg.group,
		Topic:          cfg.topic,
		Rack:           cfg.rack,
		Dialer:         &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, DialFunc: cfg.wire.Dial},
		CommitInterval: time.Second,
		StartOffset:    kafka.FirstOffset,
		Logger:         info,
		ErrorLogger:    errl,
	})
	ctx, cancel := context.WithCancel(context.Background())
	c := &rackfetchConsumer{r: r, topic: cfg.topic, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				cfg.rec.appError(fmt.Errorf("FetchMessage: %w", err))
				backoff(ctx)
				continue
			}
			cfg.rec.delivered(m.Partition, m.Offset, m.Value)
			if err := r.CommitMessages(ctx, m); err != nil && ctx.Err() == nil {
				cfg.rec.appError(fmt.Errorf("CommitMessages: %w", err))
			}
		}
	}()
	return c, nil
}

func (c *rackfetchConsumer) routes() map[int]int {
	out := map[int]int{}
	for _, p := range c.r.RoutingStats().Partitions {
		if p.Topic == c.topic {
			out[p.Partition] = p.Broker
		}
	}
	return out
}

func (c *rackfetchConsumer) close() error {
	c.stop()
	<-c.done
	if err := c.r.Close(); err != nil {
		return fmt.Errorf("closing the Reader: %w", err)
	}
	return nil
}

// backoff is an application's pause before it calls again after an error.
func backoff(ctx context.Context) {
	t := time.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// ---------------------------------------------------------------------------
// franz-go: a group consumer with kgo.Rack and its defaults (autocommit),
// the counting dialer, a logger at info level to count its lines, and a
// hook that records which broker served each partition's last batch.

type franzConsumer struct {
	cl   *kgo.Client
	stop context.CancelFunc
	done chan struct{}
	mu   sync.Mutex
	from map[int]int
}

func startFranz(cfg consumerConfig) (consumer, error) {
	c := &franzConsumer{from: map[int]int{}, done: make(chan struct{})}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(cfg.brokers...),
		kgo.Rack(cfg.rack),
		kgo.Dialer(cfg.wire.Dial),
		kgo.ConsumerGroup(cfg.group),
		kgo.ConsumeTopics(cfg.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.WithLogger(franzLogger{cfg.logs}),
		kgo.WithHooks(franzHook{c}),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) { cfg.logs.assigned.Add(1) }),
	)
	if err != nil {
		return nil, fmt.Errorf("creating the franz-go client: %w", err)
	}
	c.cl = cl
	ctx, cancel := context.WithCancel(context.Background())
	c.stop = cancel
	go func() {
		defer close(c.done)
		for {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				return
			}
			failed := false
			fs.EachError(func(topic string, p int32, err error) {
				if !errors.Is(err, context.Canceled) {
					failed = true
					cfg.rec.appError(fmt.Errorf("PollFetches: %s/%d: %w", topic, p, err))
				}
			})
			fs.EachRecord(func(r *kgo.Record) { cfg.rec.delivered(int(r.Partition), r.Offset, r.Value) })
			if failed {
				backoff(ctx)
			}
		}
	}()
	return c, nil
}

func (c *franzConsumer) routes() map[int]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.from)
}

func (c *franzConsumer) close() error {
	c.stop()
	<-c.done
	c.cl.Close()
	return nil
}

type franzHook struct{ c *franzConsumer }

// OnFetchBatchRead (kgo.HookFetchBatchRead) records the broker that served
// a partition's batch.
func (h franzHook) OnFetchBatchRead(meta kgo.BrokerMetadata, _ string, partition int32, _ kgo.FetchBatchMetrics) {
	h.c.mu.Lock()
	h.c.from[int(partition)] = int(meta.NodeID)
	h.c.mu.Unlock()
}

type franzLogger struct{ n *logCount }

func (l franzLogger) Level() kgo.LogLevel { return kgo.LogLevelInfo }

func (l franzLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	l.n.add(level <= kgo.LogLevelWarn, fmt.Sprint(level, ": ", msg, " ", keyvals))
}
