package integration

// Integration tests of Conn and Dialer against the real 3-rack cluster of testing/cluster/kafka-cluster:
// metadata and racks, a follower leaving and rejoining the ISR, creating and deleting topics.

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// Metadata lists the three brokers with their racks, RF 3 puts every partition's replicas in the three
// racks, Controller names one of the brokers, and ReadPartitions carries ISR and leader epoch.
func TestClusterMetadataRacks(t *testing.T) {
	c := requireRackCluster(t)
	for _, addr := range c.Brokers {
		brokers, err := dial(t, newDialer(), addr).Brokers()
		if err != nil {
			t.Fatalf("Brokers from %s: %v", addr, err)
		}
		if got, want := brokerIDs(brokers), c.BrokerIDs; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Brokers from %s: ids %v, want %v", addr, got, want)
		}
		for _, b := range brokers {
			if b.Rack != c.Rack(b.ID) {
				t.Errorf("Brokers from %s: broker %d in rack %q, want %q", addr, b.ID, b.Rack, c.Rack(b.ID))
			}
			if got := net.JoinHostPort(b.Host, strconv.Itoa(b.Port)); got != c.Addr(b.ID) {
				t.Errorf("Brokers from %s: broker %d at %s, want %s", addr, b.ID, got, c.Addr(b.ID))
			}
		}
	}

	conn := dial(t, newDialer(), c.Brokers[1])
	ctrl, err := conn.Controller()
	if err != nil {
		t.Fatalf("Controller: %v", err)
	}
	if c.Addr(ctrl.ID) == "" || ctrl.Rack != c.Rack(ctrl.ID) {
		t.Errorf("Controller() = %+v, want one of brokers %v with its rack", ctrl, c.BrokerIDs)
	}

	const partitions = 6
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: partitions})
	ps, err := conn.ReadPartitions(topic)
	if err != nil {
		t.Fatalf("ReadPartitions: %v", err)
	}
	if len(ps) != partitions {
		t.Fatalf("ReadPartitions: %d partitions, want %d", len(ps), partitions)
	}
	for i, p := range ps {
		if p.Topic != topic || p.ID != i {
			t.Errorf("partition %d: %s/%d", i, p.Topic, p.ID)
		}
		racks := map[string]bool{}
		for _, r := range p.Replicas {
			racks[r.Rack] = true
			if r.Rack != c.Rack(r.ID) || r.Host == "" {
				t.Errorf("partition %d: replica %+v, want broker %d's rack %q and address", p.ID, r, r.ID, c.Rack(r.ID))
			}
		}
		if len(p.Replicas) != 3 || len(racks) != 3 {
			t.Errorf("partition %d: replicas %+v, want one in each of the 3 racks", p.ID, p.Replicas)
		}
		if fmt.Sprint(brokerIDs(p.Isr)) != fmt.Sprint(brokerIDs(p.Replicas)) {
			t.Errorf("partition %d: ISR %v, want all replicas %v", p.ID, brokerIDs(p.Isr), brokerIDs(p.Replicas))
		}
		if !hasBroker(p.Replicas, p.Leader.ID) || p.Leader.Rack != c.Rack(p.Leader.ID) {
			t.Errorf("partition %d: leader %+v is not one of its replicas (with its rack)", p.ID, p.Leader)
		}
		if p.LeaderEpoch < 0 {
			t.Errorf("partition %d: leader epoch %d, want >= 0", p.ID, p.LeaderEpoch)
		}
		if len(p.OfflineReplicas) != 0 || p.Error != nil {
			t.Errorf("partition %d: offline replicas %v, error %v", p.ID, p.OfflineReplicas, p.Error)
		}
	}
}

// A killed follower leaves the ISR (writes go on with the two others), and rejoins it after a restart,
// caught up with what was written meanwhile.
func TestClusterFollowerLeavesAndRejoinsISR(t *testing.T) {
	c := requireRackCluster(t)
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	// Leader in rack a; the victim is the follower in rack c.
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: []kafka.ReplicaAssignment{{Partition: 0, Replicas: []int{a, b, cc}}}})
	victim := cc
	survivor := c.Addr(a)

	isr := func(addr string) (kafka.Partition, bool) {
		ps, err := partitionsOn(addr, topic)
		if err != nil || len(ps) != 1 {
			return kafka.Partition{}, false
		}
		return ps[0], true
	}
	before, ok := isr(survivor)
	if !ok || before.Leader.ID != a || !hasBroker(before.Isr, victim) {
		t.Fatalf("before the kill: %+v, want leader %d and %d in the ISR", before, a, victim)
	}

	ktesting.KillBroker(t, victim) // its cleanup starts the broker again if the test stops midway
	var during kafka.Partition
	eventually(t, 30*time.Second, fmt.Sprintf("broker %d out of the ISR", victim), func() bool {
		p, ok := isr(survivor)
		during = p
		return ok && !hasBroker(p.Isr, victim)
	})
	if during.Leader.ID != a || len(during.Isr) != 2 {
		t.Errorf("with broker %d down: leader %d, ISR %v; want leader %d and ISR of the 2 others", victim, during.Leader.ID, brokerIDs(during.Isr), a)
	}
	// Replicas still lists the dead broker.
	if !hasBroker(during.Replicas, victim) {
		t.Errorf("with broker %d down: replicas %v lack it", victim, brokerIDs(during.Replicas))
	}

	// Two in-sync replicas meet min.insync.replicas=2: acks=all writes go on.
	conn := dialLeader(t, newDialer(), survivor, topic, 0)
	_, _, offset, _, err := conn.WriteCompressedMessagesAt(nil, kafka.Message{Key: []byte("k"), Value: []byte("written while a follower was down")})
	if err != nil {
		t.Fatalf("producing with broker %d down: %v", victim, err)
	}

	ktesting.RestartBroker(t, victim)
	eventually(t, 60*time.Second, fmt.Sprintf("broker %d back in the ISR", victim), func() bool {
		p, ok := isr(survivor)
		return ok && hasBroker(p.Isr, victim) && len(p.Isr) == 3
	})
	after, _ := isr(survivor)
	if after.Leader.ID != a {
		t.Errorf("after the restart: leader %d, want %d", after.Leader.ID, a)
	}
	if after.LeaderEpoch < before.LeaderEpoch {
		t.Errorf("leader epoch went back from %d to %d", before.LeaderEpoch, after.LeaderEpoch)
	}
	// Every broker sees the whole ISR again.
	for _, addr := range c.Brokers {
		eventually(t, 30*time.Second, "full ISR on "+addr, func() bool {
			p, ok := isr(addr)
			return ok && len(p.Isr) == 3
		})
	}

	// The restarted follower caught up: it serves the record written while it was down.
	p := after
	for _, r := range p.Replicas {
		if r.ID == victim {
			p.Leader = r
		}
	}
	fconn, err := newDialer().DialPartition(testContext(t, itTimeout), "tcp", survivor, p)
	if err != nil {
		t.Fatalf("dialing the restarted follower %d: %v", victim, err)
	}
	defer fconn.Close()
	msgs := readFrom(t, fconn, offset, 1, kafka.SeekAbsolute|kafka.SeekDontCheck)
	if string(msgs[0].Value) != "written while a follower was down" {
		t.Errorf("restarted follower serves %q at offset %d", msgs[0].Value, offset)
	}
}

// CreateTopics is idempotent; DeleteTopics removes topics from every broker's metadata.
func TestClusterCreateAndDeleteTopics(t *testing.T) {
	c := requireRackCluster(t)
	conn := dialController(t, c)
	t1, t2 := ktesting.UniqueTopic(t), ktesting.UniqueTopic(t)
	cfgs := []kafka.TopicConfig{
		{Topic: t1, NumPartitions: 3, ReplicationFactor: 3},
		{Topic: t2, NumPartitions: 1, ReplicationFactor: 3, ConfigEntries: []kafka.ConfigEntry{{ConfigName: "retention.ms", ConfigValue: "3600000"}}},
	}
	if err := conn.CreateTopics(cfgs...); err != nil {
		t.Fatalf("CreateTopics: %v", err)
	}
	t.Cleanup(func() {
		if conn, err := newDialer().Dial("tcp", c.Brokers[0]); err == nil {
			conn.SetDeadline(time.Now().Add(itTimeout))
			conn.DeleteTopics(t1, t2)
			conn.Close()
		}
	})
	// Creating them again is not an error.
	if err := conn.CreateTopics(cfgs...); err != nil {
		t.Fatalf("CreateTopics of existing topics: %v, want nil", err)
	}
	for _, addr := range c.Brokers {
		eventually(t, 30*time.Second, "topics created on "+addr, func() bool {
			p1, err1 := partitionsOn(addr, t1)
			p2, err2 := partitionsOn(addr, t2)
			return err1 == nil && err2 == nil && settled(p1, 3) && settled(p2, 1)
		})
	}
	ps, err := conn.ReadPartitions(t1, t2)
	if err != nil {
		t.Fatalf("ReadPartitions(%s, %s): %v", t1, t2, err)
	}
	if len(ps) != 4 {
		t.Errorf("ReadPartitions of both topics: %d partitions, want 4", len(ps))
	}

	// A replication factor above the broker count is refused, with the broker's error.
	bad := kafka.TopicConfig{Topic: ktesting.UniqueTopic(t), NumPartitions: 1, ReplicationFactor: 4}
	if err := conn.CreateTopics(bad); !errors.Is(err, kafka.InvalidReplicationFactor) {
		t.Errorf("CreateTopics with RF 4 on 3 brokers: %v, want InvalidReplicationFactor", err)
	}

	if err := conn.DeleteTopics(t1, t2); err != nil {
		t.Fatalf("DeleteTopics: %v", err)
	}
	for _, addr := range c.Brokers {
		for _, topic := range []string{t1, t2} {
			eventually(t, 30*time.Second, fmt.Sprintf("topic %s gone from %s", topic, addr), func() bool {
				_, err := partitionsOn(addr, topic)
				return errors.Is(err, kafka.UnknownTopicOrPartition)
			})
		}
	}
	if err := conn.DeleteTopics(t1); !errors.Is(err, kafka.UnknownTopicOrPartition) {
		t.Errorf("DeleteTopics of a deleted topic: %v, want UnknownTopicOrPartition", err)
	}
}
