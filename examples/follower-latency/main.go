// Command follower-latency measures what reading from a follower costs in
// end-to-end latency (README, "What follower reads cost"): it writes one
// message every -interval to a one-partition topic and reads each with two
// Readers, one in the leader's rack (served by the leader) and one in
// another rack (served by the follower there), printing the latency from
// before the write to the read for each.
//
// Usage: KAFKA_BROKERS=host:port,... go run ./examples/follower-latency -interval 1s
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	kafka "github.com/rackfetch/kafka-go"
)

func main() {
	interval := flag.Duration("interval", time.Second, "time between writes")
	count := flag.Int("messages", 20, "messages to measure")
	flag.Parse()
	brokers := strings.Split(os.Getenv("KAFKA_BROKERS"), ",")
	if brokers[0] == "" {
		log.Fatal("KAFKA_BROKERS is not set (run `make kafka-up` and source .kafka/env)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	topic := fmt.Sprintf("follower-latency-%d", time.Now().UnixNano())
	leader, follower := setUp(ctx, brokers, topic)
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: topic, RequiredAcks: kafka.RequireAll}
	defer w.Close()

	readers := []*kafka.Reader{newReader(brokers, topic, leader.Rack), newReader(brokers, topic, follower.Rack)}
	results := make([]chan []time.Duration, len(readers))
	for i, r := range readers {
		defer r.Close()
		results[i] = make(chan []time.Duration, 1)
		go func(r *kafka.Reader, out chan<- []time.Duration) {
			var lat []time.Duration
			for len(lat) < *count+1 {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					log.Fatalf("reading: %v", err)
				}
				sent, _ := strconv.ParseInt(string(m.Value), 10, 64)
				if m.Offset > 0 { // the first message only moves the reader to its replica
					lat = append(lat, time.Since(time.Unix(0, sent)))
				} else {
					lat = append(lat, -1)
				}
			}
			out <- lat[1:]
		}(r, results[i])
	}
	for i := 0; i <= *count; i++ {
		if err := w.WriteMessages(ctx, kafka.Message{Value: []byte(strconv.FormatInt(time.Now().UnixNano(), 10))}); err != nil {
			log.Fatalf("writing: %v", err)
		}
		time.Sleep(*interval) // the write pace being measured, not a synchronization
	}
	fmt.Printf("%d messages, one every %v, acks=all\n", *count, *interval)
	for i, r := range readers {
		lat := <-results[i]
		rt := r.Stats().Routing[0]
		fmt.Printf("reader in rack %s: read from broker %d (rack %s, leader %d): %s\n",
			r.Config().Rack, rt.Broker, rt.BrokerRack, rt.Leader, summary(lat))
	}
}

func newReader(brokers []string, topic, rack string) *kafka.Reader {
	return kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Rack: rack})
}

// setUp creates the topic (one partition on every broker) and returns its
// leader and an in-sync follower in another rack.
func setUp(ctx context.Context, brokers []string, topic string) (leader, follower kafka.Broker) {
	c := &kafka.Client{Addr: kafka.TCP(brokers...)}
	if _, err := c.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		{Topic: topic, NumPartitions: 1, ReplicationFactor: len(brokers)},
	}}); err != nil {
		log.Fatalf("creating %s: %v", topic, err)
	}
	for attempt := 1; ; attempt++ {
		p, err := kafka.LookupPartition(ctx, "tcp", brokers[0], topic, 0)
		if err == nil && p.Leader.Rack != "" && len(p.Isr) == len(brokers) {
			for _, b := range p.Isr {
				if b.Rack != p.Leader.Rack {
					return p.Leader, b
				}
			}
			log.Fatalf("no in-sync replica of %s/0 outside rack %s", topic, p.Leader.Rack)
		}
		if attempt == 50 {
			log.Fatalf("looking up %s/0: %v (%+v)", topic, err, p)
		}
		time.Sleep(100 * time.Millisecond) // a new topic's leader is elected asynchronously
	}
}

func summary(lat []time.Duration) string {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(f float64) time.Duration { return lat[int(f*float64(len(lat)-1))].Round(100 * time.Microsecond) }
	return fmt.Sprintf("latency p50 %v, p90 %v, max %v", q(0.5), q(0.9), q(1))
}
