package kafka_test

import (
	"context"
	"fmt"
	"log"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// A Reader with Rack reads from the in-sync replica in its own rack: the
// leader (broker 1, rack a) names broker 2 (rack b), and every record comes
// from there.
func ExampleReader_rack() {
	// An in-process fake cluster (package testing/fakebroker): brokers 1,
	// 2, 3 in racks a, b, c, whose leaders name a follower in the client's
	// rack. Use your own cluster's addresses instead.
	cluster, err := fakebroker.Start(fakebroker.Config{
		Brokers: 3, Racks: []string{"a", "b", "c"}, RackAwareSelector: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer cluster.Close()
	cluster.CreateTopic("payments", 1, 3) // one partition led by broker 1
	cluster.AppendRecords("payments", 0, "order 1", "order 2", "order 3")

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
	// An in-process fake cluster (package testing/fakebroker): brokers 1,
	// 2, 3 in racks a, b, c, whose leaders name a follower in the client's
	// rack. Use your own cluster's addresses instead.
	cluster, err := fakebroker.Start(fakebroker.Config{
		Brokers: 3, Racks: []string{"a", "b", "c"}, RackAwareSelector: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer cluster.Close()
	cluster.CreateTopic("payments", 1, 3) // one partition led by broker 1
	cluster.AppendRecords("payments", 0, "a", "b", "c", "d")

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
		fmt.Printf("moves to the preferred replica: %d\n", rt.Reroutes[kafka.ReroutePreferredReplica])
		// The only cross-rack bytes are the leader's answer naming the replica.
		fmt.Printf("most bytes from rack b: %v\n", rt.SameRackBytes > rt.CrossRackBytes)
	}
	// Output:
	// payments/0: broker 2 (rack b), leader 1
	// moves to the preferred replica: 1
	// most bytes from rack b: true
}

// RoutingStats are cumulative (reading them resets nothing): a collector
// or a health check reads them at any rate, for example to check that
// reads stay in the rack.
func ExampleReader_RoutingStats() {
	// An in-process fake cluster (package testing/fakebroker), as above.
	cluster, err := fakebroker.Start(fakebroker.Config{
		Brokers: 3, Racks: []string{"a", "b", "c"}, RackAwareSelector: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer cluster.Close()
	cluster.CreateTopic("payments", 1, 3)
	cluster.AppendRecords("payments", 0, "a", "b")

	r := kafka.NewReader(kafka.ReaderConfig{Brokers: cluster.Addrs(), Topic: "payments", Rack: "c"})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 0; i < 2; i++ {
		if _, err := r.ReadMessage(ctx); err != nil {
			log.Fatal(err)
		}
	}

	s := r.RoutingStats()
	fmt.Printf("rack %s: %.0f%% of the bytes from the same rack\n", s.Rack, 100*s.SameRackRatio())
	for _, b := range s.Brokers {
		fmt.Printf("broker %d (rack %s) served bytes: %v\n", b.ID, b.Rack, b.Bytes > 0)
	}
	fmt.Println("moves to the preferred replica:", s.Reroutes[kafka.ReroutePreferredReplica])
	// Output:
	// rack c: 100% of the bytes from the same rack
	// broker 3 (rack c) served bytes: true
	// moves to the preferred replica: 1
}

// A RerouteReason is a stable ID, the key of the Reroutes maps and the
// metrics' reason label; its sentence is what log lines say.
func ExampleRerouteReason() {
	reason := kafka.RerouteFollowerLagging
	fmt.Println(string(reason))
	fmt.Println(reason.Sentence())
	// Output:
	// follower_lagging
	// follower lagging
}
