package kafka

import (
	"context"
	"time"

	"github.com/rackfetch/kafka-go/internal/consumer"
)

// The background work of the Readers sharing an engine
// (reader_engine_share.go) — metadata refreshes while partitions read
// from followers or replicas cool down, the leaders' high watermarks for
// the lag check, the replica cooldowns and their probes — runs once per
// share in internal/consumer, keyed by what it watches (a leader, a
// broker), not once per Reader: per Reader, 300 idle partition Readers
// sent 80 requests/s to each broker out of their rack. The rack check
// (reader_rack_check.go) is the share's too. A group Reader has a share,
// so a runtime, of its own. This file adapts the share to it.

// consumerRuntime is the share's background work.
type consumerRuntime = consumer.Runtime[topicPartition]

// newConsumerRuntime makes the runtime of s, whose Readers have cfg's
// engine settings (engineKey: MaxFollowerLag among them).
func newConsumerRuntime(s *engineShare, cfg *ReaderConfig) *consumerRuntime {
	var sampling time.Duration
	if cfg.MaxFollowerLag > 0 {
		sampling = cfg.followerLagSampling()
	}
	return consumer.New(consumer.Config[topicPartition]{
		Members: s.runtimeMembers,
		Refresh: s.refresh,
		ListEnds: func(ctx context.Context, leader int, tps []topicPartition) (map[topicPartition]int64, error) {
			return s.listLeaderEnds(ctx, leader, tps)
		},
		Dial:            s.probeDial,
		Logf:            func(format string, args ...interface{}) { s.logf(false, format, args...) },
		Errorf:          func(format string, args ...interface{}) { s.logf(true, format, args...) },
		Sampling:        sampling,
		QuietSampling:   readerQuietSampling,
		PinnedInterval:  func() time.Duration { return readerPinnedMetadataInterval },
		CoolingInterval: func() time.Duration { return readerCoolingMetadataInterval },
	})
}

// refresh reads the metadata of topics and tells the share's cooldowns
// which brokers it lists: they forget the others (routing.Cooldowns.Listed).
func (s *engineShare) refresh(ctx context.Context, topics []string) error {
	if err := s.cluster.refresh(ctx, topics...); err != nil {
		return err
	}
	s.cooldownsSawMetadata()
	return nil
}

// runtimeMember is a Reader as the runtime sees it: what its partitions
// read now (readerStats).
type runtimeMember struct{ r *Reader }

func (m runtimeMember) OnFollower() bool                        { return m.r.stats.onFollower() }
func (m runtimeMember) Topics() []string                        { return m.r.stats.topics() }
func (m runtimeMember) FollowerReads() map[int][]topicPartition { return m.r.stats.followerReads() }
func (m runtimeMember) LeaderHighWatermark(tp topicPartition, hw int64) {
	m.r.stats.totals.leaderHighWatermark(tp, hw) // the lag RoutingStats reports
}

func (s *engineShare) runtimeMembers() []consumer.Member[topicPartition] {
	rs := s.members()
	out := make([]consumer.Member[topicPartition], len(rs))
	for i, r := range rs {
		out[i] = runtimeMember{r}
	}
	return out
}

// logf logs through a Reader of the share (its ErrorLogger for faults).
func (s *engineShare) logf(fault bool, format string, args ...interface{}) {
	r := s.anyMember()
	switch {
	case r == nil:
	case fault:
		r.errorf(format, args...)
	default:
		r.logf(format, args...)
	}
}
