package kafka

// Unit tests of the Reader's group mode on the fake brokers: ordered
// delivery with synchronous commits, periodic commits, and a rebalance
// while messages are queued.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// rtGroupReader is a group reader of topic t with quick group timings.
func rtGroupReader(t testing.TB, c *fakebroker.Cluster, group string, edit func(*ReaderConfig)) *Reader {
	t.Helper()
	return rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.Brokers = c.Addrs()
		cfg.GroupID = group
		cfg.HeartbeatInterval = 50 * time.Millisecond
		cfg.JoinGroupBackoff = 50 * time.Millisecond
		cfg.SessionTimeout = 6 * time.Second
		cfg.RebalanceTimeout = 2 * time.Second
		if edit != nil {
			edit(cfg)
		}
	})
}

// rtReadGroup reads n messages with ReadMessage (committing each) and
// checks each partition's offsets are consecutive from its first one.
func rtReadGroup(t testing.TB, r *Reader, n int, next map[int]int64) {
	t.Helper()
	ctx := rtCtx(t)
	for i := 0; i < n; i++ {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("ReadMessage %d: %v", i, err)
		}
		if want, ok := next[m.Partition]; ok && m.Offset != want {
			t.Fatalf("partition %d: offset %d, want %d", m.Partition, m.Offset, want)
		}
		if string(m.Value) != fmt.Sprintf("v%d", m.Offset) {
			t.Fatalf("partition %d offset %d: value %q", m.Partition, m.Offset, m.Value)
		}
		next[m.Partition] = m.Offset + 1
	}
}

// A group reader reads every partition in order and commits synchronously:
// a second reader of the group starts after what the first committed.
func TestReaderGroupCommits(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 3, 1)
	for p := int32(0); p < 3; p++ {
		rtAppend(c, p, 0, 4)
	}
	r := rtGroupReader(t, c, "g1", nil)
	next := map[int]int64{0: 0, 1: 0, 2: 0}
	rtReadGroup(t, r, 12, next)
	if st := r.Stats(); st.Rebalances < 1 || st.Partition != "-1" || len(st.Routing) != 3 {
		t.Errorf("stats: %+v", st)
	}
	r.Close()

	for p := int32(0); p < 3; p++ {
		rtAppend(c, p, 4, 2)
	}
	r2 := rtGroupReader(t, c, "g1", nil)
	rtReadGroup(t, r2, 6, next)
	for p, off := range next {
		if off != 6 {
			t.Errorf("partition %d at %d, want 6", p, off)
		}
	}
}

// With CommitInterval the commits are periodic and flushed on Close; the
// committed offset is what the application committed, never more.
func TestReaderGroupCommitInterval(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 10)
	r := rtGroupReader(t, c, "g2", func(cfg *ReaderConfig) { cfg.CommitInterval = 20 * time.Millisecond })
	ctx := rtCtx(t)
	var last Message
	for i := 0; i < 6; i++ {
		m, err := r.FetchMessage(ctx)
		if err != nil || m.Offset != int64(i) {
			t.Fatalf("FetchMessage: %v %+v", err, m)
		}
		last = m
	}
	// Only offset 3 is committed although 6 messages were fetched.
	if err := r.CommitMessages(ctx, Message{Topic: "t", Partition: 0, Offset: 3}); err != nil {
		t.Fatal(err)
	}
	_ = last
	r.Close()
	r2 := rtGroupReader(t, c, "g2", nil)
	rtReadGroup(t, r2, 6, map[int]int64{0: 4})
}

// A second member joins while the first has messages of both partitions
// queued: after the rebalance the first never returns a message of the
// partition it lost, so with synchronous commits no message is returned
// twice across the two members, and all are returned.
func TestReaderGroupRebalanceDropsQueue(t *testing.T) {
	const perPartition = 200
	c := rtCluster(t, fakebroker.Config{}, 2, 1)
	for p := int32(0); p < 2; p++ {
		for i := 0; i < perPartition; i += 50 {
			rtAppend(c, p, i, 50)
		}
	}
	edit := func(cfg *ReaderConfig) { cfg.QueueCapacity = 1000 }
	a := rtGroupReader(t, c, "g3", edit)
	seen := map[[2]int64]string{}
	read := func(r *Reader, name string) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		m, err := r.ReadMessage(ctx)
		if err != nil {
			return
		}
		k := [2]int64{int64(m.Partition), m.Offset}
		if other, dup := seen[k]; dup {
			t.Fatalf("partition %d offset %d returned by %s and %s", m.Partition, m.Offset, other, name)
		}
		seen[k] = name
	}
	for len(seen) < 10 {
		read(a, "a")
	}
	b := rtGroupReader(t, c, "g3", edit)
	deadline := time.Now().Add(15 * time.Second)
	for len(seen) < 2*perPartition {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages returned", len(seen), 2*perPartition)
		}
		read(a, "a")
		read(b, "b")
	}
	byB := 0
	for _, who := range seen {
		if who == "b" {
			byB++
		}
	}
	if byB == 0 {
		t.Fatal("the second member got nothing: no rebalance happened")
	}
}

// The topic is deleted and created again under a group reader; then a
// member joins (for another topic) and the reader keeps the partition
// across the rebalance. Whether the reader had read some of the new log
// before the rebalance or none, it must go on after the last message it
// returned from the new log (or from the new log's start), not at the old
// log's higher offset (past the new log's end: the rest would never come).
func TestReaderGroupTopicRecreatedThenRebalance(t *testing.T) {
	for _, readBefore := range []int64{2, 0} {
		t.Run(fmt.Sprintf("%d read before", readBefore), func(t *testing.T) {
			c := rtCluster(t, fakebroker.Config{}, 1, 1)
			c.CreateTopic("u", 1, 1)
			rtAppend(c, 0, 0, 8)
			log := &rtLogger{}
			group := "g-recreated-" + strconv.Itoa(int(readBefore))
			a := rtGroupReader(t, c, group, func(cfg *ReaderConfig) { cfg.Logger = log })
			rtReadGroup(t, a, 8, map[int]int64{0: 0})
			generations := func() (n int) {
				for _, l := range log.all() {
					if strings.Contains(l, ": assigned ") {
						n++
					}
				}
				return n
			}
			require.Equal(t, 1, generations())

			c.DeleteTopic("t")
			c.CreateTopic("t", 1, 1)
			c.AppendRecords("t", 0, "new0", "new1", "new2", "new3")
			ctx := rtCtx(t)
			readNew := func(from, to int64) {
				t.Helper()
				for off := from; off < to; off++ {
					m, err := a.ReadMessage(ctx)
					require.NoError(t, err, "ReadMessage (want offset %d of the new log)", off)
					require.Equal(t, fmt.Sprintf("%d new%d", off, off), fmt.Sprintf("%d %s", m.Offset, m.Value))
				}
			}
			readNew(0, readBefore)

			rtGroupReader(t, c, group, func(cfg *ReaderConfig) { cfg.Topic = "u" })
			require.Eventually(t, func() bool { return generations() == 2 }, 10*time.Second, 5*time.Millisecond,
				"a second generation after the second member joined")
			readNew(readBefore, 4)
		})
	}
}

// A coordinator that is not ready (a fresh cluster still creating
// __consumer_offsets answers NotCoordinator for a while) is retried and
// logged at Logger (not ErrorLogger: it is retried), never returned by
// ReadMessage: kafka-go and the Java consumer wait it out. `make example`
// on a fresh cluster failed on this.
func TestReaderGroupWaitsForCoordinator(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 4)
	const notReady = 7 // more than MaxAttempts (3) twice over
	for n := 1; n <= notReady; n++ {
		c.Broker(1).Script(protocol.JoinGroup, n, fakebroker.Step{ErrorCode: int16(NotCoordinatorForGroup)})
	}
	infoLog, errLog := &rtLogger{}, &rtLogger{}
	r := rtGroupReader(t, c, "g-fresh", func(cfg *ReaderConfig) { cfg.Logger, cfg.ErrorLogger = infoLog, errLog })
	rtReadGroup(t, r, 4, map[int]int64{0: 0})
	if n := c.Broker(1).Requests(protocol.JoinGroup); n <= notReady {
		t.Errorf("%d JoinGroup requests, want more than the %d refused", n, notReady)
	}
	if infoLog.find("Not Coordinator") == "" {
		t.Errorf("the refusals were not logged: %q", infoLog.all())
	}
	if s := errLog.find("Not Coordinator"); s != "" {
		t.Errorf("a refusal was logged at ErrorLogger: %q", s)
	}
}

// An error no retry fixes (here the group is not authorized) reaches the
// application after MaxAttempts joins.
func TestReaderGroupReturnsFatalJoinError(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 4)
	for n := 1; n <= 20; n++ {
		c.Broker(1).Script(protocol.FindCoordinator, n, fakebroker.Step{ErrorCode: int16(GroupAuthorizationFailed)})
	}
	r := rtGroupReader(t, c, "g-denied", nil)
	if _, err := r.ReadMessage(rtCtx(t)); !errors.Is(err, GroupAuthorizationFailed) {
		t.Fatalf("ReadMessage: %v, want GroupAuthorizationFailed", err)
	}
}
