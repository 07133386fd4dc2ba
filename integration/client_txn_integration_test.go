package integration

// Integration test of the Client's transaction requests on the real
// cluster: two transactions made by hand (producer id, partitions, records,
// group offsets), one committed and one aborted, checked with
// read_committed and read_uncommitted Readers and with the group's
// committed offset.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/protocol"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// ctxnTxn is one producer's transactional state: what the requests of a
// transaction carry.
type ctxnTxn struct {
	client   *kafka.Client
	id       string
	pid      int64
	epoch    int16
	sequence int32 // next sequence number on the test's partition
}

// ctxnCoordinator finds the broker coordinating key (keyType 0: a group,
// 1: a transactional id), for the requests the test sends by hand. The
// offsets topic and the transaction log are created on first use, so a
// fresh cluster answers COORDINATOR_NOT_AVAILABLE for a while: that is
// retried.
func ctxnCoordinator(t *testing.T, ctx context.Context, tr *kafka.Transport, c *ktesting.Cluster, key string, keyType int8) net.Addr {
	t.Helper()
	var addr net.Addr
	eventually(t, 30*time.Second, fmt.Sprintf("the coordinator of %q", key), func() bool {
		resp, err := tr.RoundTrip(ctx, kafka.TCP(c.Brokers...), &protocol.FindCoordinatorRequest{
			CoordinatorKey: key, KeyType: keyType, CoordinatorKeys: []string{key},
		})
		if err != nil {
			t.Logf("FindCoordinator %q: %v", key, err)
			return false
		}
		r := resp.(*protocol.FindCoordinatorResponse)
		code, host, port := r.ErrorCode, r.Host, r.Port
		if len(r.Coordinators) > 0 {
			co := r.Coordinators[0]
			code, host, port = co.ErrorCode, co.Host, co.Port
		}
		if code != 0 {
			t.Logf("FindCoordinator %q: %v", key, kafka.Error(code))
			return false
		}
		addr = kafka.TCP(net.JoinHostPort(host, strconv.Itoa(int(port))))
		return true
	})
	return addr
}

// ctxnInitProducer gets a producer id and epoch for a new transactional
// id with Client.InitProducerID. The transaction log is created on first
// use, so a fresh cluster refuses for a while (no coordinator, loading):
// that is retried.
func ctxnInitProducer(t *testing.T, ctx context.Context, c *ktesting.Cluster, tr *kafka.Transport) *ctxnTxn {
	t.Helper()
	txn := &ctxnTxn{
		client: &kafka.Client{Addr: kafka.TCP(c.Brokers...), Timeout: itTimeout, Transport: tr},
		id:     "ctxn-" + ktesting.UniqueTopic(t),
	}
	eventually(t, 30*time.Second, "InitProducerID for "+txn.id, func() bool {
		resp, err := txn.client.InitProducerID(ctx, &kafka.InitProducerIDRequest{TransactionalID: txn.id, TransactionTimeoutMs: 30000})
		if err == nil {
			err = resp.Error
		}
		if err != nil {
			t.Logf("InitProducerID: %v", err)
			return false
		}
		txn.pid, txn.epoch = int64(resp.Producer.ProducerID), int16(resp.Producer.ProducerEpoch)
		return true
	})
	return txn
}

// addPartition adds topic/0 to the transaction. Right after the previous
// transaction ended the coordinator may still be writing its markers and
// answer CONCURRENT_TRANSACTIONS: that is retried.
func (txn *ctxnTxn) addPartition(t *testing.T, ctx context.Context, topic string) {
	t.Helper()
	eventually(t, 20*time.Second, "AddPartitionsToTxn", func() bool {
		resp, err := txn.client.AddPartitionsToTxn(ctx, &kafka.AddPartitionsToTxnRequest{
			TransactionalID: txn.id, ProducerID: int(txn.pid), ProducerEpoch: int(txn.epoch),
			Topics: map[string][]kafka.AddPartitionToTxn{topic: {{Partition: 0}}},
		})
		if err != nil {
			t.Fatalf("AddPartitionsToTxn: %v", err)
		}
		ps := resp.Topics[topic]
		if len(ps) != 1 || ps[0].Partition != 0 {
			t.Fatalf("AddPartitionsToTxn answered %+v, want partition 0 of %s", resp.Topics, topic)
		}
		if errors.Is(ps[0].Error, kafka.ConcurrentTransactions) {
			return false
		}
		if ps[0].Error != nil {
			t.Fatalf("AddPartitionsToTxn: partition 0: %v", ps[0].Error)
		}
		return true
	})
}

// produce writes values to topic/0 as one transactional batch (built
// here: producer id, epoch, sequence and the transactional attribute),
// through Client.RawProduce with the transactional id.
func (txn *ctxnTxn) produce(t *testing.T, ctx context.Context, topic string, values ...string) {
	t.Helper()
	b := protocol.NewRecordBatchBuilder()
	b.Transactional = true
	b.ProducerID, b.ProducerEpoch, b.BaseSequence = txn.pid, txn.epoch, txn.sequence
	now := time.Now().UnixMilli()
	for _, v := range values {
		b.Add(protocol.Record{Timestamp: now, Value: []byte(v)})
	}
	batch, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := txn.client.RawProduce(ctx, &kafka.RawProduceRequest{
		Topic: topic, Partition: 0, RequiredAcks: kafka.RequireAll, TransactionalID: txn.id,
		RawRecords: protocol.RawRecordSet{Reader: bytes.NewReader(batch)},
	})
	if err != nil {
		t.Fatalf("producing to %s/0: %v", topic, err)
	}
	if resp.Error != nil {
		t.Fatalf("producing to %s/0: %v", topic, resp.Error)
	}
	txn.sequence += int32(len(values))
}

// commitOffset adds group to the transaction and commits offset for
// topic/0 in it.
func (txn *ctxnTxn) commitOffset(t *testing.T, ctx context.Context, group, topic string, offset int64) {
	t.Helper()
	ar, err := txn.client.AddOffsetsToTxn(ctx, &kafka.AddOffsetsToTxnRequest{
		TransactionalID: txn.id, ProducerID: int(txn.pid), ProducerEpoch: int(txn.epoch), GroupID: group,
	})
	if err != nil || ar.Error != nil {
		t.Fatalf("AddOffsetsToTxn: %+v, %v", ar, err)
	}
	cr, err := txn.client.TxnOffsetCommit(ctx, &kafka.TxnOffsetCommitRequest{
		TransactionalID: txn.id, GroupID: group, ProducerID: int(txn.pid), ProducerEpoch: int(txn.epoch),
		GenerationID: -1,
		Topics:       map[string][]kafka.TxnOffsetCommit{topic: {{Partition: 0, Offset: offset, Metadata: "ctxn"}}},
	})
	if err != nil {
		t.Fatalf("TxnOffsetCommit: %v", err)
	}
	if ps := cr.Topics[topic]; len(ps) != 1 || ps[0].Partition != 0 || ps[0].Error != nil {
		t.Fatalf("TxnOffsetCommit answered %+v", cr.Topics)
	}
}

func (txn *ctxnTxn) end(t *testing.T, ctx context.Context, commit bool) {
	t.Helper()
	resp, err := txn.client.EndTxn(ctx, &kafka.EndTxnRequest{
		TransactionalID: txn.id, ProducerID: int(txn.pid), ProducerEpoch: int(txn.epoch), Committed: commit,
	})
	if err != nil || resp.Error != nil {
		t.Fatalf("EndTxn(commit=%v): %+v, %v", commit, resp, err)
	}
}

// ctxnStableOffset polls the group's committed offset of topic/0 until no
// transaction holds it (OffsetFetch with RequireStable answers
// UNSTABLE_OFFSET_COMMIT until the markers are written) and returns it. A
// coordinator still loading or moved is asked again.
func ctxnStableOffset(t *testing.T, ctx context.Context, c *ktesting.Cluster, tr *kafka.Transport, group, topic string) (offset int64, metadata string) {
	t.Helper()
	topics := []protocol.OffsetFetchRequestTopic{{Name: topic, PartitionIndexes: []int32{0}}}
	eventually(t, 20*time.Second, "a stable committed offset of "+group, func() bool {
		coord := ctxnCoordinator(t, ctx, tr, c, group, protocol.CoordinatorKeyTypeGroup)
		resp, err := tr.RoundTrip(ctx, coord, &protocol.OffsetFetchRequest{
			GroupID: group, Topics: topics, RequireStable: true,
			Groups: []protocol.OffsetFetchRequestGroup{{GroupID: group, MemberEpoch: -1, Topics: topics}},
		})
		if err != nil {
			t.Fatalf("OffsetFetch: %v", err)
		}
		r := resp.(*protocol.OffsetFetchResponse)
		code, ts := r.ErrorCode, r.Topics
		if len(r.Groups) > 0 {
			code, ts = r.Groups[0].ErrorCode, r.Groups[0].Topics
		}
		if code == 0 && len(ts) == 1 && len(ts[0].Partitions) == 1 {
			p := ts[0].Partitions[0]
			code, offset = p.ErrorCode, p.CommittedOffset
			if p.Metadata != nil {
				metadata = *p.Metadata
			}
		}
		switch err := kafka.Error(code); {
		case code == 0:
			return true
		case err == kafka.UnstableOffsetCommit, err == kafka.GroupLoadInProgress,
			err == kafka.GroupCoordinatorNotAvailable, err == kafka.NotCoordinatorForGroup:
			t.Logf("OffsetFetch: %v", err)
			return false
		default:
			t.Fatalf("OffsetFetch: %v", err)
			return false
		}
	})
	return offset, metadata
}

// ctxnCheckOffsetFetch checks with Client.OffsetFetch that group has
// offset want for topic/0.
func ctxnCheckOffsetFetch(t *testing.T, ctx context.Context, client *kafka.Client, group, topic string, want int64) {
	t.Helper()
	resp, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0}}})
	if err != nil || resp.Error != nil {
		t.Fatalf("OffsetFetch: %+v, %v", resp, err)
	}
	ps := resp.Topics[topic]
	if len(ps) != 1 || ps[0].Partition != 0 || ps[0].Error != nil || ps[0].CommittedOffset != want {
		t.Errorf("OffsetFetch of %s: %+v, want offset %d of partition 0", group, resp.Topics, want)
	}
}

// ctxnRead reads topic/0 from the start with isolation until it has read
// a message whose value is last, and returns the values read.
func ctxnRead(t *testing.T, ctx context.Context, c *ktesting.Cluster, topic string, isolation kafka.IsolationLevel, last string) []string {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: c.Brokers, Topic: topic, Partition: 0, IsolationLevel: isolation,
		MaxWait: 200 * time.Millisecond, StartOffset: kafka.FirstOffset,
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var values []string
	for {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("reading %s with isolation %d after %q: %v", topic, isolation, values, err)
		}
		values = append(values, string(m.Value))
		if string(m.Value) == last {
			return values
		}
	}
}

func ctxnEqual(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// A committed transaction's records and group offset become visible; an
// aborted one's records are visible to read_uncommitted only, and its
// offset is discarded.
func TestClientTxnIntegrationCommitAndAbort(t *testing.T) {
	c := requireRackCluster(t)
	ctx := testContext(t, 90*time.Second)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	group := "ctxn-group-" + ktesting.UniqueTopic(t)
	tr := &kafka.Transport{}
	t.Cleanup(tr.CloseIdleConnections)

	txn := ctxnInitProducer(t, ctx, c, tr)
	// The group has no offset yet; asking also waits for the offsets
	// topic, which a fresh cluster creates on first use.
	if off, _ := ctxnStableOffset(t, ctx, c, tr, group, topic); off != -1 {
		t.Fatalf("committed offset of a new group: %d, want -1", off)
	}

	// Transaction 1: committed.
	txn.addPartition(t, ctx, topic)
	txn.produce(t, ctx, topic, "c0", "c1", "c2")
	txn.commitOffset(t, ctx, group, topic, 42)
	txn.end(t, ctx, true)

	if got := ctxnRead(t, ctx, c, topic, kafka.ReadCommitted, "c2"); !ctxnEqual(got, []string{"c0", "c1", "c2"}) {
		t.Errorf("read_committed after the commit: %q", got)
	}
	if off, meta := ctxnStableOffset(t, ctx, c, tr, group, topic); off != 42 || meta != "ctxn" {
		t.Errorf("committed offset after the commit: %d (metadata %q), want 42 (%q)", off, meta, "ctxn")
	}
	ctxnCheckOffsetFetch(t, ctx, txn.client, group, topic, 42)

	// Transaction 2: aborted.
	txn.addPartition(t, ctx, topic)
	txn.produce(t, ctx, topic, "a0", "a1")
	txn.commitOffset(t, ctx, group, topic, 99)
	txn.end(t, ctx, false)

	// A plain record after the abort bounds what the readers must see.
	conn := dialLeader(t, newDialer(), c.Brokers[0], topic, 0)
	if _, err := conn.WriteMessages(kafka.Message{Value: []byte("after")}); err != nil {
		t.Fatalf("writing after the abort: %v", err)
	}

	if got := ctxnRead(t, ctx, c, topic, kafka.ReadCommitted, "after"); !ctxnEqual(got, []string{"c0", "c1", "c2", "after"}) {
		t.Errorf("read_committed after the abort: %q, want the committed records then %q", got, "after")
	}
	if got := ctxnRead(t, ctx, c, topic, kafka.ReadUncommitted, "after"); !ctxnEqual(got, []string{"c0", "c1", "c2", "a0", "a1", "after"}) {
		t.Errorf("read_uncommitted after the abort: %q, want every record", got)
	}
	if off, _ := ctxnStableOffset(t, ctx, c, tr, group, topic); off != 42 {
		t.Errorf("committed offset after the abort: %d, want 42 (the aborted 99 discarded)", off)
	}
	ctxnCheckOffsetFetch(t, ctx, txn.client, group, topic, 42)

	// The producer's epoch is still current: a stale one is fenced.
	resp, err := txn.client.AddPartitionsToTxn(ctx, &kafka.AddPartitionsToTxnRequest{
		TransactionalID: txn.id, ProducerID: int(txn.pid), ProducerEpoch: int(txn.epoch) - 1,
		Topics: map[string][]kafka.AddPartitionToTxn{topic: {{Partition: 0}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ps := resp.Topics[topic]; len(ps) != 1 || !(errors.Is(ps[0].Error, kafka.ProducerFenced) || errors.Is(ps[0].Error, kafka.InvalidProducerEpoch)) {
		t.Errorf("AddPartitionsToTxn with a stale epoch: %+v, want ProducerFenced", resp.Topics)
	}
}

// Errors the coordinators report are in the responses, as kafka.Error
// values: a producer id that is not the transactional id's, an unknown
// transactional id, offsets of a group the transaction did not add.
func TestClientTxnIntegrationErrors(t *testing.T) {
	c := requireRackCluster(t)
	ctx := testContext(t, 60*time.Second)
	tr := &kafka.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	txn := ctxnInitProducer(t, ctx, c, tr)

	// A producer id that is not the transactional id's.
	resp, err := txn.client.EndTxn(ctx, &kafka.EndTxnRequest{
		TransactionalID: txn.id, ProducerID: int(txn.pid) + 1000, ProducerEpoch: int(txn.epoch), Committed: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(resp.Error, kafka.InvalidProducerIDMapping) {
		t.Errorf("EndTxn with a wrong producer id: Error %v, want InvalidProducerIDMapping", resp.Error)
	}

	// A transactional id the coordinator has never seen.
	ar, err := txn.client.AddOffsetsToTxn(ctx, &kafka.AddOffsetsToTxnRequest{
		TransactionalID: txn.id + "-unknown", ProducerID: int(txn.pid), ProducerEpoch: int(txn.epoch), GroupID: "g",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(ar.Error, kafka.InvalidProducerIDMapping) {
		t.Errorf("AddOffsetsToTxn for an unknown transactional id: Error %v, want InvalidProducerIDMapping", ar.Error)
	}

	// Offsets for a topic that does not exist.
	group := "ctxn-group-" + ktesting.UniqueTopic(t)
	ctxnCoordinator(t, ctx, tr, c, group, protocol.CoordinatorKeyTypeGroup)
	missing := "ctxn-missing-" + ktesting.UniqueTopic(t)
	cr, err := txn.client.TxnOffsetCommit(ctx, &kafka.TxnOffsetCommitRequest{
		TransactionalID: txn.id, GroupID: group,
		ProducerID: int(txn.pid), ProducerEpoch: int(txn.epoch), GenerationID: -1,
		Topics: map[string][]kafka.TxnOffsetCommit{missing: {{Partition: 0, Offset: 1}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ps := cr.Topics[missing]; len(ps) != 1 || !errors.Is(ps[0].Error, kafka.UnknownTopicOrPartition) {
		t.Errorf("TxnOffsetCommit for a missing topic: %+v, want UnknownTopicOrPartition", cr.Topics)
	}

	// Adding a missing topic's partition: refused, and the request's other
	// partitions are not attempted.
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	apr, err := txn.client.AddPartitionsToTxn(ctx, &kafka.AddPartitionsToTxnRequest{
		TransactionalID: txn.id, ProducerID: int(txn.pid), ProducerEpoch: int(txn.epoch),
		Topics: map[string][]kafka.AddPartitionToTxn{missing: {{Partition: 0}}, topic: {{Partition: 0}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ps := apr.Topics[missing]; len(ps) != 1 || !errors.Is(ps[0].Error, kafka.UnknownTopicOrPartition) {
		t.Errorf("AddPartitionsToTxn of a missing topic: %+v, want UnknownTopicOrPartition", apr.Topics)
	}
	if ps := apr.Topics[topic]; len(ps) != 1 || !errors.Is(ps[0].Error, kafka.OperationNotAttempted) {
		t.Errorf("AddPartitionsToTxn of an existing topic next to a missing one: %+v, want OperationNotAttempted", apr.Topics)
	}

	// Offsets of a group the transaction did not add.
	cr, err = txn.client.TxnOffsetCommit(ctx, &kafka.TxnOffsetCommitRequest{
		TransactionalID: txn.id, GroupID: group,
		ProducerID: int(txn.pid), ProducerEpoch: int(txn.epoch), GenerationID: -1,
		Topics: map[string][]kafka.TxnOffsetCommit{topic: {{Partition: 0, Offset: 1}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Brokers from 3.7 on verify that the transaction added the group's
	// offsets partition (KIP-890); older ones store the offsets anyway.
	ps := cr.Topics[topic]
	if len(ps) != 1 || ps[0].Partition != 0 {
		t.Fatalf("TxnOffsetCommit answered %+v, want partition 0 of %s", cr.Topics, topic)
	}
	t.Logf("TxnOffsetCommit without AddOffsetsToTxn on Kafka %s: %v", ktesting.KafkaVersion(), ps[0].Error)
	if ktesting.KafkaIsAtLeast("3.7") && ps[0].Error == nil {
		t.Errorf("TxnOffsetCommit without AddOffsetsToTxn: accepted, want an error (INVALID_TXN_STATE on 3.7)")
	}
}
