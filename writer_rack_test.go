package kafka

import (
	"math/rand"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// Rack-aware partitioning (Writer.Rack) on the fake cluster: brokers 1, 2
// and 3 in racks a, b and c, and CreateTopic's leaders 1, 2, 3, 1, 2, 3, so
// that rack b leads partitions 1 and 4 of six.

func wrCluster(t *testing.T) *fakebroker.Cluster {
	t.Helper()
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}})
	c.CreateTopic(wtTopic, 6, 3)
	wtProducerIDs(c)
	return c
}

// wrPartitions returns the partitions that hold records, with their counts.
func wrPartitions(c *fakebroker.Cluster) map[int]int {
	out := map[int]int{}
	for p := int32(0); p < 6; p++ {
		if n := len(c.Records(wtTopic, p)); n > 0 {
			out[int(p)] = n
		}
	}
	return out
}

func wrKeyless(n int) []Message {
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i] = Message{Value: []byte("v" + strconv.Itoa(i))}
	}
	return msgs
}

// Every balancer places keyless messages among the rack's partitions only.
func TestWriterRackKeylessMessagesStayInRack(t *testing.T) {
	balancers := []struct {
		name string
		b    Balancer
	}{
		{"default (round-robin)", nil},
		{"RoundRobin", &RoundRobin{}},
		{"LeastBytes", &LeastBytes{}},
		{"Hash", &Hash{}},
		{"ReferenceHash", &ReferenceHash{}},
		{"CRC32Balancer", CRC32Balancer{}},
		{"Murmur2Balancer", Murmur2Balancer{}},
		{"a custom BalancerFunc", BalancerFunc(func(_ Message, ps ...int) int { return ps[rand.Intn(len(ps))] })},
	}
	for _, bc := range balancers {
		t.Run(bc.name, func(t *testing.T) {
			c := wrCluster(t)
			w := wtWriter(t, c)
			w.Balancer, w.Rack = bc.b, "b"
			require.NoError(t, w.WriteMessages(wtContext(t), wrKeyless(60)...))
			got := wrPartitions(c)
			assert.Subset(t, []int{1, 4}, keysOf(got), "partitions written: %v", got)
			if bc.name != "LeastBytes" { // it fills the least loaded one: possibly one of the two
				assert.Len(t, got, 2, "both rack-b partitions used: %v", got)
			}
		})
	}
}

func keysOf(m map[int]int) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Messages a balancer places by content keep the partition they get
// without a Rack: 100 000 keys under each hashing balancer.
func TestWriterRackKeyedMessagesKeepTheirPartition(t *testing.T) {
	c := wrCluster(t)
	balancers := map[string]Balancer{
		"Hash":                       &Hash{},
		"ReferenceHash":              &ReferenceHash{},
		"CRC32Balancer":              CRC32Balancer{},
		"Murmur2Balancer":            Murmur2Balancer{},
		"Murmur2Balancer consistent": Murmur2Balancer{Consistent: true},
	}
	msgs := make([]Message, 100000)
	for i := range msgs {
		msgs[i] = Message{Key: []byte("key-" + strconv.Itoa(i)), Value: []byte("v")}
	}
	all := []int{0, 1, 2, 3, 4, 5}
	for name, b := range balancers {
		t.Run(name, func(t *testing.T) {
			w := wtWriter(t, c)
			w.Balancer, w.Rack = b, "b"
			core, err := w.enter()
			require.NoError(t, err)
			defer w.calls.Done()
			parts, err := w.assignPartitions(wtContext(t), core, msgs)
			require.NoError(t, err)
			moved := 0
			for i := range msgs {
				if parts[i].Partition != b.Balance(msgs[i], all...) {
					moved++
				}
			}
			assert.Zero(t, moved, "keyed messages placed elsewhere than without a rack")
		})
	}
}

// A KeyedBalancer decides: one that says every message is keyed keeps the
// Writer from narrowing the partitions, even for keyless messages.
func TestWriterRackKeyedBalancerDecides(t *testing.T) {
	c := wrCluster(t)
	w := wtWriter(t, c)
	w.Balancer, w.Rack = &everyMessageKeyed{}, "b"
	require.NoError(t, w.WriteMessages(wtContext(t), wrKeyless(60)...))
	assert.Len(t, wrPartitions(c), 6, "all six partitions, as without a rack")
}

type everyMessageKeyed struct{ RoundRobin }

func (*everyMessageKeyed) Keyed(Message) bool { return true }

// The rack's partitions follow the leadership in the metadata: with no
// partition led in rack b, every partition is used; a leader back in rack b
// brings its partition back into the set.
func TestWriterRackFollowsLeadership(t *testing.T) {
	c := wrCluster(t)
	w := wtWriter(t, c)
	w.Rack = "b"
	w.Transport = &Transport{MetadataTTL: time.Millisecond}
	ctx := wtContext(t)
	require.NoError(t, w.WriteMessages(ctx, wrKeyless(12)...))
	require.ElementsMatch(t, []int{1, 4}, keysOf(wrPartitions(c)))

	c.SetLeader(wtTopic, 1, 1)
	c.SetLeader(wtTopic, 4, 3)
	written := func(p int32) int { return len(c.Records(wtTopic, p)) }
	for i := 0; written(0) == 0 || written(2) == 0; i++ {
		require.Less(t, i, 1000, "no write outside rack b after its leaders moved away")
		require.NoError(t, w.WriteMessages(ctx, wrKeyless(6)...))
	}

	c.SetLeader(wtTopic, 4, 2)
	for i := 0; ; i++ {
		require.Less(t, i, 1000, "writes did not come back to partition 4 alone")
		before := map[int32]int{}
		for p := int32(0); p < 6; p++ {
			before[p] = written(p)
		}
		require.NoError(t, w.WriteMessages(ctx, wrKeyless(6)...))
		if written(4) == before[4]+6 {
			break // all six went to the partition led in rack b again
		}
	}
}
