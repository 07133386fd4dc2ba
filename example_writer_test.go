package kafka_test

import (
	"context"
	"fmt"
	"log"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// The Writer is kafka-go's: writes always go to partition leaders (racks
// only change where reads come from). A lone synchronous write returns
// when the leader has it, without waiting for BatchTimeout.
func ExampleWriter() {
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	w := &kafka.Writer{
		Addr:         kafka.TCP(cluster.Addrs()...),
		Topic:        "payments",
		Balancer:     &kafka.LeastBytes{},
		RequiredAcks: kafka.RequireAll,
	}
	err = w.WriteMessages(ctx,
		kafka.Message{Key: []byte("alice"), Value: []byte("paid 10")},
		kafka.Message{Key: []byte("bob"), Value: []byte("paid 20")},
	)
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	r := kafka.NewReader(kafka.ReaderConfig{Brokers: cluster.Addrs(), Topic: "payments", Rack: "c"})
	defer r.Close()
	for i := 0; i < 2; i++ {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s\n", m.Key, m.Value)
	}
	// Output:
	// alice: paid 10
	// bob: paid 20
}
