package kafka_test

import (
	"context"
	"fmt"
	"log"
	"time"

	kafka "github.com/rackfetch/kafka-go"
)

// A Reader with Rack reads from the in-sync replica in its own rack: the
// leader (broker 1, rack a) names broker 2 (rack b), and every record comes
// from there.
func ExampleReader_rack() {
	cluster, stop := startRackCluster("order 1", "order 2", "order 3")
	defer stop()

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: cluster.Addrs(),
		Topic:   "payments",
		Rack:    "b", // the only new line: this client runs in rack b
	})
	defer r.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 0; i < 3; i++ {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("offset %d: %s\n", m.Offset, m.Value)
	}
	rt := r.Stats().Routing[0]
	fmt.Printf("partition %d read from broker %d (rack %s); leader %d\n", rt.Partition, rt.Broker, rt.BrokerRack, rt.Leader)
	// Output:
	// offset 0: order 1
	// offset 1: order 2
	// offset 2: order 3
	// partition 0 read from broker 2 (rack b); leader 1
}

// Stats().Routing says, per partition, where reads go, why they moved and
// how many bytes stayed in the rack.
func ExampleReader_Stats_routing() {
	cluster, stop := startRackCluster("a", "b", "c", "d")
	defer stop()

	r := kafka.NewReader(kafka.ReaderConfig{Brokers: cluster.Addrs(), Topic: "payments", Rack: "b"})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 0; i < 4; i++ {
		if _, err := r.ReadMessage(ctx); err != nil {
			log.Fatal(err)
		}
	}

	for _, rt := range r.Stats().Routing {
		fmt.Printf("%s/%d: broker %d (rack %s), leader %d\n", rt.Topic, rt.Partition, rt.Broker, rt.BrokerRack, rt.Leader)
		fmt.Printf("moves to the preferred replica: %d\n", rt.Reroutes["preferred replica"])
		// The only other-rack bytes are the leader's answer naming the replica.
		fmt.Printf("most bytes from rack b: %v\n", rt.SameRackBytes > rt.OtherRackBytes)
	}
	// Output:
	// payments/0: broker 2 (rack b), leader 1
	// moves to the preferred replica: 1
	// most bytes from rack b: true
}
