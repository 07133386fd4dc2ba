package kafka

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
)

// clientFuzzKeys are the answers FuzzClientBrokerResponses corrupts.
var clientFuzzKeys = []protocol.ApiKey{
	protocol.Metadata, protocol.ListOffsets, protocol.Fetch, protocol.FindCoordinator, protocol.OffsetCommit,
	protocol.OffsetFetch, protocol.CreateTopics, protocol.ApiVersions,
}

// clientFuzzFetched is a record a Client fetch returned, or the error that
// ended the fetch.
type clientFuzzFetched struct {
	offset     int64
	key, value string
}

// clientFuzzCalls makes the admin calls of one iteration on t/0 (which
// holds log) and returns the records the fetch delivered and the errors
// of every call (nil for one that succeeded).
func clientFuzzCalls(addrs []string) (fetched []clientFuzzFetched, errs []error) {
	cl := &Client{Addr: TCP(addrs...), Timeout: e2eDeadline, Transport: &Transport{DialTimeout: time.Second}}
	defer cl.Transport.(*Transport).CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), e2eDeadline)
	defer cancel()
	_, err := cl.Metadata(ctx, &MetadataRequest{Topics: []string{"t"}})
	errs = append(errs, err)
	_, err = cl.ListOffsets(ctx, &ListOffsetsRequest{Topics: map[string][]OffsetRequest{"t": {FirstOffsetOf(0), LastOffsetOf(0)}}})
	errs = append(errs, err)
	_, err = cl.OffsetCommit(ctx, &OffsetCommitRequest{GroupID: "g", GenerationID: -1, Topics: map[string][]OffsetCommit{"t": {{Partition: 0, Offset: 1}}}})
	errs = append(errs, err)
	_, err = cl.OffsetFetch(ctx, &OffsetFetchRequest{GroupID: "g", Topics: map[string][]int{"t": {0}}})
	errs = append(errs, err)
	_, err = cl.CreateTopics(ctx, &CreateTopicsRequest{Topics: []TopicConfig{{Topic: "n", NumPartitions: 1, ReplicationFactor: 1}}})
	errs = append(errs, err)
	res, err := cl.Fetch(ctx, &FetchRequest{Topic: "t", Partition: 0, Offset: 0, MaxBytes: 1 << 20, MaxWait: 50 * time.Millisecond})
	if err == nil {
		err = res.Error
	}
	for err == nil {
		var r *Record
		if r, err = res.Records.ReadRecord(); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
				break
			}
			break
		}
		k, _ := ReadAll(r.Key)
		v, _ := ReadAll(r.Value)
		fetched = append(fetched, clientFuzzFetched{offset: r.Offset, key: string(k), value: string(v)})
	}
	return fetched, append(errs, err)
}

// TestFuzzClientBrokerResponsesSeeds checks that without corruption every
// call succeeds and the fetch returns the log.
func TestFuzzClientBrokerResponsesSeeds(t *testing.T) {
	c := readerFuzzCluster(t)
	installMutation(c, newE2EMutation(clientFuzzKeys, 0, 0, e2eXor, 0, nil))
	fetched, errs := clientFuzzCalls(c.Addrs())
	for i, err := range errs {
		require.NoError(t, err, "call %d", i)
	}
	log := c.Records("t", 0)
	require.Len(t, fetched, len(log))
	requireFetchedFromLog(t, log, fetched, e2eMutation{}, true)
}

// requireFetchedFromLog checks that fetched are records of log (whose
// values are unique), in the log's order, each once, at their offsets;
// see requireFromLog for what a corrupted Fetch answer may change. With
// ordered, offsets must also increase: a consumer keeps its position, but
// Client.Fetch hands over the batches' offsets as the broker sent them.
func requireFetchedFromLog(t *testing.T, log []protocol.Record, fetched []clientFuzzFetched, m e2eMutation, ordered bool) {
	at := map[string]int{}
	for i, r := range log {
		at[string(r.Value)] = i
	}
	lastOffset, lastIndex := int64(-1), -1
	for _, f := range fetched {
		i, ok := at[f.value]
		require.True(t, ok, "value %q is not in the log (%s answers corrupted: %+v)", f.value, m.key, m)
		require.Greater(t, i, lastIndex, "record %q out of order or repeated (%s answers corrupted: %+v)", f.value, m.key, m)
		if ordered {
			require.Greater(t, f.offset, lastOffset, "offset %d out of order or repeated (%s answers corrupted: %+v)", f.offset, m.key, m)
		}
		lastOffset, lastIndex = f.offset, i
		require.Equal(t, string(log[i].Key), f.key, "key of %q (%s answers corrupted: %+v)", f.value, m.key, m)
		if m.key != protocol.Fetch {
			require.Equal(t, log[i].Offset, f.offset, "offset of %q (%s answers corrupted: %+v)", f.value, m.key, m)
		}
	}
}

// FuzzClientBrokerResponses makes a Client's admin calls against a fake
// whose answers of one kind are corrupted: no panic, bounded time,
// requests and allocations, and a fetch that returns records of the log or
// an error.
func FuzzClientBrokerResponses(f *testing.F) {
	e2eSeeds(len(clientFuzzKeys), func(op, mode byte, pos uint16, patch []byte) { f.Add(op, byte(0), mode, pos, patch) })
	f.Fuzz(func(t *testing.T, op, nth, mode byte, pos uint16, patch []byte) {
		c := readerFuzzCluster(t)
		m := newE2EMutation(clientFuzzKeys, op, nth, mode, pos, patch)
		installMutation(c, m)
		log := c.Records("t", 0)
		var fetched []clientFuzzFetched
		e2eBounded(t, c, m, func() { fetched, _ = clientFuzzCalls(c.Addrs()) })
		requireFetchedFromLog(t, log, fetched, m, m.key != protocol.Fetch)
	})
}
