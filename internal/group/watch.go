package group

import (
	"context"
	"time"
)

// partitionWatcher polls the topics' metadata every interval and ends the
// generation when a partition count differs from baseline, so that the
// group rejoins and the leader assigns the new partitions. Metadata
// errors are only logged: the shared cluster redials by itself. Refreshes
// are not cancelled with the generation: interrupting one would break a
// control connection the Reader shares.
func (gen *Generation) partitionWatcher(interval time.Duration, baseline map[string]int) {
	g := gen.group
	gen.Start(func(ctx context.Context) {
		if baseline == nil {
			rctx, cancel := context.WithTimeout(context.Background(), g.cfg.Timeout)
			err := g.deps.Cluster.Refresh(rctx, g.cfg.Topics...)
			cancel()
			if err != nil && ctx.Err() == nil {
				g.deps.Log.Errorf("reading partitions of %v for group %s: %v", g.cfg.Topics, gen.GroupID, err)
			}
			baseline = g.partitionCounts(g.cfg.Topics)
		}
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			rctx, cancel := context.WithTimeout(context.Background(), g.cfg.Timeout)
			err := g.deps.Cluster.Refresh(rctx, g.cfg.Topics...)
			cancel()
			if err != nil {
				if ctx.Err() == nil {
					g.deps.Log.Errorf("watching partitions of %v for group %s: %v", g.cfg.Topics, gen.GroupID, err)
				}
				continue
			}
			for topic, n := range g.partitionCounts(g.cfg.Topics) {
				if n != baseline[topic] {
					g.deps.Log.Printf("topic %s of group %s went from %d to %d partitions: rebalancing", topic, gen.GroupID, baseline[topic], n)
					return // ends the generation
				}
			}
		}
	})
}
