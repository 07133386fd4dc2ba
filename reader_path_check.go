package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
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
	// pathCheckPartitions bounds the partitions one check fetches: with
	// many partitions each holds little, so it takes several to fill
	// the answer.
	pathCheckPartitions = 32
)

func (s *engineShare) checkPath(ctx context.Context, c *Conn, id int) error {
	need := s.reads.rate(time.Now()) * pathMargin
	if need <= 0 {
		return nil
	}
	var from []readSample
	for _, smp := range s.reads.samples(time.Now()) {
		if len(from) < pathCheckPartitions && s.inSyncOn(smp.tp, id) {
			from = append(from, smp)
		}
	}
	if len(from) > 0 {
		if measured, err := checkPathByFetch(ctx, c, from, need); measured || err != nil {
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

// checkPathByFetch fetches, on c, the records of the samples' partitions
// from the offsets the Readers read then. It reports whether the answer
// measured the path (enough records came back), and ErrSlowPath when they
// came too slowly or not at all.
func checkPathByFetch(ctx context.Context, c *Conn, from []readSample, need float64) (bool, error) {
	size := int32(min(max(need, pathCheckMinBytes), pathCheckMaxBytes))
	req := &protocol.FetchRequest{ReplicaID: -1, MaxWaitMs: 0, MinBytes: 1, MaxBytes: size, SessionEpoch: -1}
	from = slices.Clone(from)
	slices.SortFunc(from, func(a, b readSample) int { // a topic once per request
		if c := strings.Compare(a.tp.topic, b.tp.topic); c != 0 {
			return c
		}
		return cmp.Compare(a.tp.partition, b.tp.partition)
	})
	for _, smp := range from {
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != smp.tp.topic {
			req.Topics = append(req.Topics, protocol.FetchRequestTopic{Topic: smp.tp.topic})
		}
		t := &req.Topics[len(req.Topics)-1]
		t.Partitions = append(t.Partitions, protocol.FetchRequestPartition{
			Partition: int32(smp.tp.partition), FetchOffset: smp.offset, CurrentLeaderEpoch: -1,
			LastFetchedEpoch: -1, LogStartOffset: -1, PartitionMaxBytes: size,
		})
	}
	// v11 and v12 name topics; any replica serves a consumer's fetch from
	// v11 (KIP-392).
	r, v, took, slow := timedExchange(ctx, c, req, 12)
	if r == nil {
		return slow != nil, slow
	}
	resp := r.(*protocol.FetchResponse)
	if v < 11 || resp.ErrorCode != 0 {
		return false, nil
	}
	n := 0
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			if p := &resp.Topics[i].Partitions[j]; p.ErrorCode == 0 {
				n += len(p.Records)
			}
		}
	}
	if n < pathCheckMinBytes {
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
	r, v, took, slow := timedExchange(ctx, c, req, -1)
	if r == nil {
		return slow
	}
	resp := r.(*protocol.DescribeConfigsResponse)
	if v < 3 || len(resp.Results) != 1 || resp.Results[0].ErrorCode != 0 {
		return nil
	}
	return pathTooSlow(req.Key(), describedBytes(resp), took, need)
}

// timedExchange sends req on c (at most version limit) and times the
// answer. With no answer before the probe's time ran out, resp is nil and
// slow is ErrSlowPath; any other failure (refused, not understood) leaves
// both nil: nothing was measured.
func timedExchange(ctx context.Context, c *Conn, req protocol.Request, limit int16) (resp protocol.Response, v int16, took time.Duration, slow error) {
	t0 := time.Now()
	resp, v, err := c.roundTrip(ctx, req, limit)
	took = time.Since(t0)
	if err == nil {
		return resp, v, took, nil
	}
	if ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, v, took, fmt.Errorf("%w: no answer to a %s request within %v", consumer.ErrSlowPath, req.Key(), took.Round(time.Millisecond))
	}
	return nil, v, took, nil
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
// the path check's fetch, where the Readers read: per partition (up to
// maxReadSamples), the offset of a fetch within the window, the oldest
// one, so that the most records follow it.
type readMeter struct {
	mu      sync.Mutex
	buckets [16]struct {
		sec   int64
		bytes int64
	}
	recent  map[topicPartition]readSample
	evicted int64 // the second of the last pass dropping samples out of the window
}

const maxReadSamples = 64

// readSample is a fetch the Readers made: records of tp from offset, at sec.
type readSample struct {
	tp     topicPartition
	offset int64
	sec    int64
}

func (m *readMeter) add(now time.Time, n int64, tp topicPartition, offset int64) {
	sec := now.Unix()
	m.mu.Lock()
	defer m.mu.Unlock()
	b := &m.buckets[sec%int64(len(m.buckets))]
	if b.sec != sec {
		b.sec, b.bytes = sec, 0
	}
	b.bytes += n
	if r, ok := m.recent[tp]; ok && m.inWindow(r, sec) {
		return
	}
	if _, ok := m.recent[tp]; !ok && len(m.recent) >= maxReadSamples {
		if m.evicted == sec {
			return // full, and already swept this second
		}
		m.evicted = sec
		for k, r := range m.recent {
			if !m.inWindow(r, sec) {
				delete(m.recent, k)
			}
		}
		if len(m.recent) >= maxReadSamples {
			return
		}
	}
	if m.recent == nil {
		m.recent = make(map[topicPartition]readSample, maxReadSamples)
	}
	m.recent[tp] = readSample{tp: tp, offset: offset, sec: sec}
}

func (m *readMeter) inWindow(r readSample, sec int64) bool {
	return sec-r.sec < int64(len(m.buckets))
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

// samples returns the samples of the window before now, oldest first:
// from an older offset, more records follow.
func (m *readMeter) samples(now time.Time) []readSample {
	sec := now.Unix()
	m.mu.Lock()
	out := make([]readSample, 0, len(m.recent))
	for _, r := range m.recent {
		if m.inWindow(r, sec) {
			out = append(out, r)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b readSample) int {
		if a.sec != b.sec {
			return cmp.Compare(a.sec, b.sec)
		}
		if c := strings.Compare(a.tp.topic, b.tp.topic); c != 0 {
			return c
		}
		return cmp.Compare(a.tp.partition, b.tp.partition)
	})
	return out
}
