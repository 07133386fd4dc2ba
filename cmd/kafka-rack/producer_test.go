package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/internal/producer"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// 10 MB/s for a 30-day month, in GB.
const gbMonth10MBs = 10e6 * secondsPerMonth / bytesPerGB // 25 920

// fakeProduceTopic adds topic "p" of n partitions to a 3-rack fake cluster:
// partition p is led by broker p%3+1, so in racks a, b, c, a, b, c, ...
func fakeProduceTopic(t *testing.T, n int) *fakebroker.Cluster {
	fc := fakeRacks(t, true)
	fc.CreateTopic("p", n, 3)
	return fc
}

func runReport(t *testing.T, fc *fakebroker.Cluster, args ...string) *Report {
	t.Helper()
	code, out, errOut := runFake(t, fc, append([]string{"-topic", "p", "-json"}, args...)...)
	require.Equal(t, 0, code, "stderr: %s", errOut)
	var rep Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.NotNil(t, rep.Producer, out)
	return &rep
}

// squeezed is a table with the runs of spaces that align its columns made
// one space.
func squeezed(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}

func usedLeaders(p *ProducerPlan) []Replica {
	out := make([]Replica, len(p.Partitions))
	for i, pp := range p.Partitions {
		out[i] = pp.Leader
	}
	return out
}

// A 6-partition topic led in racks a, b, c, a, b, c: a rack-b Writer uses
// partitions 1 and 4, led in b; without a rack 4 of 6 partitions' bytes
// cross zones, with the plan none.
func TestKafkaRackProducerPlan(t *testing.T) {
	fc := fakeProduceTopic(t, 6)
	rep := runReport(t, fc, "-rack", "b", "-produce-rate", "10", "-price", "0.01")
	p := rep.Producer
	assert.Equal(t, "p", p.Topic)
	assert.Equal(t, "b", p.Rack)
	assert.Equal(t, []int{1, 4}, p.Used)
	assert.Equal(t, 6, p.PartitionCount)
	assert.Equal(t, 2, p.Led)
	assert.False(t, p.ToppedUp)
	assert.False(t, p.AllPartitions)
	assert.False(t, p.Displaced)
	assert.Equal(t, producer.DefaultRackMinShare, p.WriterMinShare)
	assert.Equal(t, producer.DefaultRackMinShare, p.GuardShare)
	assert.Equal(t, []ProducerPartition{
		{Partition: 1, Leader: Replica{2, "b"}, InRack: true, Share: 0.5},
		{Partition: 4, Leader: Replica{2, "b"}, InRack: true, Share: 0.5},
	}, p.Partitions)
	assert.InDelta(t, 4.0/6, p.CrossShareWithoutRack, 1e-12)
	assert.Zero(t, p.CrossShareWithPlan)

	c := p.Cost
	require.NotNil(t, c, "the cost of a single report is in its producer plan")
	assert.Equal(t, 10e6, c.BytesPerSecond)
	assert.Equal(t, []string{"b"}, c.Racks)
	assert.InDelta(t, 4.0/6, c.CrossShareWithoutRack, 1e-12)
	assert.Zero(t, c.CrossShareWithPlan)
	assert.InDelta(t, 25920.0, c.GBPerMonth, 1e-9)
	assert.InDelta(t, 17280.0, c.CrossGBWithoutRack, 1e-9) // 25 920 GB × 4/6
	assert.Zero(t, c.CrossGBWithPlan)
	// 17 280 GB no longer cross, billed $0.01 out of one zone and $0.01
	// into the other.
	assert.InDelta(t, 345.60, c.SavedUSDPerMonth, 1e-9)
	assert.Zero(t, c.CostUSDPerMonthAfter)
	assert.Equal(t, 0.01, c.PricePerGBEachWay)
	assert.True(t, hasWarning(c.Assumptions, "replicating it to the followers crosses zones the same with and without Writer.Rack"), "%q", c.Assumptions)
	assert.True(t, hasWarning(c.Assumptions, "Writers in rack b produce every byte"), "%q", c.Assumptions)

	// The table: the consumer's plan, then the producer's.
	code, out, errOut := runFake(t, fc, "-topic", "p", "-rack", "b", "-produce-rate", "10", "-price", "0.01")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	consumer, prod, ok := strings.Cut(out, "\nproducer: ")
	require.True(t, ok, out)
	prod = squeezed(prod)
	assert.Contains(t, consumer, `6 of 6 partitions read in rack "b"`)
	for _, want := range []string{
		"partitions a Writer with Rack sends its keyless messages to (RackMinShare 0.5, the default skew guard)",
		"TOPIC RACK LEADS WRITES TO, ON LEADER EACH GUARD CROSS-ZONE WITHOUT RACK WITH PLAN",
		"p b 2 of 6 1 on 2 (b), 4 on 2 (b) 50.0% not needed 66.7% 0.0%",
		"producer cost (keyless produce 10.000 MB/s from -produce-rate, from rack b)",
		"produce bytes crossing zones: 66.7% without Writer.Rack (every partition in turn), 0.0% with this plan",
		"cross-zone GB a month: 17280.0 without Writer.Rack, 0.0 with it (of 25920.0 GB produced)",
		"saved: $345.60 a month at $0.0100/GB each way (cross-zone cost left: $0.00 a month)",
	} {
		assert.Contains(t, prod, want)
	}

	// Without -produce-rate the plan is printed, its cost is not.
	rep = runReport(t, fc, "-rack", "b")
	assert.Equal(t, []int{1, 4}, rep.Producer.Used)
	assert.Nil(t, rep.Producer.Cost)
	code, out, errOut = runFake(t, fc, "-topic", "p", "-rack", "b")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	assert.Contains(t, out, "1 on 2 (b), 4 on 2 (b)")
	assert.NotContains(t, out, "producer cost")
}

// A fleet over racks a, b, c: each rack produces a third of the rate to
// the partitions it leads, and none of it crosses zones.
func TestKafkaRackProducerFleet(t *testing.T) {
	fc := fakeProduceTopic(t, 6)
	code, out, errOut := runFake(t, fc, "-topic", "p", "-racks", "a,b,c", "-produce-rate", "10", "-price", "0.01", "-json")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	var s Summary
	require.NoError(t, json.Unmarshal([]byte(out), &s), out)
	require.Len(t, s.Reports, 3)
	var used [][]int
	for _, rep := range s.Reports {
		require.NotNil(t, rep.Producer)
		assert.Nil(t, rep.Producer.Cost, "the fleet's cost is in the summary")
		assert.Equal(t, rep.Rack, rep.Producer.Rack)
		for _, pp := range rep.Producer.Partitions {
			assert.Equal(t, rep.Rack, pp.Leader.Rack)
			assert.True(t, pp.InRack)
		}
		used = append(used, rep.Producer.Used)
	}
	assert.Equal(t, [][]int{{0, 3}, {1, 4}, {2, 5}}, used)
	c := s.ProducerCost
	require.NotNil(t, c)
	assert.Equal(t, []string{"a", "b", "c"}, c.Racks)
	assert.InDelta(t, 4.0/6, c.CrossShareWithoutRack, 1e-12)
	assert.Zero(t, c.CrossShareWithPlan)
	assert.InDelta(t, 17280.0, c.CrossGBWithoutRack, 1e-9)
	assert.InDelta(t, 345.60, c.SavedUSDPerMonth, 1e-9)
	assert.True(t, hasWarning(c.Assumptions, "Writers spread evenly over racks a, b, c produce an equal part of the rate each"), "%q", c.Assumptions)

	code, out, errOut = runFake(t, fc, "-topic", "p", "-racks", "a,b,c", "-produce-rate", "10")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	assert.Equal(t, 1, strings.Count(out, "\nproducer: "), "one producer section for the fleet:\n%s", out)
	_, prod, _ := strings.Cut(out, "\nproducer: ")
	prod = squeezed(prod)
	for _, want := range []string{
		"p a 2 of 6 0 on 1 (a), 3 on 1 (a) 50.0%",
		"p b 2 of 6 1 on 2 (b), 4 on 2 (b) 50.0%",
		"p c 2 of 6 2 on 3 (c), 5 on 3 (c) 50.0%",
		"from racks a, b, c, an equal part each",
		"saved: $345.60 a month",
	} {
		assert.Contains(t, prod, want)
	}
	assert.Less(t, strings.Index(out, "over topic(s) p and rack(s) a, b, c"), strings.Index(out, "\nproducer: "), "after the consumers' plans:\n%s", out)
}

// Skew: with 6 partitions a rack's fair share is 2, and the guard wants
// ceil(0.5×2) = 1, so a rack-b leading only partition 1 keeps it alone.
// With 12 (fair share 4, the guard wants 2) it is topped up with a
// partition whose preferred leader is in b; -writer-min-share -1 is the
// plain rule.
func TestKafkaRackProducerSkew(t *testing.T) {
	fc := fakeProduceTopic(t, 6)
	fc.SetLeader("p", 4, 1) // rack a
	p := runReport(t, fc, "-rack", "b", "-produce-rate", "10").Producer
	assert.Equal(t, []int{1}, p.Used)
	assert.Equal(t, 1, p.Led)
	assert.False(t, p.ToppedUp)
	assert.True(t, p.Displaced, "partition 4 prefers broker 2, in rack b")
	assert.InDelta(t, 5.0/6, p.CrossShareWithoutRack, 1e-12)
	assert.Zero(t, p.CrossShareWithPlan)

	fc = fakeProduceTopic(t, 12)
	fc.SetLeader("p", 4, 1)  // rack a
	fc.SetLeader("p", 7, 3)  // rack c
	fc.SetLeader("p", 10, 1) // rack a
	p = runReport(t, fc, "-rack", "b", "-produce-rate", "10", "-price", "0.01").Producer
	assert.Equal(t, []int{1, 4}, p.Used, "topped up with the lowest displaced partition")
	assert.Equal(t, 1, p.Led)
	assert.True(t, p.ToppedUp)
	assert.True(t, p.Displaced)
	assert.Equal(t, []Replica{{2, "b"}, {1, "a"}}, usedLeaders(p))
	assert.Equal(t, []bool{true, false}, []bool{p.Partitions[0].InRack, p.Partitions[1].InRack})
	assert.InDelta(t, 11.0/12, p.CrossShareWithoutRack, 1e-12)
	assert.InDelta(t, 0.5, p.CrossShareWithPlan, 1e-12)
	require.NotNil(t, p.Cost)
	assert.InDelta(t, 25920*(11.0/12-0.5)*0.02, p.Cost.SavedUSDPerMonth, 1e-9)
	assert.InDelta(t, 25920*0.5*0.02, p.Cost.CostUSDPerMonthAfter, 1e-9)

	code, out, errOut := runFake(t, fc, "-topic", "p", "-rack", "b")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	assert.Contains(t, squeezed(out), "p b 1 of 12 1 on 2 (b), 4 on 1 (a) 50.0% topped up +1; leadership displaced 91.7% 50.0%")

	// The Writer's 0 is its default: the same plan.
	assert.Equal(t, []int{1, 4}, runReport(t, fc, "-rack", "b", "-writer-min-share", "0").Producer.Used)

	plain := runReport(t, fc, "-rack", "b", "-writer-min-share", "-1").Producer
	assert.Equal(t, []int{1}, plain.Used)
	assert.False(t, plain.ToppedUp)
	assert.Equal(t, -1.0, plain.WriterMinShare)
	assert.Zero(t, plain.GuardShare)
	assert.Zero(t, plain.CrossShareWithPlan)
	code, out, errOut = runFake(t, fc, "-topic", "p", "-rack", "b", "-writer-min-share", "-1")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	assert.Contains(t, out, "(RackMinShare -1: guard off, KIP-1123's plain rule)")
	assert.Contains(t, squeezed(out), "p b 1 of 12 1 on 2 (b) 100.0% off; leadership displaced 91.7% 0.0%")

	// A stricter guard asks for more: ceil(0.75×4) = 3.
	assert.Equal(t, []int{1, 4, 7}, runReport(t, fc, "-rack", "b", "-writer-min-share", "0.75").Producer.Used)
}

// The adapter gives ChooseRack what the Writer's metadata cache gives it:
// racks by broker id, partitions with their leader, replicas and error.
func TestKafkaRackProducerMetadataView(t *testing.T) {
	md := &kafka.MetadataResponse{
		Brokers: []kafka.Broker{krA, krB, krC},
		Topics: []kafka.Topic{{Name: "t", Partitions: []kafka.Partition{
			{Topic: "t", ID: 0, Leader: krA, Replicas: []kafka.Broker{krA, krB}, Isr: []kafka.Broker{krA, krB}},
			{Topic: "t", ID: 1, Leader: kafka.Broker{ID: -1}, Replicas: []kafka.Broker{krB, krC}, Isr: []kafka.Broker{krC},
				Error: fmt.Errorf("partition 1: %w", kafka.LeaderNotAvailable)},
			{Topic: "t", ID: 2, Leader: krC, Replicas: []kafka.Broker{krC, krA}, Isr: []kafka.Broker{krC}},
		}}, {Name: "gone", Error: kafka.UnknownTopicOrPartition}},
	}
	v := newMetadataView(md)
	assert.Equal(t, map[int]string{1: "a", 2: "b", 3: "c"}, v.Racks())
	assert.Zero(t, v.Changes())
	parts, ok := v.TopicPartitions("t")
	require.True(t, ok)
	require.Len(t, parts, 3)
	assert.Equal(t, 1, parts[0].Leader.ID)
	assert.Equal(t, []int{1, 2}, []int{parts[0].Replicas[0].ID, parts[0].Replicas[1].ID})
	assert.Equal(t, -1, parts[1].Leader.ID)
	assert.Equal(t, int16(kafka.LeaderNotAvailable), parts[1].ErrorCode)
	assert.Zero(t, parts[2].ErrorCode)
	_, ok = v.TopicPartitions("gone")
	assert.False(t, ok)
	assert.Equal(t, int16(-1), errorCode(fmt.Errorf("not a kafka.Error")))

	// Rack b leads none (its partition has no leader, preferring b): every
	// partition is used, the leaderless one counting as crossing.
	p := planProducer(md, "t", "b", producer.DefaultRackMinShare)
	assert.True(t, p.AllPartitions)
	assert.True(t, p.Displaced)
	assert.Equal(t, []int{0, 1, 2}, p.Used)
	assert.Equal(t, []Replica{{1, "a"}, {ID: -1}, {3, "c"}}, usedLeaders(p))
	assert.InDelta(t, 1.0/3, p.Partitions[0].Share, 1e-12)
	assert.Equal(t, 1.0, p.CrossShareWithoutRack)
	assert.Equal(t, 1.0, p.CrossShareWithPlan)
	assert.Equal(t, producer.ChooseRack(v, "t", "a", 3, 0.5).Local, planProducer(md, "t", "a", 0.5).Used)
	c := estimateProducerCost([]*ProducerPlan{p}, 1e6, 0.01)
	assert.True(t, hasWarning(c.Assumptions, "a partition without a leader counts as crossing zones"), "%q", c.Assumptions)

	var tbl bytes.Buffer
	require.NoError(t, writeProducers(&tbl, []*ProducerPlan{p}, nil))
	assert.Contains(t, squeezed(tbl.String()), "t b 0 of 3 all 3 33.3% rack leads none: every partition; leadership displaced 100.0%")
}

// Topics weigh their partitions; racks weigh the same.
func TestKafkaRackProducerCostWeights(t *testing.T) {
	plans := []*ProducerPlan{
		{Topic: "t", Rack: "a", PartitionCount: 6, CrossShareWithoutRack: 4.0 / 6, CrossShareWithPlan: 0},
		{Topic: "t", Rack: "b", PartitionCount: 6, CrossShareWithoutRack: 4.0 / 6, CrossShareWithPlan: 0.5},
		{Topic: "u", Rack: "a", PartitionCount: 2, CrossShareWithoutRack: 1, CrossShareWithPlan: 1},
		{Topic: "u", Rack: "b", PartitionCount: 2, CrossShareWithoutRack: 0, CrossShareWithPlan: 0},
	}
	c := estimateProducerCost(plans, 10e6, 0.01)
	assert.Equal(t, []string{"a", "b"}, c.Racks)
	// t has 6 of the 8 partitions: 3/4 of each rack's bytes.
	assert.InDelta(t, (3.0/4)*(4.0/6)+(1.0/4)*0.5, c.CrossShareWithoutRack, 1e-12)
	assert.InDelta(t, (3.0/4)*0.25+(1.0/4)*0.5, c.CrossShareWithPlan, 1e-12)
	assert.InDelta(t, gbMonth10MBs*(c.CrossShareWithoutRack-c.CrossShareWithPlan)*0.02, c.SavedUSDPerMonth, 1e-9)
	assert.True(t, hasWarning(c.Assumptions, "in proportion to their partitions"), "%q", c.Assumptions)

	// -json round-trips the plan and its cost.
	p := *plans[0]
	p.Used, p.Partitions = []int{0}, []ProducerPartition{{Partition: 0, Leader: Replica{1, "a"}, InRack: true, Share: 1}}
	p.Cost = c
	rep := &Report{Topic: "t", Rack: "a", Partitions: []PartitionPlan{}, Producer: &p}
	var js bytes.Buffer
	require.NoError(t, writeJSON(&js, rep))
	var back Report
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	assert.Equal(t, rep, &back)
	assert.Contains(t, js.String(), `"producer": {`)
	assert.Contains(t, js.String(), `"topped_up": false`)
}

func TestKafkaRackProducerFlags(t *testing.T) {
	base := []string{"-brokers", "h:9092", "-topic", "t", "-rack", "b"}
	cfg, err := parseFlags(base, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, producer.DefaultRackMinShare, cfg.WriterMinShare)
	assert.Zero(t, cfg.ProduceRate)
	cfg, err = parseFlags(append(base, "-produce-rate", "2.5", "-writer-min-share", "-1", "-min-share", "0.9"), &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, 2.5, cfg.ProduceRate)
	assert.Equal(t, -1.0, cfg.WriterMinShare)
	assert.Equal(t, 0.9, cfg.MinShare, "-min-share stays the readers' gate")
	for args, want := range map[string]string{
		"-produce-rate -1":      "-produce-rate -1: must be 0 or more MB/s",
		"-produce-rate NaN":     "-produce-rate NaN: must be 0 or more MB/s",
		"-writer-min-share Inf": "-writer-min-share +Inf: must be a number",
	} {
		_, err := parseFlags(append(base, strings.Fields(args)...), &bytes.Buffer{})
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), want, args)
	}
}
