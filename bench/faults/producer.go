package faults

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	kafka "github.com/rackfetch/kafka-go"
)

// produceTick is how often each partition's goroutine writes a batch.
const produceTick = 50 * time.Millisecond

// sendFunc writes the batch of records p-seq0 … p-(seq0+n-1) to partition
// p synchronously.
type sendFunc func(ctx context.Context, p int, key []byte, seq0 int64, n int) error

// startProducer writes sequence-numbered records to every partition at
// about rate records/s in all (acks=all, synchronous batches, one goroutine
// per partition) to brokers: the brokers' own listeners, which no fault
// touches, or the fault proxy (Spec.WriterFaulted), where the producer is
// the window's client. A failed write is not sent again: only acknowledged
// records must be read. The returned func stops it, once.
func startProducer(client string, brokers []string, topic string, rate int, rec *record) (stop func(), err error) {
	batch := max(1, rate*int(produceTick/time.Millisecond)/1000/Partitions)
	var send sendFunc
	var closeClient func()
	if client == "franz-go" {
		// franz-go's client at its defaults: acks=all, idempotent, no
		// delivery timeout.
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			return nil, err
		}
		send = func(ctx context.Context, p int, key []byte, seq0 int64, n int) error {
			recs := make([]*kgo.Record, n)
			for i := range recs {
				recs[i] = &kgo.Record{Partition: int32(p), Key: key, Value: makeValue(p, seq0+int64(i))}
			}
			return cl.ProduceSync(ctx, recs...).FirstErr()
		}
		closeClient = cl.Close
	} else {
		w := &kafka.Writer{
			Addr:         kafka.TCP(brokers...),
			Topic:        topic,
			RequiredAcks: kafka.RequireAll,
			Balancer: kafka.BalancerFunc(func(m kafka.Message, ps ...int) int {
				p, _ := strconv.Atoi(string(m.Key))
				return p
			}),
		}
		send = func(ctx context.Context, p int, key []byte, seq0 int64, n int) error {
			msgs := make([]kafka.Message, n)
			for i := range msgs {
				msgs[i] = kafka.Message{Key: key, Value: makeValue(p, seq0+int64(i))}
			}
			return w.WriteMessages(ctx, msgs...)
		}
		closeClient = func() { w.Close() }
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for p := 0; p < Partitions; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			produce(ctx, send, p, batch, rec)
		}()
	}
	var once sync.Once
	return func() {
		once.Do(func() { cancel(); wg.Wait(); closeClient() })
	}, nil
}

// produce sends partition p a batch every produceTick (ticks missed while
// a batch is in flight are dropped: a slower path lowers the rate).
func produce(ctx context.Context, send sendFunc, p, batch int, rec *record) {
	tick := time.NewTicker(produceTick)
	defer tick.Stop()
	key := []byte(strconv.Itoa(p))
	var seq int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := send(ctx, p, key, seq, batch); err != nil {
			if ctx.Err() != nil {
				return
			}
			rec.produceFailed()
		} else {
			rec.acked(p, seq, batch, time.Now())
		}
		seq += int64(batch)
	}
}
