package kafka

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/internal/consumer"
	"github.com/rackfetch/kafka-go/protocol"
)

// The path check of a probe: a broker that is reachable may still sit
// behind a path too lossy or throttled to carry what the share's Readers
// read (readMeter.rate, over the last readRateWindow). The probe fetches,
// from the broker, records the Readers already read from a partition it
// holds in sync: about pathSeconds of their reads must arrive within a
// second divided by pathMargin. That needs no permission beyond the READ
// the Readers already have. When no recent read fits (none of the broker's
// partitions was read lately, or the offsets are gone), the broker's own
// configuration with its documentation (DescribeConfigs v3+, about 90 KB
// from memory) is the sample, which needs DESCRIBE_CONFIGS on the cluster.
// An idle share needs only reachability, and so does a probe that can
// measure nothing.
const (
	pathMargin     = 2
	readRateWindow = 16 * time.Second

	// The bytes a path-check fetch asks for: a second of what the Readers
	// need, within these bounds. Below pathCheckMinBytes an answer says
	// more about latency than about the path's capacity.
	pathCheckMinBytes = 16 << 10
	pathCheckMaxBytes = 1 << 20
	// pathCheckFetches bounds the fetches of one check: an answer with too
	// few records comes back at once, and the next sample may hold more.
	pathCheckFetches = 3
)

func (s *engineShare) checkPath(ctx context.Context, c *Conn, id int) error {
	need := s.reads.rate(time.Now()) * pathMargin
	if need <= 0 {
		return nil
	}
	tries := 0
	for _, smp := range s.reads.samples(time.Now()) {
		if tries == pathCheckFetches || !s.inSyncOn(smp.tp, id) {
			continue
		}
		tries++
		if measured, err := checkPathByFetch(ctx, c, smp, need); measured || err != nil {
			return err
		}
	}
	return checkPathByConfig(ctx, c, id, need)
}

// inSyncOn reports whether broker id is in the ISR of tp, as the metadata
// last said: such a replica holds every record below the leader's high
// watermark, so every offset the Readers read.
func (s *engineShare) inSyncOn(tp topicPartition, id int) bool {
	p, ok := s.cluster.partition(tp.topic, tp.partition)
	if !ok {
		return false
	}
	return slices.ContainsFunc(p.Isr, func(b Broker) bool { return b.ID == id })
}

// checkPathByFetch fetches, on c, the records of smp's partition from the
// offset the Readers read then. It reports whether the answer measured the
// path (enough records came back), and ErrSlowPath when they came too
// slowly or not at all.
func checkPathByFetch(ctx context.Context, c *Conn, smp readSample, need float64) (bool, error) {
	size := int32(min(max(need, pathCheckMinBytes), pathCheckMaxBytes))
	req := &protocol.FetchRequest{
		ReplicaID: -1, MaxWaitMs: 0, MinBytes: 1, MaxBytes: size, SessionEpoch: -1,
		Topics: []protocol.FetchRequestTopic{{Topic: smp.tp.topic, Partitions: []protocol.FetchRequestPartition{{
			Partition: int32(smp.tp.partition), FetchOffset: smp.offset, CurrentLeaderEpoch: -1,
			LastFetchedEpoch: -1, LogStartOffset: -1, PartitionMaxBytes: size,
		}}}},
	}
	t0 := time.Now()
	// v11 and v12 name topics; any replica serves a consumer's fetch from
	// v11 (KIP-392).
	r, v, err := c.roundTrip(ctx, req, 12)
	took := time.Since(t0)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded) {
			return true, fmt.Errorf("%w: no answer to a %s request within %v", consumer.ErrSlowPath, req.Key(), took.Round(time.Millisecond))
		}
		return false, nil
	}
	resp := r.(*protocol.FetchResponse)
	if v < 11 || resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return false, nil
	}
	p := &resp.Topics[0].Partitions[0]
	n := len(p.Records)
	if p.ErrorCode != 0 || n < pathCheckMinBytes {
		return false, nil
	}
	return true, pathTooSlow(req.Key(), n, took, need)
}

// checkPathByConfig measures the path with the broker's configuration; a
// broker that refuses the request (no DESCRIBE_CONFIGS permission, an old
// broker) leaves reachability as all the probe shows.
func checkPathByConfig(ctx context.Context, c *Conn, id int, need float64) error {
	req := &protocol.DescribeConfigsRequest{IncludeDocumentation: true,
		Resources: []protocol.DescribeConfigsRequestResource{{ResourceType: int8(ResourceTypeBroker), ResourceName: strconv.Itoa(id)}}}
	t0 := time.Now()
	r, v, err := c.roundTrip(ctx, req, -1)
	took := time.Since(t0)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("%w: no answer to a %s request within %v", consumer.ErrSlowPath, req.Key(), took.Round(time.Millisecond))
		}
		return nil
	}
	resp := r.(*protocol.DescribeConfigsResponse)
	if v < 3 || len(resp.Results) != 1 || resp.Results[0].ErrorCode != 0 {
		return nil
	}
	return pathTooSlow(req.Key(), describedBytes(resp), took, need)
}

// pathTooSlow is ErrSlowPath when n bytes in took is under need bytes/s.
func pathTooSlow(what protocol.ApiKey, n int, took time.Duration, need float64) error {
	if got := float64(n) / max(took.Seconds(), 1e-6); got < need {
		return fmt.Errorf("%w: %d bytes of a %s answer took %v (%.0f KB/s), the Readers read %.0f KB/s and need %dx that",
			consumer.ErrSlowPath, n, what, took.Round(time.Millisecond), got/1e3, need/pathMargin/1e3, pathMargin)
	}
	return nil
}

// describedBytes is about the size of what resp carried: its names, values
// and documentation.
func describedBytes(resp *protocol.DescribeConfigsResponse) int {
	size := func(s *string) int {
		if s == nil {
			return 0
		}
		return len(*s)
	}
	n := 0
	for _, r := range resp.Results {
		for _, c := range r.Configs {
			n += len(c.Name) + size(c.Value) + size(c.Documentation)
			for _, syn := range c.Synonyms {
				n += len(syn.Name) + size(syn.Value)
			}
		}
	}
	return n
}

// readMeter counts the bytes the share's Readers fetch, in buckets of a
// second over readRateWindow, for the path check's rate; and keeps, for
// the path check's fetch, the first fetch with records of each partition
// in each bucket (where, and from which offset, the Readers read).
type readMeter struct {
	mu      sync.Mutex
	buckets [16]struct {
		sec   int64
		bytes int64
	}
	recent    [32]readSample // a ring, oldest overwritten
	recentEnd int            // where the next sample goes
}

// readSample is a fetch the Readers made: records of tp from offset, at sec.
type readSample struct {
	tp     topicPartition
	offset int64
	sec    int64
}

func (m *readMeter) add(now time.Time, n int64, tp topicPartition, offset int64) {
	sec := now.Unix()
	m.mu.Lock()
	b := &m.buckets[sec%int64(len(m.buckets))]
	if b.sec != sec {
		b.sec, b.bytes = sec, 0
	}
	b.bytes += n
	// One sample per partition and second is enough, and keeps the ring
	// from being filled by one busy partition.
	last := m.recentEnd
	for i := 0; i < len(m.recent); i++ {
		last = (last + len(m.recent) - 1) % len(m.recent)
		r := &m.recent[last]
		if r.sec != sec {
			break
		}
		if r.tp == tp {
			m.mu.Unlock()
			return
		}
	}
	m.recent[m.recentEnd] = readSample{tp: tp, offset: offset, sec: sec}
	m.recentEnd = (m.recentEnd + 1) % len(m.recent)
	m.mu.Unlock()
}

// rate is the bytes per second fetched over the window before now.
func (m *readMeter) rate(now time.Time) float64 {
	sec := now.Unix()
	var n int64
	m.mu.Lock()
	for _, b := range m.buckets {
		if sec-b.sec < int64(len(m.buckets)) {
			n += b.bytes
		}
	}
	m.mu.Unlock()
	return float64(n) / readRateWindow.Seconds()
}

// samples returns the fetches of the window before now, oldest first:
// from an older offset, more records follow.
func (m *readMeter) samples(now time.Time) []readSample {
	sec := now.Unix()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []readSample
	for i := 0; i < len(m.recent); i++ {
		r := m.recent[(m.recentEnd+i)%len(m.recent)]
		if r.sec != 0 && sec-r.sec < int64(len(m.buckets)) {
			out = append(out, r)
		}
	}
	return out
}
