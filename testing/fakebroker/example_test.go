package fakebroker_test

import (
	"context"
	"fmt"
	"log"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// A three-rack cluster whose leaders name a follower in the client's rack:
// a Writer produces to the leader, a Reader in rack b reads from broker 2,
// the in-sync replica in its rack. In a test, use NewCluster(t, ...)
// instead of Start and Close.
func Example() {
	cluster, err := fakebroker.Start(fakebroker.Config{
		Brokers:           3,
		Racks:             []string{"a", "b", "c"}, // brokers 1, 2, 3
		RackAwareSelector: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer cluster.Close()
	cluster.CreateTopic("payments", 1, 3) // led by broker 1, replicas 1, 2, 3

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w := &kafka.Writer{Addr: kafka.TCP(cluster.Addrs()...), Topic: "payments", RequiredAcks: kafka.RequireAll}
	if err := w.WriteMessages(ctx,
		kafka.Message{Value: []byte("paid 10")},
		kafka.Message{Value: []byte("paid 20")},
	); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	r := kafka.NewReader(kafka.ReaderConfig{Brokers: cluster.Addrs(), Topic: "payments", Rack: "b"})
	defer r.Close()
	for i := 0; i < 2; i++ {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("offset %d: %s\n", m.Offset, m.Value)
	}

	stats := r.RoutingStats()
	p := stats.Partitions[0]
	fmt.Printf("partition %d: leader %d, read from broker %d in rack %s\n", p.Partition, p.Leader, p.Broker, p.BrokerRack)
	fmt.Printf("share of bytes from rack b: %.0f%%\n", 100*stats.SameRackRatio())
	// Output:
	// offset 0: paid 10
	// offset 1: paid 20
	// partition 0: leader 1, read from broker 2 in rack b
	// share of bytes from rack b: 100%
}

// Broker.Script makes the 3rd fetch the leader receives fail with
// NOT_LEADER_OR_FOLLOWER; the Reader looks the leader up again and goes on
// reading, and the application sees no error.
func ExampleBroker_Script() {
	cluster, err := fakebroker.Start(fakebroker.Config{Brokers: 3})
	if err != nil {
		log.Fatal(err)
	}
	defer cluster.Close()
	cluster.CreateTopic("orders", 1, 3)
	leader := cluster.Broker(1)
	leader.Script(protocol.Fetch, 3, fakebroker.Step{ErrorCode: int16(kafka.NotLeaderOrFollower)})

	r := kafka.NewReader(kafka.ReaderConfig{Brokers: cluster.Addrs(), Topic: "orders"})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	cluster.AppendRecords("orders", 0, "order 1")
	m, err := r.ReadMessage(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("offset %d: %s\n", m.Offset, m.Value)

	// Append the next record only once the failed fetch was answered:
	// the 4th fetch has arrived.
	<-leader.Await(protocol.Fetch, 4)
	cluster.AppendRecords("orders", 0, "order 2")
	m, err = r.ReadMessage(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("offset %d: %s\n", m.Offset, m.Value)
	// kafka-go counts a NOT_LEADER_OR_FOLLOWER answer as a rebalance.
	stats := r.Stats()
	fmt.Printf("NOT_LEADER_OR_FOLLOWER answers: %d, errors: %d\n", stats.Rebalances, stats.Errors)
	// Output:
	// offset 0: order 1
	// offset 1: order 2
	// NOT_LEADER_OR_FOLLOWER answers: 1, errors: 0
}
