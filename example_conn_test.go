package kafka_test

import (
	"context"
	"fmt"
	"log"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// With Dialer.RackID, the leader answers a fetch with no records and names
// the replica in the client's rack (Batch.PreferredReadReplica, -1 when
// none). Read it with a Conn to that replica, seeking with SeekDontCheck:
// followers refuse the ListOffsets request a checked seek sends.
func ExampleDialer_DialLeader() {
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
	cluster.AppendRecords("payments", 0, "hello", "world")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	d := &kafka.Dialer{RackID: "b", Timeout: 5 * time.Second}
	leader, err := d.DialLeader(ctx, "tcp", cluster.Addrs()[0], "payments", 0)
	if err != nil {
		log.Fatal(err)
	}
	batch := leader.ReadBatch(1, 1<<20)
	preferred := batch.PreferredReadReplica()
	batch.Close()
	fmt.Println("leader", leader.Broker().ID, "names replica", preferred)
	leader.Close()

	p, err := d.LookupPartition(ctx, "tcp", cluster.Addrs()[0], "payments", 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range p.Isr {
		if b.ID == preferred {
			p.Leader = b // DialPartition dials the Leader field's broker
		}
	}
	follower, err := d.DialPartition(ctx, "tcp", "", p)
	if err != nil {
		log.Fatal(err)
	}
	defer follower.Close()
	if _, err := follower.Seek(0, kafka.SeekAbsolute|kafka.SeekDontCheck); err != nil {
		log.Fatal(err)
	}
	follower.SetReadDeadline(time.Now().Add(5 * time.Second))
	batch = follower.ReadBatch(1, 1<<20)
	for {
		m, err := batch.ReadMessage()
		if err != nil {
			break
		}
		fmt.Printf("broker %d (rack %s), offset %d: %s\n", follower.Broker().ID, follower.Broker().Rack, m.Offset, m.Value)
	}
	if err := batch.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// leader 1 names replica 2
	// broker 2 (rack b), offset 0: hello
	// broker 2 (rack b), offset 1: world
}
