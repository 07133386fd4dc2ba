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

// watchTick is one -watch report: the routing of every partition.
type watchTick struct {
	Time    time.Time                `json:"time"`
	Routing []kafka.PartitionRouting `json:"routing"`
}

// watch reads every partition of the topic from its end with a Reader in
// cfg.Rack (one partition Reader each, messages discarded) and prints their
// Stats().Routing every interval, rounds times (0: until ctx ends).
func watch(ctx context.Context, cfg *config, partitions []int, w io.Writer, interval time.Duration, rounds int) error {
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
	for i, p := range partitions {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: cfg.Brokers, Topic: cfg.Topic, Partition: p, Rack: cfg.Rack,
			Dialer: dialer, MaxWait: 500 * time.Millisecond})
		readers[i] = r
		if err := r.SetOffset(kafka.LastOffset); err != nil {
			return fmt.Errorf("watching %s/%d: %w", cfg.Topic, p, err)
		}
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for {
				if _, err := r.FetchMessage(ctx); err != nil {
					if ctx.Err() == nil {
						errs <- fmt.Errorf("watching %s/%d: %w", cfg.Topic, p, err)
					}
					return
				}
			}
		}(p)
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
			sort.Slice(t.Routing, func(i, j int) bool { return t.Routing[i].Partition < t.Routing[j].Partition })
			if err := writeTick(w, t, cfg); err != nil {
				return err
			}
		}
	}
	return nil
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
		fmt.Fprintf(&b, "%s  partition %d: broker %d (%s), leader %d, %s rack; last second %d B same-rack, %d B other-rack",
			t.Time.Format("15:04:05"), r.Partition, r.Broker, orDash(r.BrokerRack), r.Leader, inOut(r.BrokerRack == cfg.Rack),
			r.SameRackBytes, r.OtherRackBytes)
		reasons := make([]string, 0, len(r.Reroutes))
		for reason, n := range r.Reroutes {
			reasons = append(reasons, fmt.Sprintf("%s ×%d", reason, n))
		}
		sort.Strings(reasons)
		if len(reasons) > 0 {
			fmt.Fprintf(&b, "; moved: %s", strings.Join(reasons, ", "))
		}
		b.WriteByte('\n')
	}
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
