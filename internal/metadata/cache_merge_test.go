package metadata

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
)

// mdAnswer is one Metadata answer for topic "t": a topic ID (0: none) and,
// per partition, leader and leader epoch.
type mdAnswer struct {
	id      byte
	parts   []mdPart
	comment string
}

type mdPart struct {
	id, leader, epoch int32
	isr               []int32
}

func (a mdAnswer) topics() []protocol.MetadataResponseTopic {
	t := protocol.MetadataResponseTopic{Name: "t"}
	if a.id != 0 {
		t.TopicID[15] = a.id
	}
	for _, p := range a.parts {
		isr := p.isr
		if isr == nil && p.leader >= 0 {
			isr = []int32{p.leader}
		}
		t.Partitions = append(t.Partitions, protocol.MetadataResponsePartition{
			PartitionIndex: p.id, LeaderID: p.leader, LeaderEpoch: p.epoch,
			ReplicaNodes: []int32{1, 2, 3}, IsrNodes: isr,
		})
	}
	return []protocol.MetadataResponseTopic{t}
}

func testBrokers() []protocol.MetadataResponseBroker {
	return []protocol.MetadataResponseBroker{
		{NodeID: 1, Host: "h1", Port: 1}, {NodeID: 2, Host: "h2", Port: 2}, {NodeID: 3, Host: "h3", Port: 3},
	}
}

func TestMergeMonotonic(t *testing.T) {
	type want struct {
		leader, epoch int
		isr           int // number of in-sync replicas
		generation    int
		partitions    int
	}
	tests := []struct {
		name    string
		answers []mdAnswer
		want    want
	}{
		{
			name: "epoch -1 after epoch 5 keeps the floor",
			answers: []mdAnswer{
				{id: 1, parts: []mdPart{{0, 1, 5, nil}}},
				{id: 1, parts: []mdPart{{0, 2, -1, nil}}},
			},
			want: want{leader: 1, epoch: 5, isr: 1, generation: 1, partitions: 1},
		},
		{
			name: "older answer after an epoch -1 answer is ignored",
			answers: []mdAnswer{
				{id: 1, parts: []mdPart{{0, 1, 5, nil}}},
				{id: 1, parts: []mdPart{{0, 2, -1, nil}}},
				{id: 1, parts: []mdPart{{0, 3, 4, nil}}},
			},
			want: want{leader: 1, epoch: 5, isr: 1, generation: 1, partitions: 1},
		},
		{
			name: "newer epoch replaces",
			answers: []mdAnswer{
				{id: 1, parts: []mdPart{{0, 1, 5, nil}}},
				{id: 1, parts: []mdPart{{0, 2, 6, nil}}},
			},
			want: want{leader: 2, epoch: 6, isr: 1, generation: 1, partitions: 1},
		},
		{
			name: "same epoch replaces: an ISR change keeps the leader epoch",
			answers: []mdAnswer{
				{id: 1, parts: []mdPart{{0, 1, 5, []int32{1, 2, 3}}}},
				{id: 1, parts: []mdPart{{0, 1, 5, []int32{1, 3}}}},
			},
			want: want{leader: 1, epoch: 5, isr: 2, generation: 1, partitions: 1},
		},
		{
			name: "without epochs (pre-KIP-320 brokers) answers replace each other",
			answers: []mdAnswer{
				{parts: []mdPart{{0, 1, -1, nil}}},
				{parts: []mdPart{{0, 2, -1, nil}}},
			},
			want: want{leader: 2, epoch: -1, isr: 1, generation: 0, partitions: 1},
		},
		{
			name: "recreated topic: new ID at epoch 0 is accepted",
			answers: []mdAnswer{
				{id: 1, parts: []mdPart{{0, 1, 7, nil}, {1, 2, 9, nil}}},
				{id: 2, parts: []mdPart{{0, 3, 0, nil}}},
			},
			want: want{leader: 3, epoch: 0, isr: 1, generation: 2, partitions: 1},
		},
		{
			name: "old ID after the new one is ignored",
			answers: []mdAnswer{
				{id: 1, parts: []mdPart{{0, 1, 7, nil}}},
				{id: 2, parts: []mdPart{{0, 3, 0, nil}}},
				{id: 1, parts: []mdPart{{0, 1, 8, nil}, {1, 2, 9, nil}}},
			},
			want: want{leader: 3, epoch: 0, isr: 1, generation: 2, partitions: 1},
		},
		{
			name: "answer without ID within an incarnation follows epochs",
			answers: []mdAnswer{
				{id: 1, parts: []mdPart{{0, 1, 7, nil}}},
				{parts: []mdPart{{0, 2, 6, nil}}},
			},
			want: want{leader: 1, epoch: 7, isr: 1, generation: 1, partitions: 1},
		},
		{
			name: "leaderless at a newer epoch replaces: the leader is gone",
			answers: []mdAnswer{
				{id: 1, parts: []mdPart{{0, 1, 5, nil}}},
				{id: 1, parts: []mdPart{{0, -1, 6, []int32{}}}},
			},
			want: want{leader: -1, epoch: 6, isr: 0, generation: 1, partitions: 1},
		},
		{
			name: "leaderless at the same epoch replaces: that epoch's leader died",
			answers: []mdAnswer{
				{id: 1, parts: []mdPart{{0, 1, 5, nil}}},
				{id: 1, parts: []mdPart{{0, -1, 5, []int32{}}}},
			},
			want: want{leader: -1, epoch: 5, isr: 0, generation: 1, partitions: 1},
		},
		{
			name: "leaderless at an older epoch is ignored",
			answers: []mdAnswer{
				{id: 1, parts: []mdPart{{0, 1, 5, nil}}},
				{id: 1, parts: []mdPart{{0, -1, 4, []int32{}}}},
			},
			want: want{leader: 1, epoch: 5, isr: 1, generation: 1, partitions: 1},
		},
		{
			name: "leaderless without epoch is ignored once an epoch is known",
			answers: []mdAnswer{
				{id: 1, parts: []mdPart{{0, 1, 5, nil}}},
				{id: 1, parts: []mdPart{{0, -1, -1, []int32{}}}},
			},
			want: want{leader: 1, epoch: 5, isr: 1, generation: 1, partitions: 1},
		},
		{
			name: "a new leader after a leaderless answer is accepted",
			answers: []mdAnswer{
				{id: 1, parts: []mdPart{{0, 1, 5, nil}}},
				{id: 1, parts: []mdPart{{0, -1, 6, []int32{}}}},
				{id: 1, parts: []mdPart{{0, 1, 5, nil}}}, // lagging broker
				{id: 1, parts: []mdPart{{0, 2, 7, nil}}},
			},
			want: want{leader: 2, epoch: 7, isr: 1, generation: 1, partitions: 1},
		},
		{
			name: "a lagging answer missing a new partition keeps it",
			answers: []mdAnswer{
				{id: 1, parts: []mdPart{{0, 1, 5, nil}, {1, 2, 3, nil}}},
				{id: 1, parts: []mdPart{{0, 1, 5, nil}}},
			},
			want: want{leader: 1, epoch: 5, isr: 1, generation: 1, partitions: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New()
			for _, a := range tt.answers {
				c.Merge(testBrokers(), a.topics())
			}
			p, ok := c.Partition("t", 0)
			require.True(t, ok)
			assert.Equal(t, tt.want.leader, p.Leader.ID, "leader")
			assert.Equal(t, tt.want.epoch, p.LeaderEpoch, "leader epoch")
			assert.Len(t, p.Isr, tt.want.isr, "isr")
			_, gen := c.TopicID("t")
			assert.Equal(t, tt.want.generation, gen, "topic ID generation")
			ps, ok := c.TopicPartitions("t")
			require.True(t, ok)
			assert.Len(t, ps, tt.want.partitions, "partitions")
			if tt.want.partitions == 1 {
				_, ok := c.Partition("t", 1)
				assert.False(t, ok, "a partition of a deleted incarnation is still cached")
			}
		})
	}
}

func TestTopicIDGenerations(t *testing.T) {
	c := New()
	id, gen := c.TopicID("t")
	assert.Zero(t, id)
	assert.Zero(t, gen)
	c.Merge(testBrokers(), mdAnswer{id: 1, parts: []mdPart{{0, 1, 3, nil}}}.topics())
	id1, gen := c.TopicID("t")
	assert.Equal(t, byte(1), id1[15])
	assert.Equal(t, 1, gen)
	c.Merge(testBrokers(), mdAnswer{id: 2, parts: []mdPart{{0, 1, 0, nil}}}.topics())
	c.Merge(testBrokers(), mdAnswer{id: 1, parts: []mdPart{{0, 1, 4, nil}}}.topics())
	id2, gen := c.TopicID("t")
	assert.Equal(t, byte(2), id2[15])
	assert.Equal(t, 2, gen)
	c.Merge(testBrokers(), mdAnswer{id: 3, parts: []mdPart{{0, 1, 0, nil}}}.topics())
	_, gen = c.TopicID("t")
	assert.Equal(t, 3, gen)
}

// Another cluster behind the same bootstrap addresses: what the cache knew
// of the first is forgotten (a lower leader epoch is taken, not dropped as
// stale; brokers it does not have are gone) and the topic's generation
// moves on, whatever topic ID the new cluster gave it.
func TestAnotherCluster(t *testing.T) {
	answer := func(cluster string, brokers []protocol.MetadataResponseBroker, a mdAnswer) *protocol.MetadataResponse {
		return &protocol.MetadataResponse{ClusterID: &cluster, Brokers: brokers, Topics: a.topics()}
	}
	c := New()
	c.MergeAnswer(answer("A", testBrokers(), mdAnswer{id: 1, parts: []mdPart{{0, 3, 7, nil}, {1, 2, 4, nil}}}))
	c.MergeAnswer(answer("A", testBrokers(), mdAnswer{id: 1, parts: []mdPart{{0, 1, 2, nil}}}))
	p, ok := c.Partition("t", 0)
	require.True(t, ok)
	require.Equal(t, 7, p.LeaderEpoch, "the same cluster: an older epoch is stale")
	_, gen := c.TopicID("t")
	require.Equal(t, 1, gen)

	two := testBrokers()[:2]
	c.MergeAnswer(answer("B", two, mdAnswer{id: 1, parts: []mdPart{{0, 1, 0, nil}}}))
	p, ok = c.Partition("t", 0)
	require.True(t, ok)
	assert.Equal(t, 1, p.Leader.ID, "the new cluster's leader")
	assert.Equal(t, 0, p.LeaderEpoch)
	_, ok = c.Partition("t", 1)
	assert.False(t, ok, "a partition only the old cluster had")
	_, ok = c.Broker(3)
	assert.False(t, ok, "a broker only the old cluster had")
	_, gen = c.TopicID("t")
	assert.Equal(t, 2, gen, "the topic's log is another one")

	// An answer without a cluster ID (Metadata v0–v1) changes nothing.
	c.Merge(testBrokers()[:2], mdAnswer{id: 1, parts: []mdPart{{0, 2, 1, nil}}}.topics())
	_, gen = c.TopicID("t")
	assert.Equal(t, 2, gen)
}

// The periodic re-read of a stable cluster converts nothing: the cached
// partitions stay as they are, and any change in a partition or in the
// brokers listed is merged as before.
func TestMergeUnchangedAnswerKeepsEntries(t *testing.T) {
	c := New()
	a := mdAnswer{id: 1, parts: []mdPart{{id: 0, leader: 1, epoch: 3, isr: []int32{1, 2, 3}}, {id: 1, leader: 2, epoch: 3, isr: []int32{2, 3, 1}}}}
	c.Merge(testBrokers(), a.topics())
	before, ok := c.Partition("t", 0)
	require.True(t, ok)

	changes := c.Changes()
	allocs := testing.AllocsPerRun(10, func() { c.Merge(testBrokers(), a.topics()) })
	assert.Equal(t, changes, c.Changes(), "merging what the cache holds counted as a change")
	kept, _ := c.Partition("t", 0)
	assert.Same(t, &before.Isr[0], &kept.Isr[0], "an unchanged partition was converted again")
	// The answer itself (a.topics, testBrokers) allocates; the merge adds the
	// listed brokers' slice only.
	assert.LessOrEqual(t, allocs, 10.0)

	shrunk := mdAnswer{id: 1, parts: []mdPart{{id: 0, leader: 1, epoch: 3, isr: []int32{1, 2}}, {id: 1, leader: 2, epoch: 3, isr: []int32{2, 3, 1}}}}
	c.Merge(testBrokers(), shrunk.topics())
	p, _ := c.Partition("t", 0)
	assert.Len(t, p.Isr, 2, "an ISR change was not merged")
	assert.Greater(t, c.Changes(), changes, "an ISR change did not count")
	changes = c.Changes()

	moved := testBrokers()
	moved[1].Host = "h2-new"
	c.Merge(moved, shrunk.topics())
	p, _ = c.Partition("t", 1)
	assert.Equal(t, "h2-new", p.Leader.Host, "a broker's new address did not reach the partitions naming it")
	assert.Greater(t, c.Changes(), changes, "a broker's change did not count")

	c.Merge(moved[:2], shrunk.topics())
	p, _ = c.Partition("t", 0)
	assert.Equal(t, Broker{ID: 3}, p.Replicas[2], "a broker no longer listed is still named with its address")
}
