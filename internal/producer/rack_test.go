package producer

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rackfetch/kafka-go/internal/metadata"
)

// rackView is a topic "t" whose partition p has the replicas replicas[p],
// led by leaders[p], on brokers 1, 2, 3 in racks a, b, c.
type rackView struct {
	leaders  []int
	replicas [][]int
	changes  uint64
}

func (v *rackView) Changes() uint64       { return v.changes }
func (v *rackView) Racks() map[int]string { return map[int]string{1: "a", 2: "b", 3: "c"} }
func (v *rackView) TopicPartitions(topic string) ([]metadata.Partition, bool) {
	if topic != "t" {
		return nil, false
	}
	out := make([]metadata.Partition, len(v.leaders))
	for p, l := range v.leaders {
		out[p] = metadata.Partition{Topic: topic, ID: p, Leader: metadata.Broker{ID: l}}
		for _, r := range v.replicas[p] {
			out[p].Replicas = append(out[p].Replicas, metadata.Broker{ID: r})
		}
	}
	return out, true
}

// balanced returns n partitions led by their preferred replicas 1, 2, 3, 1...
func balanced(n int) *rackView {
	v := &rackView{}
	for p := 0; p < n; p++ {
		first := p%3 + 1
		v.leaders = append(v.leaders, first)
		v.replicas = append(v.replicas, []int{first, first%3 + 1, (first+1)%3 + 1})
	}
	return v
}

func TestChooseRack(t *testing.T) {
	led := func(v *rackView, leaders map[int]int) *rackView {
		for p, l := range leaders {
			v.leaders[p] = l
		}
		return v
	}
	for _, tc := range []struct {
		name     string
		view     *rackView
		minShare float64
		want     RackChoice
	}{
		{"balanced", balanced(6), DefaultRackMinShare, RackChoice{Local: []int{1, 4}, Led: 2}},
		{"balanced, no guard", balanced(6), 0, RackChoice{Local: []int{1, 4}, Led: 2}},
		{"one of two moved away: still half the fair share", led(balanced(6), map[int]int{4: 1}), DefaultRackMinShare,
			RackChoice{Local: []int{1}, Led: 1, Displaced: true}},
		{"none left", led(balanced(6), map[int]int{1: 3, 4: 1}), DefaultRackMinShare, RackChoice{Displaced: true}},
		{"1 of 12 (fair share 4): topped up to 2 with a displaced one", led(balanced(12), map[int]int{4: 1, 7: 3, 10: 1}), DefaultRackMinShare,
			RackChoice{Local: []int{1, 4}, Led: 1, Displaced: true}},
		{"1 of 12, nothing displaced: topped up with the lowest ids", &rackView{
			leaders:  []int{1, 1, 1, 1, 2, 3, 3, 3, 3, 3, 1, 1},
			replicas: [][]int{{1}, {1}, {1}, {1}, {2}, {3}, {3}, {3}, {3}, {3}, {1}, {1, 2}},
		}, DefaultRackMinShare, RackChoice{Local: []int{0, 4}, Led: 1}},
		{"1 of 12, guard at 1", led(balanced(12), map[int]int{4: 1, 7: 3, 10: 1}), 1,
			RackChoice{Local: []int{1, 4, 7, 10}, Led: 1, Displaced: true}},
		{"1 of 12, no guard", led(balanced(12), map[int]int{4: 1, 7: 3, 10: 1}), 0,
			RackChoice{Local: []int{1}, Led: 1, Displaced: true}},
		{"2 of 12: half the fair share", led(balanced(12), map[int]int{7: 3, 10: 1}), DefaultRackMinShare,
			RackChoice{Local: []int{1, 4}, Led: 2, Displaced: true}},
		{"leading another rack's partition is not displacement", led(balanced(6), map[int]int{0: 2}), DefaultRackMinShare,
			RackChoice{Local: []int{0, 1, 4}, Led: 3}},
		{"no leader", led(balanced(6), map[int]int{1: -1}), DefaultRackMinShare, RackChoice{Local: []int{4}, Led: 1, Displaced: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ChooseRack(tc.view, "t", "b", len(tc.view.leaders), tc.minShare))
		})
	}
	assert.Equal(t, RackChoice{}, ChooseRack(balanced(6), "unknown", "b", 6, DefaultRackMinShare))
	assert.Equal(t, RackChoice{Local: []int{1}, Led: 1}, ChooseRack(balanced(6), "t", "b", 3, DefaultRackMinShare),
		"only the partitions below count")
}

func TestRackPartitionsFollowChanges(t *testing.T) {
	var rp RackPartitions
	v := balanced(6)
	assert.Equal(t, []int{1, 4}, rp.Of(v, "t", "b", 6, DefaultRackMinShare).Local)
	v.leaders[4] = 1
	assert.Equal(t, []int{1, 4}, rp.Of(v, "t", "b", 6, DefaultRackMinShare).Local, "cached until the metadata changes")
	v.changes++
	assert.Equal(t, []int{1}, rp.Of(v, "t", "b", 6, DefaultRackMinShare).Local)
	assert.Equal(t, []int{1, 4}, rp.Of(v, "t", "b", 6, 0.75).Local, "another guard: computed again")
}

// A displacement keeps the time it began across metadata changes, until
// it ends.
func TestRackPartitionsDisplacedSince(t *testing.T) {
	var rp RackPartitions
	v := balanced(6)
	assert.True(t, rp.Of(v, "t", "b", 6, DefaultRackMinShare).DisplacedSince.IsZero())
	v.leaders[4], v.changes = 1, v.changes+1
	since := rp.Of(v, "t", "b", 6, DefaultRackMinShare).DisplacedSince
	assert.False(t, since.IsZero())
	v.leaders[1], v.changes = 3, v.changes+1
	c := rp.Of(v, "t", "b", 6, DefaultRackMinShare)
	assert.True(t, c.Displaced)
	assert.Equal(t, since, c.DisplacedSince, "still the same displacement")
	v.leaders[1], v.leaders[4], v.changes = 2, 2, v.changes+1
	assert.True(t, rp.Of(v, "t", "b", 6, DefaultRackMinShare).DisplacedSince.IsZero(), "over")
}
