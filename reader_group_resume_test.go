package kafka

// Unit tests on the fake brokers: a partition that a rebalance leaves to
// the same group reader resumes after the last message it returned, never
// before (no message returned twice by one Reader), and never after a
// message ReadMessage could not commit (no message lost).

import (
	"context"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// rsGeneration returns the group generation a reader works in (-1: none).
func rsGeneration(r *Reader) int32 {
	g := r.group
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gen == nil {
		return -1
	}
	return g.gen.ID
}

// rsRebalance makes the coordinator answer the next heartbeat with
// RebalanceInProgress and waits for the reader's next generation.
func rsRebalance(t *testing.T, c *fakebroker.Cluster, r *Reader) {
	t.Helper()
	before := rsGeneration(r)
	c.Broker(1).ScriptNext(protocol.Heartbeat, fakebroker.Step{ErrorCode: int16(RebalanceInProgress)})
	cgEventually(t, 10*time.Second, "the next generation", func() bool { return rsGeneration(r) > before })
}

func rsFetch(t *testing.T, r *Reader, want int64) Message {
	t.Helper()
	m, err := r.FetchMessage(rtCtx(t))
	if err != nil {
		t.Fatalf("FetchMessage (want offset %d): %v", want, err)
	}
	if m.Offset != want {
		t.Fatalf("FetchMessage returned offset %d, want %d", m.Offset, want)
	}
	return m
}

// Messages returned by FetchMessage (and FetchBatch) but not committed
// yet are not returned again when the rebalance leaves the partition to
// the reader; the committed offset stays what the application committed.
func TestReaderGroupKeptPartitionResumesAfterReturned(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 10)
	r := rtGroupReader(t, c, "rs1", func(cfg *ReaderConfig) { cfg.HeartbeatInterval = 20 * time.Millisecond })
	for i := int64(0); i < 5; i++ {
		m := rsFetch(t, r, i)
		if i == 1 {
			if err := r.CommitMessages(rtCtx(t), m); err != nil {
				t.Fatal(err)
			}
		}
	}
	rsRebalance(t, c, r)
	rsFetch(t, r, 5)
	b, err := r.FetchBatch(rtCtx(t))
	if err != nil || b.Messages[0].Offset != 6 {
		t.Fatalf("FetchBatch: %v %+v", err, b)
	}
	last := b.Messages[len(b.Messages)-1].Offset
	rsRebalance(t, c, r)
	rtAppend(c, 0, 10, 2)
	rsFetch(t, r, last+1)
	if off, _ := c.Committed("rs1", "t", 0); off != 2 {
		t.Errorf("committed %d, want 2", off)
	}
}

// A message whose commit fails in ReadMessage was never returned: the
// reader returns it again in the next generation.
func TestReaderGroupReadMessageCommitFailureRedelivers(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 10)
	r := rtGroupReader(t, c, "rs2", nil)
	ctx := rtCtx(t)
	for i := int64(0); i < 3; i++ {
		if m, err := r.ReadMessage(ctx); err != nil || m.Offset != i {
			t.Fatalf("ReadMessage: %v, offset %d, want %d", err, m.Offset, i)
		}
	}
	c.Broker(1).ScriptNext(protocol.OffsetCommit, fakebroker.Step{ErrorCode: int16(RebalanceInProgress)})
	if m, err := r.ReadMessage(ctx); err == nil {
		t.Fatalf("ReadMessage returned offset %d despite the failed commit", m.Offset)
	}
	m, err := r.ReadMessage(ctx)
	if err != nil || m.Offset != 3 {
		t.Fatalf("after the failed commit: %v, offset %d, want 3", err, m.Offset)
	}
	if off, _ := c.Committed("rs2", "t", 0); off != 4 {
		t.Errorf("committed %d, want 4", off)
	}
}

// A partition that was someone else's in between starts at the committed
// offset again, not where this reader left it.
func TestReaderGroupPartitionBackResumesAtCommitted(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 2, 1)
	rtAppend(c, 0, 0, 10)
	r := rtGroupReader(t, c, "rs3", func(cfg *ReaderConfig) { cfg.HeartbeatInterval = 20 * time.Millisecond })
	ctx := rtCtx(t)
	for got := 0; got < 5; {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Partition == 0 {
			got++
		}
	}
	// The next generation gives this member partition 1 only; another
	// member reads partition 0 and commits 3.
	c.Broker(1).ScriptNext(protocol.SyncGroup, fakebroker.Step{Edit: func(resp protocol.Response) {
		a := protocol.ConsumerProtocolAssignment{AssignedPartitions: []protocol.ConsumerProtocolTopicPartitions{{Topic: "t", Partitions: []int32{1}}}}
		resp.(*protocol.SyncGroupResponse).Assignment = a.AppendTo(nil)
	}})
	rsRebalance(t, c, r)
	c.Commit("rs3", "t", 0, 3)
	rsRebalance(t, c, r)
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m, err := r.FetchMessage(short)
	if err != nil || m.Partition != 0 || m.Offset != 3 {
		t.Fatalf("FetchMessage: %v, partition %d offset %d, want partition 0 offset 3", err, m.Partition, m.Offset)
	}
}

// A message returned before its partition went to another member, which
// committed further, and came back: committing it later does not move the
// group's offset back.
func TestReaderGroupStaleCommitDoesNotRegress(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 2, 1)
	rtAppend(c, 0, 0, 10)
	r := rtGroupReader(t, c, "rs4", func(cfg *ReaderConfig) { cfg.HeartbeatInterval = 20 * time.Millisecond })
	ctx := rtCtx(t)
	var old Message
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Partition == 0 && m.Offset == 2 {
			old = m
			break
		}
	}
	c.Broker(1).ScriptNext(protocol.SyncGroup, fakebroker.Step{Edit: func(resp protocol.Response) {
		a := protocol.ConsumerProtocolAssignment{AssignedPartitions: []protocol.ConsumerProtocolTopicPartitions{{Topic: "t", Partitions: []int32{1}}}}
		resp.(*protocol.SyncGroupResponse).Assignment = a.AppendTo(nil)
	}})
	rsRebalance(t, c, r)
	c.Commit("rs4", "t", 0, 8) // another member's progress
	rsRebalance(t, c, r)
	if err := r.CommitMessages(ctx, old); err != nil {
		t.Fatal(err)
	}
	if off, _ := c.Committed("rs4", "t", 0); off != 8 {
		t.Errorf("committed %d after committing a stale message, want 8", off)
	}
	// Progress past the floor is committed as usual.
	m := rsFetch(t, r, 8)
	if err := r.CommitMessages(ctx, m); err != nil {
		t.Fatal(err)
	}
	if off, _ := c.Committed("rs4", "t", 0); off != 9 {
		t.Errorf("committed %d, want 9", off)
	}
}

// A commit that keeps failing while the generation goes on: ReadMessage
// returns the error, and the same message again next time, not the one
// after it (which would skip it for good).
func TestReaderGroupReadMessageCommitErrorKeepsMessage(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 10)
	r := rtGroupReader(t, c, "rs5", nil)
	ctx := rtCtx(t)
	if m, err := r.ReadMessage(ctx); err != nil || m.Offset != 0 {
		t.Fatalf("ReadMessage: %v, offset %d", err, m.Offset)
	}
	gen := rsGeneration(r)
	// Every attempt of the commit fails with a retriable error that is not
	// the coordinator's (those are retried until the session ends).
	for i := 0; i < 3; i++ {
		c.Broker(1).ScriptNext(protocol.OffsetCommit, fakebroker.Step{ErrorCode: int16(UnknownTopicOrPartition)})
	}
	if m, err := r.ReadMessage(ctx); err == nil {
		t.Fatalf("ReadMessage returned offset %d despite the failed commit", m.Offset)
	}
	m, err := r.ReadMessage(ctx)
	if err != nil || m.Offset != 1 {
		t.Fatalf("after the failed commit: %v, offset %d, want 1", err, m.Offset)
	}
	if g := rsGeneration(r); g != gen {
		t.Errorf("generation %d, want %d: the error should not have ended it", g, gen)
	}
	if off, _ := c.Committed("rs5", "t", 0); off != 2 {
		t.Errorf("committed %d, want 2", off)
	}
}
