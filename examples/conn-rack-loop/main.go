// Command conn-rack-loop shows rack-aware follower fetching (KIP-392) with the
// low-level Conn API: it writes messages to a topic whose partitions are led
// in every rack, then reads them all back from a client in one rack,
// following the leader's preferred read replica, and reports how many bytes
// stayed in the rack.
//
// It is also the template for a hand-written loop done right:
//   - ask the LEADER, with Dialer.RackID set; it answers with no records and
//     Batch.PreferredReadReplica() when a same-rack in-sync replica exists;
//   - read the follower with SeekDontCheck: followers refuse ListOffsets, so
//     a checked seek would fail there;
//   - switch only between batches, never dropping records in hand;
//   - on any follower error go back to the leader, which decides resets.
//
// Usage: KAFKA_BROKERS=host:port,... go run ./examples/conn-rack-loop -rack b
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	kafka "github.com/rackfetch/kafka-go"
)

func main() {
	rack := flag.String("rack", "b", "the client's rack")
	topic := flag.String("topic", fmt.Sprintf("rack-reader-%d", time.Now().UnixNano()), "topic to write and read")
	count := flag.Int("messages", 600, "messages to write")
	flag.Parse()
	brokers := strings.Split(os.Getenv("KAFKA_BROKERS"), ",")
	if brokers[0] == "" {
		log.Fatal("KAFKA_BROKERS is not set (run `make kafka-up` and source .kafka/env)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	partitions := setUp(ctx, brokers[0], *topic, *count)
	racks := map[int]string{}
	for _, p := range partitions {
		for _, b := range p.Replicas {
			racks[b.ID] = b.Rack
		}
	}

	dialer := &kafka.Dialer{RackID: *rack, Timeout: 10 * time.Second}
	var sameRack, otherRack int64
	for _, p := range partitions {
		n, local, remote, broker := readPartition(ctx, dialer, p, *count/len(partitions))
		sameRack += local
		otherRack += remote
		fmt.Printf("partition %d: leader %d (rack %s), read %d messages from broker %d (rack %s)\n",
			p.ID, p.Leader.ID, p.Leader.Rack, n, broker, racks[broker])
	}
	total := sameRack + otherRack
	fmt.Printf("client rack %s: %d of %d record bytes (%.1f%%) read from brokers in the same rack\n",
		*rack, sameRack, total, 100*float64(sameRack)/float64(max(total, 1)))
}

// setUp creates a topic with two partitions per broker and writes messages.
func setUp(ctx context.Context, bootstrap, topic string, count int) []kafka.Partition {
	c, err := kafka.DialContext(ctx, "tcp", bootstrap)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	brokers, err := c.Brokers()
	if err != nil {
		log.Fatal(err)
	}
	if err := c.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: 2 * len(brokers), ReplicationFactor: len(brokers)}); err != nil {
		log.Fatal(err)
	}
	n := 2 * len(brokers)
	for p := 0; p < n; p++ {
		msgs := make([]kafka.Message, count/n)
		for i := range msgs {
			msgs[i].Value = []byte(fmt.Sprintf("message %d of partition %d", i, p))
		}
		// A new topic's leaders are elected asynchronously: retry until the
		// brokers agree on them.
		for attempt := 1; ; attempt++ {
			err := write(ctx, bootstrap, topic, p, msgs)
			if err == nil {
				break
			}
			if attempt == 20 || ctx.Err() != nil {
				log.Fatal(err)
			}
			time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
		}
	}
	partitions, err := kafka.LookupPartitions(ctx, "tcp", bootstrap, topic)
	if err != nil {
		log.Fatal(err)
	}
	return partitions
}

func write(ctx context.Context, bootstrap, topic string, partition int, msgs []kafka.Message) error {
	lc, err := kafka.DialLeader(ctx, "tcp", bootstrap, topic, partition)
	if err != nil {
		return err
	}
	defer lc.Close()
	_, err = lc.WriteMessages(msgs...)
	return err
}

// readPartition reads want messages of p, returning how many were read, the
// value bytes from the client's rack and from others, and the last broker read.
func readPartition(ctx context.Context, d *kafka.Dialer, p kafka.Partition, want int) (n int, local, remote int64, broker int) {
	conn, err := d.DialPartition(ctx, "tcp", "", p)
	if err != nil {
		log.Fatal(err)
	}
	broker = p.Leader.ID
	defer func() { conn.Close() }()
	offset := int64(0)
	for n < want && ctx.Err() == nil {
		conn.Seek(offset, kafka.SeekAbsolute|kafka.SeekDontCheck)
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		batch := conn.ReadBatch(1, 1<<20)
		for {
			m, err := batch.ReadMessage()
			if err != nil {
				break
			}
			n++
			offset = m.Offset + 1
			if conn.Broker().Rack == d.RackID {
				local += int64(len(m.Value))
			} else {
				remote += int64(len(m.Value))
			}
		}
		preferred := batch.PreferredReadReplica()
		if err := batch.Close(); err != nil {
			if broker != p.Leader.ID {
				log.Printf("partition %d: follower %d failed (%v): back to the leader", p.ID, broker, err)
				conn.Close()
				conn, broker = mustDial(ctx, d, p, p.Leader), p.Leader.ID
				continue
			}
			log.Fatalf("partition %d: %v", p.ID, err)
		}
		if preferred >= 0 && preferred != broker {
			if b, ok := replica(p, preferred); ok {
				conn.Close()
				conn, broker = mustDial(ctx, d, p, b), preferred
				fmt.Printf("partition %d: leader %d names replica %d (rack %s): switching\n", p.ID, p.Leader.ID, b.ID, b.Rack)
			}
		}
	}
	return n, local, remote, broker
}

// replica returns the in-sync replica with the given id.
func replica(p kafka.Partition, id int) (kafka.Broker, bool) {
	for _, b := range p.Isr {
		if b.ID == id {
			return b, true
		}
	}
	return kafka.Broker{}, false
}

func mustDial(ctx context.Context, d *kafka.Dialer, p kafka.Partition, b kafka.Broker) *kafka.Conn {
	q := p
	q.Leader = b // DialPartition dials the Leader field's address
	c, err := d.DialPartition(ctx, "tcp", "", q)
	if err != nil {
		log.Fatal(err)
	}
	return c
}
