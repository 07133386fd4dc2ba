package e2e

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
	segkafka "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"

	kafka "github.com/rackfetch/kafka-go"
)

// maxWait is every client's fetch MaxWait; MinBytes is 1 for all.
const maxWait = 500 * time.Millisecond

// Spec is what one child process consumes.
type Spec struct {
	Setting
	Client       string        `json:"client"`
	Brokers      []string      `json:"brokers"`
	KafkaVersion string        `json:"kafka_version"`
	GroupID      string        `json:"group_id,omitempty"`
	Timeout      time.Duration `json:"timeout"`
	FullSum      bool          `json:"full_sum"`
}

// counter collects what the consumer goroutines of one run read.
type counter struct {
	spec  Spec
	start time.Time
	first atomic.Int64 // ns since start of the first record, +1 (0: none yet)
	mu    sync.Mutex
	sum   Sum
	adds  int
	// sockets is the most sockets this process had open when the first
	// and the last consumer goroutine finished reading (before closing
	// anything): runs too short for the parent's 50 ms samples still
	// report their sockets.
	sockets int
	last    time.Duration // start to when the last record was counted

	// passed counts the records read, tickEvery at a time, and at10/at90
	// hold when it first reached a tenth and nine tenths of the run's
	// records (ns since start +1, 0: not yet) and passed's value then.
	passed             atomic.Int64
	at10, at90         atomic.Int64
	passed10, passed90 atomic.Int64
}

// tickEvery is how many records a goroutine reads between two updates of
// the run's progress: rare enough that the shared counter costs nothing
// measurable, small enough that the records a goroutine ends with and never
// reports (fewer than tickEvery) leave the nine-tenths mark reachable with
// 300 goroutines.
const tickEvery = 128

// tick is called after each record with the goroutine's count so far.
func (c *counter) tick(n int64) {
	if n%tickEvery != 0 {
		return
	}
	done := c.passed.Add(tickEvery)
	c.mark(done, int64(c.spec.Records)/10, &c.at10, &c.passed10)
	c.mark(done, int64(c.spec.Records)*9/10, &c.at90, &c.passed90)
}

func (c *counter) mark(done, threshold int64, at, passed *atomic.Int64) {
	if done >= threshold && at.Load() == 0 && at.CompareAndSwap(0, int64(time.Since(c.start))+1) {
		passed.Store(done)
	}
}

// add merges the records one goroutine read.
func (c *counter) add(s Sum) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sum.Merge(s)
	c.adds++
	done := c.sum.Records >= int64(c.spec.Records)
	if done && c.last == 0 {
		c.last = time.Since(c.start)
	}
	if c.adds == 1 || done {
		if n, err := countSockets("/proc/self/fd"); err == nil {
			c.sockets = max(c.sockets, n)
		}
	}
}

// seen marks that records arrived (the first call counts).
func (c *counter) seen() {
	if c.first.Load() == 0 {
		c.first.CompareAndSwap(0, int64(time.Since(c.start))+1)
	}
}

// consumers maps a client and mode to its consume function. Each reads
// exactly the setting's records and returns; the total is checked by the
// caller.
var consumers = map[string]map[string]func(context.Context, *counter) error{
	"rackfetch":       {ModePartition: rackfetchPartitions(false), ModeGroup: rackfetchGroup(false)},
	"rackfetch-batch": {ModePartition: rackfetchPartitions(true), ModeGroup: rackfetchGroup(true)},
	"franz-go":        {ModePartition: franz, ModeGroup: franz},
	"kafka-go":        {ModePartition: segmentioPartitions, ModeGroup: segmentioGroup},
	"sarama":          {ModePartition: saramaPartitions, ModeGroup: saramaGroup},
}

// each runs f for every partition in its own goroutine and returns the
// first error.
func each(n int, f func(p int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for p := 0; p < n; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = f(p)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// rackfetchPartitions reads each partition through its own Reader, a
// message at a time (FetchMessage) or a fetch at a time (FetchBatchInto,
// reusing one batch's array).
func rackfetchPartitions(batch bool) func(context.Context, *counter) error {
	return func(ctx context.Context, c *counter) error {
		s := c.spec
		return each(s.Partitions, func(p int) error {
			r := kafka.NewReader(kafka.ReaderConfig{
				Brokers: s.Brokers, Topic: s.Topic(), Partition: p,
				MinBytes: 1, MaxBytes: s.FetchBytes, MaxWait: maxWait,
			})
			defer r.Close()
			return readRackfetch(ctx, c, r, s.PerPartition(), batch)
		})
	}
}

// rackfetchGroup reads the topic through one group Reader, without commits.
func rackfetchGroup(batch bool) func(context.Context, *counter) error {
	return func(ctx context.Context, c *counter) error {
		s := c.spec
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers: s.Brokers, Topic: s.Topic(), GroupID: s.GroupID, StartOffset: kafka.FirstOffset,
			MinBytes: 1, MaxBytes: s.FetchBytes, MaxWait: maxWait,
		})
		defer r.Close()
		return readRackfetch(ctx, c, r, s.Records, batch)
	}
}

func readRackfetch(ctx context.Context, c *counter, r *kafka.Reader, n int, batch bool) error {
	var sum Sum
	defer func() { c.add(sum) }()
	var b kafka.MessageBatch
	for sum.Records < int64(n) {
		if batch {
			if err := r.FetchBatchInto(ctx, &b); err != nil {
				return fmt.Errorf("rackfetch FetchBatchInto after %d records: %w", sum.Records, err)
			}
			c.seen()
			for i := range b.Messages {
				sum.Add(b.Messages[i].Key, b.Messages[i].Value, c.spec.FullSum)
				c.tick(sum.Records)
			}
			continue
		}
		m, err := r.FetchMessage(ctx)
		if err != nil {
			return fmt.Errorf("rackfetch FetchMessage after %d records: %w", sum.Records, err)
		}
		c.seen()
		sum.Add(m.Key, m.Value, c.spec.FullSum)
		c.tick(sum.Records)
	}
	return nil
}

// franz reads through one franz-go client: ConsumePartitions for every
// partition, or a group consumer without commits. FetchMaxBytes is left
// large enough never to cap FetchMaxPartitionBytes (the broker's own
// fetch.max.bytes caps a response anyway).
func franz(ctx context.Context, c *counter) error {
	s := c.spec
	maxBytes := int64(s.FetchBytes) * int64(s.Partitions)
	maxBytes = min(maxBytes, 1<<29) // the broker's fetch.max.bytes (55 MB by default) caps it anyway
	opts := []kgo.Opt{
		kgo.SeedBrokers(s.Brokers...),
		kgo.FetchMinBytes(1),
		kgo.FetchMaxBytes(int32(maxBytes)),
		kgo.FetchMaxPartitionBytes(int32(s.FetchBytes)),
		kgo.BrokerMaxReadBytes(int32(maxBytes + 1<<20)),
		kgo.FetchMaxWait(maxWait),
	}
	if s.Mode == ModeGroup {
		opts = append(opts, kgo.ConsumerGroup(s.GroupID), kgo.ConsumeTopics(s.Topic()),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	} else {
		parts := make(map[int32]kgo.Offset, s.Partitions)
		for p := 0; p < s.Partitions; p++ {
			parts[int32(p)] = kgo.NewOffset().AtStart()
		}
		opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{s.Topic(): parts}))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("franz-go client: %w", err)
	}
	defer cl.Close()
	var sum Sum
	defer func() { c.add(sum) }()
	for sum.Records < int64(s.Records) {
		fetches := cl.PollFetches(ctx)
		if err := fetches.Err0(); err != nil {
			return fmt.Errorf("franz-go PollFetches after %d records: %w", sum.Records, err)
		}
		if fetches.NumRecords() > 0 {
			c.seen()
		}
		fetches.EachRecord(func(r *kgo.Record) {
			sum.Add(r.Key, r.Value, s.FullSum)
			c.tick(sum.Records)
		})
	}
	return nil
}

// segmentioPartitions reads each partition through its own segmentio
// Reader, FetchMessage a message at a time.
func segmentioPartitions(ctx context.Context, c *counter) error {
	s := c.spec
	return each(s.Partitions, func(p int) error {
		r := segkafka.NewReader(segkafka.ReaderConfig{
			Brokers: s.Brokers, Topic: s.Topic(), Partition: p,
			MinBytes: 1, MaxBytes: s.FetchBytes, MaxWait: maxWait,
		})
		defer r.Close()
		return readSegmentio(ctx, c, r, s.PerPartition())
	})
}

// segmentioGroup reads the topic through one segmentio group Reader,
// without commits.
func segmentioGroup(ctx context.Context, c *counter) error {
	s := c.spec
	r := segkafka.NewReader(segkafka.ReaderConfig{
		Brokers: s.Brokers, Topic: s.Topic(), GroupID: s.GroupID, StartOffset: segkafka.FirstOffset,
		MinBytes: 1, MaxBytes: s.FetchBytes, MaxWait: maxWait,
	})
	defer r.Close()
	return readSegmentio(ctx, c, r, s.Records)
}

func readSegmentio(ctx context.Context, c *counter, r *segkafka.Reader, n int) error {
	var sum Sum
	defer func() { c.add(sum) }()
	for sum.Records < int64(n) {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			return fmt.Errorf("kafka-go FetchMessage after %d records: %w", sum.Records, err)
		}
		c.seen()
		sum.Add(m.Key, m.Value, c.spec.FullSum)
		c.tick(sum.Records)
	}
	return nil
}

func saramaConfig(s Spec) *sarama.Config {
	cfg := sarama.NewConfig()
	if v, err := sarama.ParseKafkaVersion(s.KafkaVersion); err == nil {
		cfg.Version = v
	} else {
		cfg.Version = sarama.V2_8_0_0
	}
	cfg.Consumer.Fetch.Min = 1
	cfg.Consumer.Fetch.Default = int32(s.FetchBytes)
	cfg.Consumer.MaxWaitTime = maxWait
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	return cfg
}

// saramaPartitions reads every partition through one sarama Consumer, a
// ConsumePartition each, a message at a time from its channel.
func saramaPartitions(ctx context.Context, c *counter) error {
	s := c.spec
	cons, err := sarama.NewConsumer(s.Brokers, saramaConfig(s))
	if err != nil {
		return fmt.Errorf("sarama consumer: %w", err)
	}
	defer cons.Close()
	return each(s.Partitions, func(p int) error {
		pc, err := cons.ConsumePartition(s.Topic(), int32(p), sarama.OffsetOldest)
		if err != nil {
			return fmt.Errorf("sarama ConsumePartition %d: %w", p, err)
		}
		defer pc.Close()
		var sum Sum
		defer func() { c.add(sum) }()
		for sum.Records < int64(s.PerPartition()) {
			select {
			case m := <-pc.Messages():
				c.seen()
				sum.Add(m.Key, m.Value, s.FullSum)
				c.tick(sum.Records)
			case err := <-pc.Errors():
				return fmt.Errorf("sarama partition %d after %d records: %w", p, sum.Records, err)
			case <-ctx.Done():
				return fmt.Errorf("sarama partition %d after %d records: %w", p, sum.Records, ctx.Err())
			}
		}
		return nil
	})
}

// saramaGroup reads the topic through one sarama ConsumerGroup, without
// marking or committing offsets.
func saramaGroup(ctx context.Context, c *counter) error {
	s := c.spec
	g, err := sarama.NewConsumerGroup(s.Brokers, s.GroupID, saramaConfig(s))
	if err != nil {
		return fmt.Errorf("sarama consumer group: %w", err)
	}
	defer g.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := &saramaHandler{c: c, total: int64(s.Records), done: cancel}
	for ctx.Err() == nil {
		if err := g.Consume(ctx, []string{s.Topic()}, h); err != nil && ctx.Err() == nil {
			return fmt.Errorf("sarama group Consume after %d records: %w", h.read.Load(), err)
		}
	}
	if h.read.Load() < h.total {
		return fmt.Errorf("sarama group after %d records: %w", h.read.Load(), context.Cause(ctx))
	}
	return nil
}

type saramaHandler struct {
	c     *counter
	total int64
	read  atomic.Int64
	done  context.CancelFunc
}

func (h *saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *saramaHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	var sum Sum
	defer func() { h.c.add(sum) }()
	for {
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			h.c.seen()
			sum.Add(m.Key, m.Value, h.c.spec.FullSum)
			h.c.tick(sum.Records)
			if h.read.Add(1) == h.total {
				h.done()
			}
		case <-sess.Context().Done():
			return nil
		}
	}
}
