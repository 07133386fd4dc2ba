package kafka

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// A rack's leader dies (the cluster has not noticed yet: the metadata
// still names it): the batches already placed on its partitions wait for a
// new leader, and the next keyless messages go to the other partitions at
// once instead of joining them.
func TestWriterRackAvoidsAnUnreachableLeader(t *testing.T) {
	c := wrCluster(t)
	w := wtWriter(t, c)
	w.Rack = "b"
	w.DeliveryTimeout = time.Minute
	// Both rack-b partitions get a message, and both fail to reach broker 2.
	var mu sync.Mutex
	failed := map[any]bool{}
	refused := make(chan struct{})
	w.ErrorLogger = LoggerFunc(func(format string, args ...any) {
		// A dial refused, not the connection reset when the broker stopped.
		if !strings.HasPrefix(format, "error writing") || len(args) < 5 || !strings.Contains(fmt.Sprint(args[4]), "connecting to broker") {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !failed[args[2]] && len(failed) == 1 {
			close(refused)
		}
		failed[args[2]] = true
	})
	ctx := wtContext(t)
	require.NoError(t, w.WriteMessages(ctx, wrKeyless(6)...)) // metadata and producer id known
	before := wrPartitions(c)
	require.Equal(t, []int{1, 4}, sortedKeys(before))

	c.Broker(2).StopUnnoticed()
	first := make(chan error, 1)
	go func() { first <- w.WriteMessages(ctx, wrKeyless(2)...) }()
	select {
	case <-refused:
	case <-ctx.Done():
		t.Fatal("the attempts against the stopped broker did not fail")
	}

	// The metadata still names broker 2: the next call goes elsewhere.
	require.NoError(t, w.WriteMessages(ctx, wrKeyless(4)...))
	after := wrPartitions(c)
	assert.Equal(t, before, map[int]int{1: after[1], 4: after[4]}, "nothing more in rack b's partitions yet")
	assert.Equal(t, 4, after[0]+after[2]+after[3]+after[5], "the call's records elsewhere: %v", after)
	select {
	case err := <-first:
		t.Fatalf("the first call ended before its leader was replaced: %v", err)
	default:
	}

	// The cluster elects leaders in other racks: the waiting batches go there.
	c.SetLeader(wtTopic, 1, 1)
	c.SetLeader(wtTopic, 4, 3)
	require.NoError(t, <-first)
}

// The skew guard: a rack left leading 1 of 12 partitions (fair share 4)
// writes to 2 by default (its own, and one of those it led before), and
// to its one with the plain rule (RackMinShare < 0).
func TestWriterRackSkewGuard(t *testing.T) {
	for _, tc := range []struct {
		name     string
		minShare float64
		want     []int
	}{
		{"default guard", 0, []int{1, 4}},
		{"plain KIP-1123 rule", -1, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}})
			c.CreateTopic(wtTopic, 12, 3) // leaders 1, 2, 3, 1, 2, 3...: rack b leads 1, 4, 7, 10
			wtProducerIDs(c)
			for _, p := range []int32{4, 7, 10} {
				c.SetLeader(wtTopic, p, 1)
			}
			w := wtWriter(t, c)
			w.Rack, w.RackMinShare = "b", tc.minShare
			require.NoError(t, w.WriteMessages(wtContext(t), wrKeyless(120)...))
			got := map[int]int{}
			for p := int32(0); p < 12; p++ {
				if n := len(c.Records(wtTopic, p)); n > 0 {
					got[int(p)] = n
				}
			}
			assert.Equal(t, tc.want, sortedKeys(got), "partitions written: %v", got)
		})
	}
}

// A partition whose preferred leader is in the rack but led elsewhere
// makes the Writer read the metadata every second while it writes: the
// leadership's return shows well within a metadata TTL of an hour.
func TestWriterRackSeesLeadershipComeBack(t *testing.T) {
	c := wrCluster(t)
	c.SetLeader(wtTopic, 1, 1) // partition 1 prefers broker 2 (rack b)
	w := wtWriter(t, c)
	w.Rack = "b"
	w.Transport = &Transport{MetadataTTL: time.Hour}
	ctx := wtContext(t)
	require.NoError(t, w.WriteMessages(ctx, wrKeyless(10)...))
	require.Equal(t, []int{4}, sortedKeys(wrPartitions(c)))

	c.SetLeader(wtTopic, 1, 2) // a preferred leader election
	metadataBefore := 0
	for _, b := range c.Brokers() {
		metadataBefore += b.Requests(protocol.Metadata)
	}
	start := time.Now()
	for len(c.Records(wtTopic, 1)) == 0 {
		require.Less(t, time.Since(start), 10*time.Second, "partition 1 not written after its leader came back to rack b")
		require.NoError(t, w.WriteMessages(ctx, wrKeyless(2)...))
	}
	metadata := -metadataBefore
	for _, b := range c.Brokers() {
		metadata += b.Requests(protocol.Metadata)
	}
	t.Logf("back in rack b after %s, %d metadata requests", time.Since(start).Round(time.Millisecond), metadata)
	assert.LessOrEqual(t, metadata, 3+int(time.Since(start)/time.Second), "one metadata request a second at most")
}

func sortedKeys(m map[int]int) []int {
	out := keysOf(m)
	slices.Sort(out)
	return out
}
