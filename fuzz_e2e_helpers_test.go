package kafka

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// The end-to-end fuzz targets run the public API (Reader, Writer, Client)
// against a fake broker whose answers to one kind of request the fuzzer
// corrupts. Raw fuzzed bytes mostly fail to decode at the first field, so
// a mutation starts from the valid answer the fake would send, encoded,
// and replaces, cuts, flips or extends it.

// Modes of an e2eMutation.
const (
	e2eRaw      = iota // the fuzzed bytes replace the body
	e2eTruncate        // the body is cut at pos
	e2eXor             // the fuzzed bytes are XORed into the body at pos
	e2eInsert          // the fuzzed bytes are inserted into the body at pos
	e2eModes
)

// e2eMutation corrupts the answers to one kind of request: the nth (from
// 1, counting every broker's answers) and, with every, all later ones.
type e2eMutation struct {
	key   protocol.ApiKey
	nth   int
	every bool
	mode  int
	pos   int
	patch []byte
}

// newE2EMutation maps the fuzzer's arguments onto a mutation of one of
// keys: op picks the key and whether every later answer is corrupted too,
// nth the first answer corrupted (1..4), mode how.
func newE2EMutation(keys []protocol.ApiKey, op, nth, mode byte, pos uint16, patch []byte) e2eMutation {
	return e2eMutation{
		key:   keys[int(op)%len(keys)],
		every: op&0x80 != 0,
		nth:   1 + int(nth%4),
		mode:  int(mode % e2eModes),
		pos:   int(pos),
		patch: patch,
	}
}

// e2eSeeds gives add the seeds of every key: the valid answer, the answer
// cut after a few bytes, and the answer with a byte flipped.
func e2eSeeds(keys int, add func(op, mode byte, pos uint16, patch []byte)) {
	for op := 0; op < keys; op++ {
		add(byte(op), e2eXor, 0, nil)
		add(byte(op), e2eTruncate, 9, nil)
		add(byte(op), e2eXor, 20, []byte{0xff})
	}
}

// apply returns body corrupted by m.
func (m e2eMutation) apply(body []byte) []byte {
	at := 0
	if len(body) > 0 {
		at = m.pos % (len(body) + 1)
	}
	switch m.mode {
	case e2eRaw:
		return m.patch
	case e2eTruncate:
		return body[:at]
	case e2eXor:
		out := append([]byte(nil), body...)
		for i, b := range m.patch {
			if at+i >= len(out) {
				break
			}
			out[at+i] ^= b
		}
		return out
	default:
		out := append([]byte(nil), body[:at]...)
		out = append(out, m.patch...)
		return append(out, body[at:]...)
	}
}

// mutatedResponse is a valid response that encodes corrupted.
type mutatedResponse struct {
	protocol.Response
	m e2eMutation
}

func (r *mutatedResponse) Encode(e *protocol.Encoder, v int16) {
	valid := protocol.Encoder{Flexible: e.Flexible}
	r.Response.Encode(&valid, v)
	e.B = append(e.B, r.m.apply(valid.B)...)
}

// installMutation makes every broker of c corrupt the answers m selects;
// the others are the fake's defaults. Fetches that find nothing wait out
// their MaxWait, as Kafka's do, so that a caught-up consumer does not poll
// the fake in a tight loop.
func installMutation(c *fakebroker.Cluster, m e2eMutation) {
	var seen atomic.Int64
	for _, b := range c.Brokers() {
		b := b
		answer := func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			resp := b.Default(req, hdr)
			act := fakebroker.Action{}
			if fr, ok := req.(*protocol.FetchRequest); ok && fetchFoundNothing(resp) {
				act.Delay = time.Duration(fr.MaxWaitMs) * time.Millisecond
			}
			if hdr.Key != m.key {
				return resp, act
			}
			n := int(seen.Add(1))
			if resp == nil || n < m.nth || (n > m.nth && !m.every) {
				return resp, act
			}
			return &mutatedResponse{Response: resp, m: m}, act
		}
		b.Handle(m.key, answer)
		if m.key != protocol.Fetch {
			b.Handle(protocol.Fetch, answer)
		}
	}
}

// fetchFoundNothing reports whether a Fetch answer carries neither records
// nor an error.
func fetchFoundNothing(resp protocol.Response) bool {
	fr, ok := resp.(*protocol.FetchResponse)
	if !ok || fr.ErrorCode != 0 {
		return false
	}
	for _, t := range fr.Topics {
		for _, p := range t.Partitions {
			if len(p.Records) > 0 || p.ErrorCode != 0 {
				return false
			}
		}
	}
	return true
}

// e2eCountedKeys are the requests the targets' clients send; their sum
// bounds the traffic of an iteration.
var e2eCountedKeys = []protocol.ApiKey{
	protocol.ApiVersions, protocol.Metadata, protocol.Fetch, protocol.ListOffsets, protocol.Produce,
	protocol.OffsetForLeaderEpoch, protocol.FindCoordinator, protocol.JoinGroup, protocol.SyncGroup,
	protocol.Heartbeat, protocol.LeaveGroup, protocol.OffsetCommit, protocol.OffsetFetch,
	protocol.CreateTopics, protocol.DeleteTopics, protocol.InitProducerId,
}

// e2eRequests returns how many requests the brokers of c received.
func e2eRequests(c *fakebroker.Cluster) int {
	n := 0
	for _, b := range c.Brokers() {
		for _, k := range e2eCountedKeys {
			n += b.Requests(k)
		}
	}
	return n
}

// Bounds of one iteration: its operation runs under e2eDeadline, must be
// over (Close included) by e2eMaxDuration (far past it, so that a busy
// machine is not taken for a hang), may send e2eMaxRequests
// requests (retries with backoff stay far below; a loop without one sends
// thousands) and allocate e2eMaxAlloc bytes.
const (
	e2eDeadline    = 400 * time.Millisecond
	e2eMaxDuration = 5 * time.Second
	e2eMaxRequests = 300
	e2eMaxAlloc    = 64 << 20
)

// e2eBounded runs one iteration of a target: run drives the public API
// against c (corrupted by m) and must return within the bounds above.
func e2eBounded(t *testing.T, c *fakebroker.Cluster, m e2eMutation, run func()) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		run()
	}()
	select {
	case <-done:
	case <-time.After(e2eMaxDuration):
		buf := make([]byte, 1<<20)
		t.Fatalf("still running after %v with %s answers corrupted (%+v); goroutines:\n%s",
			e2eMaxDuration, m.key, m, buf[:runtime.Stack(buf, true)])
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(e2eMaxAlloc), "allocated with %s answers corrupted (%+v)", m.key, m)
	require.LessOrEqual(t, e2eRequests(c), e2eMaxRequests, "requests in %v with %s answers corrupted (%+v)", elapsed, m.key, m)
}

// TestE2EMutationApplies checks that a mutation reaches the client: a
// Metadata answer cut to nothing fails the Client's call, and the second
// answer, left alone, succeeds.
func TestE2EMutationApplies(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{})
	c.CreateTopic("t", 1, 1)
	installMutation(c, newE2EMutation([]protocol.ApiKey{protocol.Metadata}, 0, 0, e2eTruncate, 0, nil))
	cl := &Client{Addr: TCP(c.Addrs()...), Timeout: time.Second, Transport: &Transport{}}
	_, err := cl.Metadata(context.Background(), &MetadataRequest{Topics: []string{"t"}})
	require.Error(t, err)
	_, err = cl.Metadata(context.Background(), &MetadataRequest{Topics: []string{"t"}})
	require.NoError(t, err)
}
