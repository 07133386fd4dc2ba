// Command rack-reader is the library's main job in one file: a kafka-go
// Reader that reads from the in-sync replica in its own rack.
//
// It creates a topic with two partitions led by each broker, writes to it,
// then reads everything back with ReaderConfig.Rack set, and prints where
// each partition was read from and how many bytes stayed in the rack, from
// Reader.RoutingStats.
//
// Usage: KAFKA_BROKERS=host:port,... go run ./examples/rack-reader -rack b
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	kafka "github.com/rackfetch/kafka-go"
)

func main() {
	rack := flag.String("rack", "b", "the client's rack")
	topic := flag.String("topic", fmt.Sprintf("rack-reader-%d", time.Now().UnixNano()), "topic to write and read")
	count := flag.Int("messages", 6000, "messages to write")
	flag.Parse()
	brokers := strings.Split(os.Getenv("KAFKA_BROKERS"), ",")
	if brokers[0] == "" {
		log.Fatal("KAFKA_BROKERS is not set (run `make kafka-up` and source .kafka/env)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	partitions := produce(ctx, brokers, *topic, *count)
	logger := slog.New(slog.NewTextHandler(os.Stdout, nil))
	start := time.Now()
	reader := kafka.NewReader(kafka.ReaderConfig{
		Brokers:     brokers,
		GroupID:     "rack-reader-example",
		Topic:       *topic,
		Rack:        *rack,
		StartOffset: kafka.FirstOffset,
		// Commit once a second instead of after every message.
		CommitInterval: time.Second,
		Logger:         kafka.NewSlogAdapter(logger, slog.LevelInfo),
		ErrorLogger:    kafka.NewSlogAdapter(logger, slog.LevelError),
	})
	defer reader.Close()

	for read := 0; read < *count; read++ {
		if _, err := reader.ReadMessage(ctx); err != nil {
			log.Fatalf("after %d messages: %v", read, err)
		}
	}
	// RoutingStats are cumulative since the Reader started, by partition.
	stats := reader.RoutingStats()
	fmt.Printf("read %d messages from %d partitions in %v\n", *count, partitions, time.Since(start).Round(time.Millisecond))
	for _, p := range stats.Partitions {
		fmt.Printf("partition %d: leader %d, read from broker %d (rack %s), reroutes %v\n", p.Partition, p.Leader, p.Broker, p.BrokerRack, p.Reroutes)
	}
	fmt.Printf("client rack %s: %.2f%% of %d fetched bytes came from brokers in the same rack\n",
		*rack, 100*stats.SameRackRatio(), stats.Bytes)
}

// produce creates the topic (two partitions per broker, replicated on every
// broker) and writes count messages across its partitions.
func produce(ctx context.Context, brokers []string, topic string, count int) int {
	c, err := kafka.DialContext(ctx, "tcp", brokers[0])
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	bs, err := c.Brokers()
	if err != nil {
		log.Fatal(err)
	}
	n := 2 * len(bs)
	// CreateTopics goes to the controller (ZooKeeper clusters refuse it
	// elsewhere with NOT_CONTROLLER).
	ctrl, err := c.Controller()
	if err != nil {
		log.Fatal(err)
	}
	cc, err := kafka.DialContext(ctx, "tcp", net.JoinHostPort(ctrl.Host, strconv.Itoa(ctrl.Port)))
	if err != nil {
		log.Fatal(err)
	}
	defer cc.Close()
	if err := cc.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: n, ReplicationFactor: len(bs)}); err != nil {
		log.Fatal(err)
	}
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: topic, RequiredAcks: kafka.RequireAll, BatchSize: 500}
	defer w.Close()
	msgs := make([]kafka.Message, count)
	for i := range msgs {
		msgs[i].Value = []byte(fmt.Sprintf("message %d", i))
	}
	for attempt := 1; ; attempt++ { // a new topic's leaders are elected asynchronously
		if err = w.WriteMessages(ctx, msgs...); err == nil {
			return n
		}
		if attempt == 10 || ctx.Err() != nil {
			log.Fatal(err)
		}
		time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
	}
}
