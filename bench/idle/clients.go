package idle

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
	"sync/atomic"
	"time"

	segkafka "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/bench/wire"
)

// Each client consumes the topic with its library's defaults, plus the
// rack where the library has one, and keeps consuming (blocked in its read
// call) until ctx ends. read is called with every record; the function
// returns when ctx ends, after closing everything it opened.
type consumeFunc func(ctx context.Context, s Spec, w *wire.Wire, read func()) error

var consumers = map[string]map[string]consumeFunc{
	"rackfetch": {ModePartition: rackfetchPartitions, ModeGroup: rackfetchGroup},
	"franz-go":  {ModePartition: franz, ModeGroup: franz},
	"kafka-go":  {ModePartition: segmentioPartitions, ModeGroup: segmentioGroup},
}

// Clients in the order a run measures them.
var Clients = []string{"franz-go", "rackfetch", "kafka-go"}

func rackfetchPartitions(ctx context.Context, s Spec, w *wire.Wire, read func()) error {
	d := &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, DialFunc: w.Dial}
	readers := make([]*kafka.Reader, s.Partitions)
	for p := range readers {
		readers[p] = kafka.NewReader(kafka.ReaderConfig{Brokers: s.Brokers, Topic: s.Topic, Partition: p,
			Rack: s.Rack, Dialer: d, Logger: debugLogger(), ErrorLogger: debugLogger()})
	}
	err := each(len(readers), func(p int) error { return readRackfetch(ctx, readers[p], read) })
	for _, r := range readers {
		if cerr := r.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("closing a Reader: %w", cerr)
		}
	}
	return err
}

func rackfetchGroup(ctx context.Context, s Spec, w *wire.Wire, read func()) error {
	d := &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, DialFunc: w.Dial}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: s.Brokers, Topic: s.Topic, GroupID: s.GroupID,
		StartOffset: kafka.FirstOffset, Rack: s.Rack, Dialer: d, Logger: debugLogger(), ErrorLogger: debugLogger()})
	err := readRackfetch(ctx, r, read)
	if cerr := r.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("closing the Reader: %w", cerr)
	}
	return err
}

func readRackfetch(ctx context.Context, r *kafka.Reader, read func()) error {
	for {
		if _, err := r.FetchMessage(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		read()
	}
}

func franz(ctx context.Context, s Spec, w *wire.Wire, read func()) error {
	opts := []kgo.Opt{kgo.SeedBrokers(s.Brokers...), kgo.Rack(s.Rack), kgo.Dialer(w.Dial)}
	if s.Mode == ModeGroup {
		opts = append(opts, kgo.ConsumerGroup(s.GroupID), kgo.ConsumeTopics(s.Topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	} else {
		parts := make(map[int32]kgo.Offset, s.Partitions)
		for p := 0; p < s.Partitions; p++ {
			parts[int32(p)] = kgo.NewOffset().AtStart()
		}
		opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{s.Topic: parts}))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var ferr error
		fetches.EachError(func(_ string, _ int32, err error) {
			if ferr == nil && !errors.Is(err, context.Canceled) {
				ferr = err
			}
		})
		if ferr != nil {
			return ferr
		}
		fetches.EachRecord(func(*kgo.Record) { read() })
	}
}

func segmentioPartitions(ctx context.Context, s Spec, w *wire.Wire, read func()) error {
	d := &segkafka.Dialer{Timeout: 10 * time.Second, DualStack: true, DialFunc: w.Dial}
	readers := make([]*segkafka.Reader, s.Partitions)
	for p := range readers {
		readers[p] = segkafka.NewReader(segkafka.ReaderConfig{Brokers: s.Brokers, Topic: s.Topic, Partition: p, Dialer: d})
	}
	err := each(len(readers), func(p int) error { return readSegmentio(ctx, readers[p], read) })
	for _, r := range readers {
		r.Close()
	}
	return err
}

func segmentioGroup(ctx context.Context, s Spec, w *wire.Wire, read func()) error {
	d := &segkafka.Dialer{Timeout: 10 * time.Second, DualStack: true, DialFunc: w.Dial}
	r := segkafka.NewReader(segkafka.ReaderConfig{Brokers: s.Brokers, Topic: s.Topic, GroupID: s.GroupID,
		StartOffset: segkafka.FirstOffset, Dialer: d})
	err := readSegmentio(ctx, r, read)
	r.Close()
	return err
}

func readSegmentio(ctx context.Context, r *segkafka.Reader, read func()) error {
	for {
		if _, err := r.FetchMessage(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		read()
	}
}

// each runs f for 0..n-1 in goroutines and returns the first error.
func each(n int, f func(i int) error) error {
	var (
		wg    sync.WaitGroup
		first atomic.Pointer[error]
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(i); err != nil {
				first.CompareAndSwap(nil, &err)
			}
		}()
	}
	wg.Wait()
	if p := first.Load(); p != nil {
		return *p
	}
	return nil
}

// logEnv names a file the child writes this library's log lines to, for
// looking into one run (none by default: the run measures the defaults).
const logEnv = "BENCH_IDLE_LOG"

var debugLog struct {
	once sync.Once
	l    kafka.Logger
}

// debugLogger is the Logger of logEnv's file, or nil.
func debugLogger() kafka.Logger {
	debugLog.once.Do(func() {
		if path := os.Getenv(logEnv); path != "" {
			if f, err := os.Create(path); err == nil {
				debugLog.l = log.New(f, "", log.Lmicroseconds)
			}
		}
	})
	return debugLog.l
}
