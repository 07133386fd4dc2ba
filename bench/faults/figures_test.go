package faults

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/bench/wire"
)

func TestMaxGapCountsFromTheWindowsEdges(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	times := []time.Time{at(0.5), at(1), at(4), at(4.5)}

	assert.Equal(t, 3*time.Second, maxGap(times, at(0), at(5)), "between deliveries")
	assert.Equal(t, 5500*time.Millisecond, maxGap(times, at(0), at(10)), "from the last delivery to the end")
	assert.Equal(t, 2*time.Second, maxGap(times, at(4.6), at(6.6)), "no delivery in the window: all of it")
	assert.Equal(t, time.Duration(0), maxGap(times, at(3), at(3)), "an empty window")
}

func TestRecordCountsLostDuplicatedAndOutOfOrder(t *testing.T) {
	r := newRecord()
	r.acked(0, 0, 3, time.Now())
	r.delivered(0, 10, makeValue(0, 0))
	r.delivered(0, 12, makeValue(0, 2))
	r.delivered(0, 11, makeValue(0, 1)) // below 12: out of order
	r.delivered(0, 12, makeValue(0, 2)) // again: a duplicate
	r.acked(1, 0, 2, time.Now())
	r.delivered(1, 0, makeValue(1, 0)) // sequence 1 never read
	r.delivered(2, 0, []byte("not ours"))

	lost, acked := r.lost()
	assert.Equal(t, int64(1), lost)
	assert.Equal(t, int64(5), acked)
	assert.Equal(t, 1, r.dup)
	assert.Equal(t, 1, r.ooo)
	assert.Equal(t, 1, r.foreign)
}

func TestBehindCountsUnreadRecordsUpToTheHeads(t *testing.T) {
	r := newRecord()
	r.acked(0, 0, 10, time.Now())
	r.acked(1, 0, 5, time.Now())
	heads := r.ackedHeads()
	assert.Equal(t, int64(9), heads[0])
	assert.Equal(t, int64(-1), heads[2], "nothing acknowledged")
	assert.Equal(t, int64(15), r.behind(heads))
	r.delivered(0, 0, makeValue(0, 6))
	r.delivered(1, 0, makeValue(1, 4))
	assert.Equal(t, int64(3), r.behind(heads), "sequences 7 to 9 of partition 0")
	r.acked(0, 10, 10, time.Now())
	assert.Equal(t, int64(3), r.behind(heads), "what was acknowledged after the heads does not count")
}

func TestValueCarriesItsSequence(t *testing.T) {
	for _, seq := range []int64{0, 7, 123456789012} {
		v := makeValue(3, seq)
		require.Len(t, v, valueSize)
		got, ok := parseSeq(v)
		require.True(t, ok)
		assert.Equal(t, seq, got)
	}
}

func TestMovesIgnoreUnreadPartitions(t *testing.T) {
	m := newMoves(map[int]int{0: 2, 1: 2})
	assert.Equal(t, 0, m.update(map[int]int{0: -1, 1: 2}), "a partition between brokers")
	assert.Equal(t, 1, m.update(map[int]int{0: 1, 1: 2}), "partition 0 moved from 2 to 1")
	assert.Equal(t, 2, m.update(map[int]int{0: 2, 1: 3}))
}

func TestCrossRackShareByAddress(t *testing.T) {
	racks := map[string]string{"h:1": "a", "h:2": "b", "h:3": "c"}
	d := wire.Snapshot{"h:1": {BytesRead: 100}, "h:2": {BytesRead: 300}, "other:9": {BytesRead: 100}}
	share, total := crossRack(d, racks, "b")
	assert.Equal(t, int64(500), total)
	assert.InDelta(t, 0.4, share, 1e-9, "rack a and an unknown address are outside rack b")
	share, total = crossRack(wire.Snapshot{}, racks, "b")
	assert.Zero(t, share)
	assert.Zero(t, total)
}

func TestBackNeedsServedPartitionsHomeAndEveryPartitionDelivering(t *testing.T) {
	r := newRecord()
	healAt := time.Now()
	routes := map[int]int{}
	for p := 0; p < Partitions; p++ {
		routes[p] = 2
	}
	assert.False(t, back(routes, r, []int{0, 1}, 2, healAt), "nothing delivered since the heal")
	for p := 0; p < Partitions; p++ {
		r.deliver[p] = append(r.deliver[p], healAt.Add(time.Millisecond))
	}
	routes[1] = 1
	assert.False(t, back(routes, r, []int{0, 1}, 2, healAt), "partition 1 still read elsewhere")
	routes[1] = 2
	assert.True(t, back(routes, r, []int{0, 1}, 2, healAt))
}

func TestRowSaysWhatHappened(t *testing.T) {
	var buf bytes.Buffer
	TableHeader(&buf)
	Row(&buf, Result{Spec: Spec{Client: "rackfetch", Target: TargetFollower, Fault: "blackhole"}, Broker: 2,
		Served: []int{0, 1, 2}, LeftS: -1, LeftFollowedS: 3.25, LeftMost: 2, GapS: 10, GapOthersS: 3.6, CrossRackDuring: 1, BytesDuring: 12_000, BytesAfter: 3_400_000, BackS: 0.8, CaughtUpS: 4.2, LagAtHeal: 9000, InISR: true,
		Rebalances: 1, RequestsPerS: 50, RequestsBeforePerS: 40, RequestsToBrokerPerS: 0.4, DialsToBrokerPerS: 0.3})
	Row(&buf, Result{Spec: Spec{Client: "franz-go", Target: TargetLeader, Fault: "oneway"}, Broker: 1,
		LeftS: -1, BackS: -1, CaughtUpS: -1, ISRSamples: 4})
	Row(&buf, Result{Spec: Spec{Client: "franz-go", Target: TargetLeader, Fault: "oneway"}, Error: "no\ncluster"})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 5)
	cols := strings.Count(lines[0], "|")
	assert.Equal(t, cols, strings.Count(lines[2], "|"), "a row has the header's columns: %s", lines[2])
	assert.Contains(t, lines[2], "| 3.2 s · never (2/3) |")
	assert.Contains(t, lines[2], "10.0 s (3.6 s)")
	assert.Contains(t, lines[2], "100.0 % of 12 kB · 0.0 % of 3.4 MB")
	assert.Contains(t, lines[2], "50.0 (40.0) · 0.4 · 0.30")
	assert.Contains(t, lines[2], "| 0 · 0 · 0 | 0 · 1 |")
	assert.Contains(t, lines[2], "| 0.8 s · 4.2 s (9000) |")
	assert.Contains(t, lines[3], "served none")
	assert.Contains(t, lines[3], "not in 1m0s · not in 1m0s (0)")
	assert.Contains(t, lines[3], "no (4 samples)")
	assert.Contains(t, lines[4], "error: no cluster")
}

func TestAssignmentsLeadTwoPartitionsInEachRack(t *testing.T) {
	leaders := map[int]int{}
	for _, a := range assignments(1, 2, 3) {
		require.ElementsMatch(t, []int{1, 2, 3}, a.Replicas, "partition %d on every broker", a.Partition)
		leaders[a.Replicas[0]]++
	}
	assert.Equal(t, map[int]int{1: 2, 2: 2, 3: 2}, leaders)
}

func TestLogKeepsTheLinesOfTheWindowButCommits(t *testing.T) {
	var l logCount
	l.add(false, "before")
	from := time.Now()
	l.add(false, "kafka reader: committed offsets of group g")
	l.add(true, "error: broker 2 stalled")
	l.add(false, "moved")
	got := l.between(from, time.Now().Add(time.Second), 1)
	require.Len(t, got, 1)
	assert.True(t, strings.HasSuffix(got[0], " error: broker 2 stalled"), got[0])
	assert.Equal(t, int64(4), l.lines.Load())
	assert.Equal(t, int64(1), l.errs.Load())
}
