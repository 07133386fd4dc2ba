package kafka

// Integration tests of ConsumerGroup against the real 3-broker cluster of
// testing/cluster/kafka-cluster: members sharing a topic, a member leaving,
// committed offsets coming back, and StartOffset LastOffset not skipping
// messages across a rebalance. Skipped without a cluster (see ktesting).

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"testing"
	"time"

	ktesting "github.com/rackfetch/kafka-go/testing"
)

// cgiSession is the session timeout of these tests: the brokers' minimum
// (group.min.session.timeout.ms), heartbeats at a third of it.
const cgiSession = 6 * time.Second

func cgiConfig(c *ktesting.Cluster, group, topic string) ConsumerGroupConfig {
	return ConsumerGroupConfig{
		ID:                group,
		Brokers:           c.Brokers,
		Dialer:            &Dialer{ClientID: "kafka-go-cg-itest", Timeout: 10 * time.Second},
		Topics:            []string{topic},
		SessionTimeout:    cgiSession,
		HeartbeatInterval: cgiSession / 3,
		RebalanceTimeout:  10 * time.Second,
		JoinGroupBackoff:  time.Second,
	}
}

// cgiTopic creates a topic with RF 3 and waits until every partition has a
// leader.
func cgiTopic(t *testing.T, c *ktesting.Cluster, partitions int) string {
	t.Helper()
	topic := ktesting.UniqueTopic(t)
	d := &Dialer{Timeout: 10 * time.Second}
	conn, err := itestDialController(d, c.Brokers[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if err := conn.CreateTopics(TopicConfig{Topic: topic, NumPartitions: partitions, ReplicationFactor: 3}); err != nil {
		t.Fatalf("creating %s: %v", topic, err)
	}
	t.Cleanup(func() {
		if conn, err := itestDialController(d, c.Brokers[0]); err == nil {
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			conn.DeleteTopics(topic)
			conn.Close()
		}
	})
	// Every broker must know the topic: the group leader may read metadata
	// from any of them.
	cgEventually(t, 30*time.Second, "every broker knowing the leaders of "+topic, func() bool {
		for _, addr := range c.Brokers {
			conn, err := d.Dial("tcp", addr)
			if err != nil {
				return false
			}
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			ps, err := conn.ReadPartitions(topic)
			conn.Close()
			if err != nil || len(ps) != partitions {
				return false
			}
			for _, p := range ps {
				if p.Leader.ID < 0 || p.Leader.Host == "" {
					return false
				}
			}
		}
		return true
	})
	return topic
}

// cgiProduce writes n messages to each partition of topic.
func cgiProduce(t *testing.T, c *ktesting.Cluster, topic string, partitions, n int) {
	t.Helper()
	d := &Dialer{Timeout: 10 * time.Second}
	for p := 0; p < partitions; p++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		conn, err := d.DialLeader(ctx, "tcp", c.Brokers[0], topic, p)
		cancel()
		if err != nil {
			t.Fatalf("dialing the leader of %s/%d: %v", topic, p, err)
		}
		conn.SetDeadline(time.Now().Add(30 * time.Second))
		msgs := make([]Message, n)
		for i := range msgs {
			msgs[i].Value = []byte(fmt.Sprintf("m%d", i))
		}
		_, err = conn.WriteMessages(msgs...)
		conn.Close()
		if err != nil {
			t.Fatalf("producing to %s/%d: %v", topic, p, err)
		}
	}
}

// cgiCover reports whether the latest generations of members are one
// generation whose assignments are disjoint and cover partitions 0..n-1,
// and returns the offsets they start at.
func cgiCover(members []*cgMember, topic string, n int) (map[int]int64, bool) {
	var id int32 = -1
	offsets := map[int]int64{}
	for _, m := range members {
		g := m.latest()
		if g == nil || (id >= 0 && g.ID != id) {
			return nil, false
		}
		id = g.ID
		for _, pa := range g.Assignments[topic] {
			if _, dup := offsets[pa.ID]; dup {
				return nil, false
			}
			offsets[pa.ID] = pa.Offset
		}
	}
	if len(offsets) != n {
		return nil, false
	}
	for p := 0; p < n; p++ {
		if _, ok := offsets[p]; !ok {
			return nil, false
		}
	}
	return offsets, true
}

// Three members share a 6-partition topic; when one closes, the other two
// own all six within a session timeout, starting at the offsets committed in
// the previous generation.
func TestConsumerGroupIntegrationMembers(t *testing.T) {
	c := ktesting.RequireCluster(t)
	topic := cgiTopic(t, c, 6)
	group := "cg-" + topic
	var members []*cgMember
	for i := 0; i < 3; i++ {
		cg, err := NewConsumerGroup(cgiConfig(c, group, topic))
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, cgRun(t, cg, func(gen *Generation) {
			gen.Start(func(ctx context.Context) { <-ctx.Done() })
		}))
	}
	cgEventually(t, 60*time.Second, "3 members owning the 6 partitions, disjoint", func() bool {
		_, ok := cgiCover(members, topic, 6)
		return ok
	})
	for _, m := range members {
		if n := len(m.latest().Assignments[topic]); n != 2 {
			t.Errorf("member %s owns %d partitions, want 2", m.latest().MemberID, n)
		}
	}

	// Every member commits 100+p for its partitions.
	for _, m := range members {
		g := m.latest()
		offsets := map[int]int64{}
		for _, pa := range g.Assignments[topic] {
			offsets[pa.ID] = 100 + int64(pa.ID)
		}
		if err := g.CommitOffsets(map[string]map[int]int64{topic: offsets}); err != nil {
			t.Fatalf("member %s commits: %v", g.MemberID, err)
		}
	}

	closed := time.Now()
	members[2].cg.Close()
	var offsets map[int]int64
	cgEventually(t, cgiSession, "the 2 remaining members owning all 6 partitions", func() bool {
		var ok bool
		offsets, ok = cgiCover(members[:2], topic, 6)
		return ok
	})
	t.Logf("rebalanced %v after the member closed", time.Since(closed).Round(time.Millisecond))
	for p := 0; p < 6; p++ {
		if offsets[p] != 100+int64(p) {
			t.Errorf("partition %d starts at %d, want the committed %d", p, offsets[p], 100+p)
		}
	}
}

// StartOffset LastOffset on a new group: the members start at the concrete
// end offsets of the moment the group got the partitions, committed at once,
// so messages produced before the first commit survive a rebalance.
func TestConsumerGroupIntegrationLastOffset(t *testing.T) {
	c := ktesting.RequireCluster(t)
	const partitions = 3
	topic := cgiTopic(t, c, partitions)
	group := "cg-" + topic
	cgiProduce(t, c, topic, partitions, 3)

	cfg := cgiConfig(c, group, topic)
	cfg.StartOffset = LastOffset
	cg1, err := NewConsumerGroup(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m1 := cgRun(t, cg1, nil)
	cgEventually(t, 30*time.Second, "the first member owning the partitions", func() bool {
		_, ok := cgiCover([]*cgMember{m1}, topic, partitions)
		return ok
	})
	first, _ := cgiCover([]*cgMember{m1}, topic, partitions)
	for p := 0; p < partitions; p++ {
		if first[p] != 3 {
			t.Errorf("partition %d starts at %d, want the concrete end offset 3", p, first[p])
		}
	}

	// Messages arrive before any commit of the member, then a second member
	// joins and the group rebalances.
	cgiProduce(t, c, topic, partitions, 2)
	cg2, err := NewConsumerGroup(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m2 := cgRun(t, cg2, nil)
	var offsets map[int]int64
	cgEventually(t, 30*time.Second, "2 members owning the partitions", func() bool {
		var ok bool
		offsets, ok = cgiCover([]*cgMember{m1, m2}, topic, partitions)
		return ok
	})
	for p := 0; p < partitions; p++ {
		if offsets[p] != 3 {
			t.Errorf("after the rebalance partition %d starts at %d, want 3: messages 3 and 4 would be skipped", p, offsets[p])
		}
	}

	// The start offsets are the group's committed offsets.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g := m2.latest()
	all := map[string][]int{topic: {0, 1, 2}}
	committed, err := g.committedOffsets(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for p, o := range committed[topic] {
		got = append(got, fmt.Sprintf("%d:%d", p, o))
	}
	sort.Strings(got)
	if fmt.Sprint(got) != "[0:3 1:3 2:3]" {
		t.Errorf("committed %v, want 3 everywhere", got)
	}
}

// itestDialController connects to the cluster's controller: ZooKeeper-based
// brokers (Kafka 2.x) take CreateTopics and DeleteTopics only there, as
// kafka-go's Conn documents; KRaft brokers forward them from anywhere.
func itestDialController(d *Dialer, bootstrap string) (*Conn, error) {
	conn, err := d.Dial("tcp", bootstrap)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ctrl, err := conn.Controller()
	if err != nil {
		return nil, err
	}
	return d.Dial("tcp", net.JoinHostPort(ctrl.Host, strconv.Itoa(ctrl.Port)))
}
