package integration

// Integration tests of ConsumerGroup against the real 3-rack cluster: members sharing a topic, a member
// leaving, committed offsets coming back, and StartOffset LastOffset not skipping messages across a
// rebalance.

import (
	"fmt"
	"sort"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// cgiSession is the session timeout of these tests: the brokers' minimum
// (group.min.session.timeout.ms), heartbeats at a third of it.
const cgiSession = 6 * time.Second

func cgiConfig(c *ktesting.Cluster, group, topic string) kafka.ConsumerGroupConfig {
	return kafka.ConsumerGroupConfig{
		ID:                group,
		Brokers:           c.Brokers,
		Dialer:            &kafka.Dialer{ClientID: "kafka-go-cg-itest", Timeout: 10 * time.Second},
		Topics:            []string{topic},
		SessionTimeout:    cgiSession,
		HeartbeatInterval: cgiSession / 3,
		RebalanceTimeout:  10 * time.Second,
		JoinGroupBackoff:  time.Second,
	}
}

// cgiCover reports whether the latest generations of members are one
// generation whose assignments are disjoint and cover partitions 0..n-1,
// and returns the offsets they start at.
func cgiCover(members []*cgiMember, topic string, n int) (map[int]int64, bool) {
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
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 6})
	group := "cg-" + topic
	var members []*cgiMember
	for i := 0; i < 3; i++ {
		members = append(members, cgiRun(t, cgiConfig(c, group, topic), nil))
	}
	eventually(t, 60*time.Second, "3 members owning the 6 partitions, disjoint", func() bool {
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
	eventually(t, cgiSession, "the 2 remaining members owning all 6 partitions", func() bool {
		var ok bool
		offsets, ok = cgiCover(members[:2], topic, 6)
		return ok
	})
	took := time.Since(closed)
	t.Logf("rebalanced %v after the member closed", took.Round(time.Millisecond))
	if took > cgiSession {
		t.Errorf("the remaining members owned all partitions %v after the member closed, want <= %v", took, cgiSession)
	}
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
	c := requireRackCluster(t)
	const partitions = 3
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: partitions})
	group := "cg-" + topic
	prod := newRgiProducer(t, c, topic)
	prod.produce(partitions, 3)

	cfg := cgiConfig(c, group, topic)
	cfg.StartOffset = kafka.LastOffset
	m1 := cgiRun(t, cfg, nil)
	eventually(t, 30*time.Second, "the first member owning the partitions", func() bool {
		_, ok := cgiCover([]*cgiMember{m1}, topic, partitions)
		return ok
	})
	first, _ := cgiCover([]*cgiMember{m1}, topic, partitions)
	for p := 0; p < partitions; p++ {
		if first[p] != 3 {
			t.Errorf("partition %d starts at %d, want the concrete end offset 3", p, first[p])
		}
	}

	// Messages arrive before any commit of the member, then a second member
	// joins and the group rebalances.
	prod.produce(partitions, 2)
	m2 := cgiRun(t, cfg, nil)
	var offsets map[int]int64
	eventually(t, 30*time.Second, "2 members owning the partitions", func() bool {
		var ok bool
		offsets, ok = cgiCover([]*cgiMember{m1, m2}, topic, partitions)
		return ok
	})
	for p := 0; p < partitions; p++ {
		if offsets[p] != 3 {
			t.Errorf("after the rebalance partition %d starts at %d, want 3: messages 3 and 4 would be skipped", p, offsets[p])
		}
	}

	// The start offsets are the group's committed offsets.
	var got []string
	for p, o := range rgiCommitted(t, c, group, topic, partitions) {
		got = append(got, fmt.Sprintf("%d:%d", p, o))
	}
	sort.Strings(got)
	if fmt.Sprint(got) != "[0:3 1:3 2:3]" {
		t.Errorf("committed %v, want 3 everywhere", got)
	}
}
