package kafka

import (
	"context"
	"sync/atomic"
	"time"
)

// The Reader's metadata: one view per partition, the cluster cache
// (cluster.go, monotonic per topic ID), which every refresh of the Reader
// updates. Each fetcher hands what the cache says about its partition to
// its router between fetches, and acts on the metadata the router accepted
// (replicaSelector.partition): the fetcher and the router never disagree
// about the leader.
//
// Besides the refreshes the routing asks for, the Readers of a share
// re-read metadata on their own — once per share (consumerRuntime), not
// per Reader or partition — while they need news that no fetch response
// carries:
//   - while a partition reads from a follower: nothing in a follower's
//     answers says it left the ISR, so a follower that left it is left
//     within one refresh (readerPinnedMetadataInterval);
//   - while a replica cools down: the ISR says when it left and came back,
//     which ends its cooldown (readerCoolingMetadataInterval) — except a
//     broker refusing its probes for long (routing.Cooldowns.Active).
// Every refresh tells the cooldowns which brokers metadata lists.

// Variables so that tests can shorten them.
var (
	readerPinnedMetadataInterval  = 30 * time.Second
	readerCoolingMetadataInterval = time.Second
)

// readerMetadata counts the share's metadata refreshes, so that fetchers
// notice one made by anyone.
type readerMetadata struct {
	version   atomic.Uint64
	refreshed atomic.Int64 // unix nanoseconds of the latest refresh
}

// refreshMetadata reads the metadata of topics into the cluster cache and
// tells the fetchers of the share. Callers asking for the same topics
// while a refresh is in flight share it (the cache's single flight): a
// group Reader's partitions all start at once.
func (r *Reader) refreshMetadata(ctx context.Context, topics ...string) error {
	return r.share.rt.refresh(ctx, topics...)
}

func (rt *consumerRuntime) refresh(ctx context.Context, topics ...string) error {
	err := rt.share.cluster.refresh(ctx, topics...)
	if err == nil {
		rt.meta.refreshed.Store(time.Now().UnixNano())
		rt.meta.version.Add(1)
		rt.cooldown.Listed(rt.share.cluster.listedBrokers())
	}
	return err
}

// metadataLoop re-reads the metadata of the topics the share's Readers
// fetch while a partition is on a follower or a replica cools down, until
// the runtime stops. It sleeps until the next refresh is due; a fetcher
// whose route or cooldowns changed nudges it, and while nothing is due it
// looks again every readerCoolingMetadataInterval (a change nobody nudged
// for waits no longer than that).
func (rt *consumerRuntime) metadataLoop() {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-rt.ctx.Done():
			return
		case <-rt.wake:
		case <-timer.C:
		}
		next := rt.refreshIfDue(time.Now())
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(next)
	}
}

// refreshIfDue refreshes the share's topics if the interval the Readers
// need now has passed since the latest refresh, and returns when to look
// again.
func (rt *consumerRuntime) refreshIfDue(now time.Time) time.Duration {
	every := rt.metadataInterval(now)
	if every == 0 {
		return readerCoolingMetadataInterval
	}
	if wait := time.Unix(0, rt.meta.refreshed.Load()).Add(every).Sub(now); wait > 0 {
		return wait
	}
	topics := rt.topics()
	if len(topics) == 0 {
		return every
	}
	if err := rt.refresh(rt.ctx, topics...); err != nil && rt.ctx.Err() == nil {
		rt.errorf("kafka reader: refreshing metadata of %v: %v", topics, err)
	}
	return every
}

// metadataInterval is how often the share must re-read metadata now: 0
// when no partition is on a follower and nothing cools down.
func (rt *consumerRuntime) metadataInterval(now time.Time) time.Duration {
	if rt.cooldown.Active(now) {
		return readerCoolingMetadataInterval
	}
	for _, r := range rt.members() {
		if r.stats.onFollower() {
			return readerPinnedMetadataInterval
		}
	}
	return 0
}

// topics returns the topics the share's Readers read.
func (rt *consumerRuntime) topics() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rt.members() {
		for _, t := range r.stats.topics() {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}
