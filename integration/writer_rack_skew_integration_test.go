package integration

// The skew table of rack-aware partitioning (Writer.Rack) on the real 3-rack cluster: where keyless records
// land with producers in 1, 2 and 3 racks, under the default skew guard and under KIP-1123's plain rule, with
// balanced leadership and after a restart that left rack b leading 1 of its 4 partitions. The rows are logged
// with the prefix WRITERSKEWTABLE (README, "Skew").

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

const wsPartitions = 12

// wsRow is one measured row: the records each partition got, and the produce bytes that crossed racks.
type wsRow struct {
	layout, producers, rule string
	counts                  []int64
	crossShare              float64
}

func (r wsRow) used() int {
	n := 0
	for _, c := range r.counts {
		if c > 0 {
			n++
		}
	}
	return n
}

// maxShare is the largest share of the row's records one partition got.
func (r wsRow) maxShare() float64 {
	var top, sum int64
	for _, c := range r.counts {
		sum += c
		top = max(top, c)
	}
	return float64(top) / float64(sum)
}

func TestWriterIntegrationRackSkewTable(t *testing.T) {
	c := requireRackCluster(t)
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	ktesting.LockCluster(t) // broker b restarts midway
	assign := make([]kafka.ReplicaAssignment, wsPartitions)
	for p := range assign {
		assign[p] = kafka.ReplicaAssignment{Partition: p, Replicas: [][]int{{a, b, cc}, {b, cc, a}, {cc, a, b}}[p%3]}
	}
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: assign})
	ctx := testContext(t, 5*time.Minute)
	cl := &kafka.Client{Addr: kafka.TCP(c.Addr(a))}

	racks := [][]string{{"b"}, {"a", "b"}, {"a", "b", "c"}}
	var rows []wsRow
	measure := func(layout string) {
		for _, rs := range racks {
			for _, rule := range []struct {
				name     string
				minShare float64
			}{{"guard (default)", 0}, {"plain KIP-1123", -1}} {
				before := wsCounts(t, c, topic)
				var same, other int64
				for _, rack := range rs {
					w := &kafka.Writer{Addr: kafka.TCP(c.Brokers...), Topic: topic, Rack: rack, RackMinShare: rule.minShare,
						RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
					for i := 0; i < 12; i++ {
						msgs := make([]kafka.Message, 100)
						for j := range msgs {
							msgs[j] = kafka.Message{Value: []byte(fmt.Sprintf("%s-%d-%d", rack, i, j))}
						}
						require.NoError(t, w.WriteMessages(ctx, msgs...))
					}
					tot := w.Totals()
					same, other = same+tot.SameRackBytes, other+tot.OtherRackBytes
					require.NoError(t, w.Close())
				}
				after := wsCounts(t, c, topic)
				row := wsRow{layout: layout, producers: strings.Join(rs, ", "), rule: rule.name, counts: make([]int64, wsPartitions),
					crossShare: float64(other) / float64(same+other)}
				for p := range after {
					row.counts[p] = after[p] - before[p]
				}
				rows = append(rows, row)
			}
		}
	}

	measure("balanced: each rack leads 4 of 12")

	// Broker b restarts: its partitions move to a and c, and one preferred leader election gives it one back.
	ktesting.KillBroker(t, b)
	eventually(t, time.Minute, "partitions led outside rack b", func() bool {
		for _, p := range wkMetadata(ctx, cl, topic) {
			if p.Leader.ID == b || p.Leader.ID < 0 {
				return false
			}
		}
		return true
	})
	ktesting.RestartBroker(t, b)
	eventually(t, 2*time.Minute, "broker b back in every ISR", func() bool {
		return wkInISRs(ctx, cl, topic, b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
	})
	admin := dialController(t, c)
	eventually(t, time.Minute, "broker b leads partition 1", func() bool {
		electPreferredLeader(ctx, admin, topic, 1)
		return wkLeader(ctx, cl, topic, 1) == b
	})
	measure("after a restart: rack b leads 1 of its 4")
	for p, want := range map[int]int{1: b, 4: -b, 7: -b, 10: -b} {
		if l := wkLeader(ctx, cl, topic, p); (want > 0) != (l == b) {
			t.Fatalf("partition %d changed leader during the measurement (now %d): the cluster rebalanced leaders", p, l)
		}
	}

	t.Log("WRITERSKEWTABLE | leadership | producers in racks | rule | partitions used | largest partition's share (even: 8.3 %) | produce bytes across racks | records per partition |")
	t.Log("WRITERSKEWTABLE |---|---|---|---|---|---|---|")
	for _, r := range rows {
		t.Logf("WRITERSKEWTABLE | %s | %s | %s | %d of %d | %.1f %% | %.1f %% | %v |", r.layout, r.producers, r.rule, r.used(), wsPartitions,
			100*r.maxShare(), 100*r.crossShare, r.counts)
	}

	// What the guard must show: the same as the plain rule while leadership is balanced; after the restart, the
	// rack-b producers' records over 2 partitions instead of 1, half of their bytes across racks.
	for i := 0; i < len(rows); i += 2 {
		guard, plain := rows[i], rows[i+1]
		if i < 6 {
			assert.Equal(t, plain.used(), guard.used(), "balanced, producers in %s", guard.producers)
			assert.Zero(t, guard.crossShare, "balanced, producers in %s: bytes across racks", guard.producers)
		}
		assert.LessOrEqual(t, guard.maxShare(), plain.maxShare()+0.01, "%s, producers in %s", guard.layout, guard.producers)
	}
	onlyB, onlyBPlain := rows[6], rows[7]
	assert.Equal(t, 1, onlyBPlain.used(), "plain rule: rack b's one partition takes everything")
	assert.InDelta(t, 1, onlyBPlain.maxShare(), 0.001)
	assert.Equal(t, 2, onlyB.used(), "guard: rack b's partition and one it led before")
	assert.InDelta(t, 0.5, onlyB.maxShare(), 0.05)
	assert.InDelta(t, 0.5, onlyB.crossShare, 0.05)
}

// wsCounts returns the end offset of every partition of topic.
func wsCounts(t *testing.T, c *ktesting.Cluster, topic string) []int64 {
	t.Helper()
	out := make([]int64, wsPartitions)
	for p := range out {
		// Right after an election the new leader may not know its epoch yet (a retriable error).
		var err error
		eventually(t, 30*time.Second, fmt.Sprintf("the end of partition %d", p), func() bool {
			conn := dialLeader(t, newDialer(), c.Brokers[0], topic, p)
			defer conn.Close()
			out[p], err = conn.ReadLastOffset()
			return err == nil
		})
	}
	return out
}
