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

// startProducer writes sequence-numbered records to every partition at
// about rate records/s in all (acks=all, synchronous batches, one goroutine
// per partition) to brokers: the brokers' own listeners, which no fault
// touches, or the fault proxy (Spec.WriterFaulted), where the producer is
// the window's client. A failed write is not sent again: only acknowledged
// records must be read. The returned func stops it, once.
func startProducer(client string, brokers []string, topic string, rate int, rec *record) (stop func(), err error) {
	batch := max(1, rate*int(produceTick/time.Millisecond)/1000/Partitions)
	if client == "franz-go" {
		return startFranzProducer(brokers, topic, batch, rec)
	}
	w := &kafka.Writer{
		Addr:         kafka.TCP(brokers...),
		Topic:        topic,
		RequiredAcks: kafka.RequireAll,
		Balancer: kafka.BalancerFunc(func(m kafka.Message, ps ...int) int {
			p, _ := strconv.Atoi(string(m.Key))
			return p
		}),
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for p := 0; p < Partitions; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			produce(ctx, w, p, batch, rec)
		}()
	}
	var once sync.Once
	return func() {
		once.Do(func() { cancel(); wg.Wait(); w.Close() })
	}, nil
}

// startFranzProducer is startProducer with a franz-go client at its
// defaults (acks=all, idempotent, no delivery timeout): each partition's
// goroutine produces its batch synchronously every produceTick.
func startFranzProducer(brokers []string, topic string, batch int, rec *record) (stop func(), err error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for p := 0; p < Partitions; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
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
				recs := make([]*kgo.Record, batch)
				for i := range recs {
					recs[i] = &kgo.Record{Partition: int32(p), Key: key, Value: makeValue(p, seq+int64(i))}
				}
				if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
					if ctx.Err() != nil {
						return
					}
					rec.produceFailed()
				} else {
					rec.acked(p, seq, batch, time.Now())
				}
				seq += int64(batch)
			}
		}()
	}
	var once sync.Once
	return func() {
		once.Do(func() { cancel(); wg.Wait(); cl.Close() })
	}, nil
}

func produce(ctx context.Context, w *kafka.Writer, p, batch int, rec *record) {
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
		msgs := make([]kafka.Message, batch)
		for i := range msgs {
			msgs[i] = kafka.Message{Key: key, Value: makeValue(p, seq+int64(i))}
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
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
