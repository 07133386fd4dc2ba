package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/protocol"
)

var (
	krA = kafka.Broker{ID: 1, Host: "h1", Port: 9092, Rack: "a"}
	krB = kafka.Broker{ID: 2, Host: "h2", Port: 9092, Rack: "b"}
	krC = kafka.Broker{ID: 3, Host: "h3", Port: 9092, Rack: "c"}
	krD = kafka.Broker{ID: 4, Host: "h4", Port: 9092, Rack: "b"}
)

func krPart(leader kafka.Broker, isr ...kafka.Broker) kafka.Partition {
	return kafka.Partition{Topic: "t", Leader: leader, Replicas: []kafka.Broker{krA, krB, krC, krD}, Isr: isr}
}

func krPartID(id int, leader kafka.Broker, isr ...kafka.Broker) kafka.Partition {
	p := krPart(leader, isr...)
	p.ID = id
	return p
}

// The Reader's rules for the leader's answer (internal/routing/selector.go): a
// named replica is read only when in the ISR with a host and not offline.
func TestKafkaRackRouteLikeReader(t *testing.T) {
	offline := krPart(krA, krA, krB, krC)
	offline.OfflineReplicas = []kafka.Broker{krB}
	noHost := krPart(krA, krA, kafka.Broker{ID: 2}, krC)
	noHost.Replicas = []kafka.Broker{krA, {ID: 2}, krC}
	for _, tc := range []struct {
		name                                string
		p                                   kafka.Partition
		pref                                int
		rack                                string
		clientSelect, selectorSet, oldFetch bool
		want                                int
		reason                              string
	}{
		{"leader names in-rack ISR replica", krPart(krA, krA, krB, krC), 2, "b", false, true, false, 2, reasonPreferred},
		{"named replica out of the ISR", krPart(krA, krA, krC), 2, "b", false, true, false, 1, reasonNotInISR},
		{"named replica offline", offline, 2, "b", false, true, false, 1, reasonNotInISR},
		{"named replica without host", noHost, 2, "b", false, true, false, 1, reasonNotInISR},
		{"leader in rack", krPart(krB, krA, krB, krC), -1, "b", false, true, false, 2, reasonLeaderInRack},
		{"no in-rack replica", krPart(krA, krA, krB, krC), -1, "x", false, true, false, 1, reasonNoRackReplica},
		{"in-rack replica out of ISR", krPart(krA, krA, krC), -1, "b", false, true, false, 1, reasonNoRackReplica},
		{"no selector", krPart(krA, krA, krB, krC), -1, "b", false, false, false, 1, reasonNoSelector},
		{"selector named none", krPart(krA, krA, krB, krC), -1, "b", false, true, false, 1, reasonNoPreference},
		{"client selection", krPart(krA, krA, krD, krB, krC), -1, "b", true, false, false, 2, reasonClientSelect},
		{"client selection, none in rack", krPart(krA, krA, krC), -1, "b", true, false, false, 1, reasonNoRackReplica},
		{"broker's choice wins over client's", krPart(krA, krA, krB, krD), 4, "b", true, true, false, 4, reasonPreferred},
		{"leader below Fetch v11", krPart(krA, krA, krB, krC), -1, "b", true, true, true, 1, reasonOldFetch},
		{"leader below Fetch v11 but in rack", krPart(krB, krA, krB, krC), -1, "b", true, true, true, 2, reasonLeaderInRack},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lb := BrokerCheck{ID: tc.p.Leader.ID, FetchMaxVersion: 16}
			if tc.selectorSet {
				lb.SelectorClass = rackAwareSelect
			}
			if tc.oldFetch {
				lb.FetchMaxVersion = 10
			}
			got, reason := routeLikeReader(tc.p, tc.pref, tc.rack, tc.clientSelect, lb)
			require.Equal(t, tc.want, got.ID)
			require.Equal(t, tc.reason, reason)
		})
	}
}

func TestKafkaRackClientSelect(t *testing.T) {
	for _, tc := range []struct {
		name string
		rack string
		p    kafka.Partition
		want int
		ok   bool
	}{
		{"leader in rack", "b", krPart(krD, krA, krB, krD), 4, true},
		{"in-rack ISR replica by partition ID (0)", "b", krPart(krA, krA, krD, krB), 2, true},
		{"in-rack ISR replica by partition ID (1)", "b", krPartID(1, krA, krA, krD, krB), 4, true},
		{"in-rack replica out of the ISR skipped", "b", krPart(krA, krA, krD, krC), 4, true},
		{"none in rack", "c", krPart(krA, krA, krB), -1, false},
		{"no rack", "", krPart(krA, krA, krB), -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := clientSelectReplica(tc.rack, tc.p)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestKafkaRackCost(t *testing.T) {
	parts := []PartitionPlan{
		{Partition: 0, InRack: true, LeaderInRack: true},
		{Partition: 1, InRack: true},
		{Partition: 2, InRack: false},
		{Partition: 3, InRack: true},
	}
	rep := []*Report{{Topic: "t", Rack: "b", Partitions: parts}}
	c := estimateCost(rep, 10e6, nil, 0.01) // 10 MB/s, spread evenly
	require.Equal(t, 0.75, c.InRackShare)
	require.Equal(t, 0.25, c.LeaderInRackShare)
	require.InDelta(t, 25920.0, c.GBPerMonth, 1e-9) // 10 MB/s × 30 days
	require.InDelta(t, 25920*0.75, c.CrossGBWithoutRack, 1e-9)
	require.InDelta(t, 25920*0.25, c.CrossGBWithPlan, 1e-9)
	require.InDelta(t, 25920*0.5*0.02, c.SavedUSDPerMonth, 1e-9)

	// Observed bytes weigh the partitions.
	c = estimateCost(rep, 1e6, map[topicPartition]int64{{"t", 0}: 0, {"t", 1}: 100, {"t", 2}: 300, {"t", 3}: 0}, 0.01)
	require.Equal(t, "-observe", c.Source)
	require.Equal(t, int64(400), c.ObservedBytes)
	require.Equal(t, 0.25, c.InRackShare)
	require.Equal(t, 0.0, c.LeaderInRackShare)
}

// batchBytes counts whole batches in the range and stops at a cut one.
func TestKafkaRackBatchBytes(t *testing.T) {
	var set []byte
	var sizes []int64
	for i := 0; i < 3; i++ {
		b := protocol.NewRecordBatchBuilder()
		for j := 0; j < 5; j++ {
			b.Add(protocol.Record{Timestamp: time.Now().UnixMilli(), Value: make([]byte, 10*(i+1))})
		}
		raw, err := b.AppendTo(nil)
		require.NoError(t, err)
		// Offsets 10*i .. 10*i+4 (a gap, as compaction leaves).
		raw[7] = byte(10 * i)
		set = append(set, raw...)
		sizes = append(sizes, int64(len(raw)))
	}
	n, next := batchBytes(set, 0, 25)
	require.Equal(t, sizes[0]+sizes[1]+sizes[2], n)
	require.Equal(t, int64(25), next)

	n, next = batchBytes(set, 5, 20) // the first batch is before the range, the last after it
	require.Equal(t, sizes[1], n)
	require.Equal(t, int64(15), next)

	n, next = batchBytes(set[:len(set)-1], 0, 25) // the last batch cut off
	require.Equal(t, sizes[0]+sizes[1], n)
	require.Equal(t, int64(15), next)

	n, next = batchBytes(set[:30], 0, 25) // not even one header
	require.Zero(t, n)
	require.Equal(t, int64(0), next)
}

// The table names every partition's leader, read replica and reason, and
// the warnings; -json round-trips.
func TestKafkaRackOutput(t *testing.T) {
	rep := &Report{Topic: "t", Rack: "b",
		Brokers:    []BrokerCheck{{ID: 1, Host: "h1:9092", Rack: "a", BrokerRack: "a"}},
		Warnings:   []string{"replica.selector.class is unset on broker(s) 1"},
		Partitions: []PartitionPlan{{Partition: 0, Leader: Replica{1, "a"}, ISR: []int{1, 2}, Preferred: -1, Read: Replica{1, "a"}, Reason: reasonNoSelector}},
	}
	rep.Cost = estimateCost([]*Report{rep}, 1e6, nil, 0.01)
	var tbl bytes.Buffer
	require.NoError(t, writeTable(&tbl, rep))
	for _, want := range []string{"0          1 (a)   [1,2]  none (-1)     1 (a)      no       " + reasonNoSelector,
		"warning: replica.selector.class is unset", "0 of 1 partitions read in rack \"b\"", "saved: $0.00 a month"} {
		require.Contains(t, tbl.String(), want)
	}
	var js bytes.Buffer
	require.NoError(t, writeJSON(&js, rep))
	var back Report
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	require.Equal(t, *rep.Cost, *back.Cost)
	back.Cost = rep.Cost
	require.Equal(t, rep, &back)
}
