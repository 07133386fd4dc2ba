package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	kafka "github.com/rackfetch/kafka-go"
)

// watchTick is one -watch report: the routing of every partition, and
// the bytes of them all.
type watchTick struct {
	Time    time.Time                     `json:"time"`
	Routing []kafka.PartitionRoutingStats `json:"routing"`
	Total   watchTotal                    `json:"total"`
}

// watchTotal sums the partitions' bytes since the previous tick.
type watchTotal struct {
	SameRackBytes  int64 `json:"same_rack_bytes"`
	CrossRackBytes int64 `json:"cross_rack_bytes"`
}

// watch reads every partition from its end with a Reader in cfg.Rack (one
// partition Reader each, messages discarded), configured as the plan
// assumed (ReplicaSelector with -client-select), and prints their
// Stats().Routing every interval, rounds times (0: until ctx ends).
func watch(ctx context.Context, cfg *config, partitions []topicPartition, w io.Writer, interval time.Duration, rounds int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	_, dialer := cfg.client()
	readers := make([]*kafka.Reader, len(partitions))
	errs := make(chan error, len(partitions))
	var wg sync.WaitGroup
	defer func() {
		cancel()
		for _, r := range readers {
			if r != nil { // nil: not made, an earlier SetOffset failed
				r.Close()
			}
		}
		wg.Wait()
	}()
	for i, tp := range partitions {
		r := kafka.NewReader(watchReaderConfig(cfg, dialer, tp))
		readers[i] = r
		if err := r.SetOffset(kafka.LastOffset); err != nil {
			return fmt.Errorf("watching %s/%d: %w", tp.Topic, tp.Partition, err)
		}
		wg.Add(1)
		go func(tp topicPartition) {
			defer wg.Done()
			for {
				if _, err := r.FetchMessage(ctx); err != nil {
					if ctx.Err() == nil {
						errs <- fmt.Errorf("watching %s/%d: %w", tp.Topic, tp.Partition, err)
					}
					return
				}
			}
		}(tp)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for n := 0; rounds == 0 || n < rounds; n++ {
		select {
		case <-ctx.Done():
			return nil // interrupted: the normal end of -watch
		case err := <-errs:
			return err
		case now := <-tick.C:
			t := watchTick{Time: now.UTC()}
			for _, r := range readers {
				t.Routing = append(t.Routing, r.Stats().Routing...)
			}
			sort.Slice(t.Routing, func(i, j int) bool {
				a, b := t.Routing[i], t.Routing[j]
				return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
			})
			for _, r := range t.Routing {
				t.Total.SameRackBytes += r.SameRackBytes
				t.Total.CrossRackBytes += r.CrossRackBytes
			}
			if err := writeTick(w, t, cfg); err != nil {
				return err
			}
		}
	}
	return nil
}

// watchReaderConfig is a Reader of one partition in cfg.Rack, choosing
// replicas as the plan did.
func watchReaderConfig(cfg *config, dialer *kafka.Dialer, tp topicPartition) kafka.ReaderConfig {
	rc := kafka.ReaderConfig{Brokers: cfg.Brokers, Topic: tp.Topic, Partition: tp.Partition, Rack: cfg.Rack,
		Dialer: dialer, MaxWait: 500 * time.Millisecond}
	if cfg.ClientSelect {
		rc.ReplicaSelector = kafka.RackAffinityReplicaSelector{}
	}
	return rc
}

func writeTick(w io.Writer, t watchTick, cfg *config) error {
	if cfg.JSON {
		if err := json.NewEncoder(w).Encode(t); err != nil {
			return fmt.Errorf("writing the routing as JSON: %w", err)
		}
		return nil
	}
	var b strings.Builder
	for _, r := range t.Routing {
		fmt.Fprintf(&b, "%s  %s/%d: broker %d (%s), leader %d, %s rack; last second %d B same-rack, %d B cross-rack",
			t.Time.Format("15:04:05"), r.Topic, r.Partition, r.Broker, orDash(r.BrokerRack), r.Leader, inOut(r.BrokerRack == cfg.Rack),
			r.SameRackBytes, r.CrossRackBytes)
		reasons := make([]string, 0, len(r.Reroutes))
		for reason, n := range r.Reroutes {
			reasons = append(reasons, fmt.Sprintf("%s ×%d", reason.Sentence(), n))
		}
		sort.Strings(reasons)
		if len(reasons) > 0 {
			fmt.Fprintf(&b, "; moved: %s", strings.Join(reasons, ", "))
		}
		b.WriteByte('\n')
	}
	same, cross := t.Total.SameRackBytes, t.Total.CrossRackBytes
	fmt.Fprintf(&b, "%s  total: %d B same-rack, %d B cross-rack", t.Time.Format("15:04:05"), same, cross)
	if same+cross > 0 {
		fmt.Fprintf(&b, " (%.1f%% in rack)", 100*float64(same)/float64(same+cross))
	}
	b.WriteByte('\n')
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the routing: %w", err)
	}
	return nil
}

func inOut(in bool) string {
	if in {
		return "in"
	}
	return "out of"
}
