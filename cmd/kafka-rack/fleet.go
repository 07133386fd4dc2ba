package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Summary is the check of several topics or racks (-json prints it as is
// then; a single topic and rack prints its Report).
type Summary struct {
	Topics  []string  `json:"topics"`
	Racks   []string  `json:"racks"`
	Reports []*Report `json:"reports"`
	// InRackShare is the share read in the rack(s), over every topic and
	// rack: what -min-share checks. InRackShareOf says what is counted.
	InRackShare   float64 `json:"in_rack_share"`
	InRackShareOf string  `json:"in_rack_share_of"`
	Cost          *Cost   `json:"cost,omitempty"`
	// ProducerCost is the producer plans' cost at -produce-rate.
	ProducerCost *ProducerCost `json:"producer_cost,omitempty"`
}

// The units InRackShare counts.
const (
	shareOfBytes      = "bytes observed"
	shareOfPartitions = "partitions, each weighing the same"
)

// checkAll plans every topic for every rack.
func checkAll(ctx context.Context, cfg *config) ([]*Report, error) {
	var reports []*Report
	for _, topic := range cfg.Topics {
		for _, rack := range cfg.Racks {
			unit := *cfg
			unit.Topic, unit.Rack = topic, rack
			rep, err := buildReport(ctx, &unit)
			if err != nil {
				return nil, err
			}
			reports = append(reports, rep)
		}
	}
	return reports, nil
}

// summarize adds the observed bytes, the cost when a rate is given or
// observed, and the in-rack share.
func summarize(ctx context.Context, cfg *config, reports []*Report) (*Summary, error) {
	s := &Summary{Topics: cfg.Topics, Racks: cfg.Racks, Reports: reports}
	var (
		bps      float64
		observed map[topicPartition]int64
		elapsed  time.Duration
	)
	switch {
	case cfg.Rate > 0:
		bps = cfg.Rate * 1e6
	case cfg.Observe > 0:
		var err error
		if observed, elapsed, err = observeTopics(ctx, cfg, reports); err != nil {
			return nil, err
		}
		var sum int64
		for _, rep := range reports {
			for i := range rep.Partitions {
				p := &rep.Partitions[i]
				p.Bytes = observed[topicPartition{rep.Topic, p.Partition}]
			}
		}
		for _, n := range observed {
			sum += n
		}
		bps = float64(sum) / elapsed.Seconds()
	}
	c := estimateCost(reports, bps, observed, cfg.Price)
	s.InRackShare, s.InRackShareOf = c.InRackShare, shareOfPartitions
	if c.ObservedBytes > 0 {
		s.InRackShareOf = shareOfBytes
	}
	if cfg.Rate > 0 || cfg.Observe > 0 {
		c.ObservedSeconds = elapsed.Seconds()
		s.Cost = c
	}
	if len(reports) == 1 {
		reports[0].Cost = s.Cost
	}
	if plans := producerPlans(reports); cfg.ProduceRate > 0 && len(plans) > 0 {
		s.ProducerCost = estimateProducerCost(plans, cfg.ProduceRate*1e6, cfg.Price)
		if len(reports) == 1 {
			plans[0].Cost = s.ProducerCost
		}
	}
	return s, nil
}

// observeTopics observes every topic over the same window at once.
func observeTopics(ctx context.Context, cfg *config, reports []*Report) (map[topicPartition]int64, time.Duration, error) {
	parts := map[string][]int{}
	for _, rep := range reports {
		if _, seen := parts[rep.Topic]; seen {
			continue // the same partitions for every rack
		}
		parts[rep.Topic] = []int{}
		for _, p := range rep.Partitions {
			parts[rep.Topic] = append(parts[rep.Topic], p.Partition)
		}
	}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		errs     []error
		longest  time.Duration
		observed = map[topicPartition]int64{}
	)
	for topic, ids := range parts {
		wg.Add(1)
		go func(topic string, ids []int) {
			defer wg.Done()
			unit := *cfg
			unit.Topic = topic
			grown, elapsed, err := observeBytes(ctx, &unit, ids, cfg.Observe)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			for id, n := range grown {
				observed[topicPartition{topic, id}] = n
			}
			longest = max(longest, elapsed)
		}(topic, ids)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, 0, err
	}
	return observed, longest, nil
}

// errBelowMinShare marks a check whose in-rack share is below -min-share
// (exit status 3).
var errBelowMinShare = errors.New("below -min-share")

// checkMinShare fails when less than cfg.MinShare is read in the rack(s).
func checkMinShare(cfg *config, s *Summary) error {
	if cfg.MinShare <= 0 || s.InRackShare >= cfg.MinShare {
		return nil
	}
	return fmt.Errorf("%w: %.2f%% of %s read in rack(s) %s of topic(s) %s, below %.2f%%", errBelowMinShare,
		100*s.InRackShare, s.ShareUnit(), strings.Join(s.Racks, ", "), strings.Join(s.Topics, ", "), 100*cfg.MinShare)
}

// ShareUnit is InRackShareOf in a sentence.
func (s *Summary) ShareUnit() string {
	if s.InRackShareOf == shareOfBytes {
		return "the bytes observed"
	}
	return "the partitions"
}

// writeSummary prints one Report alone, as before -racks and several
// topics existed, or every Report and the fleet's share and cost.
func writeSummary(w io.Writer, s *Summary, asJSON bool) error {
	if len(s.Reports) == 1 {
		if asJSON {
			return writeJSON(w, s.Reports[0])
		}
		return writeTable(w, s.Reports[0])
	}
	if asJSON {
		return writeJSON(w, s)
	}
	for i, rep := range s.Reports {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := writeTableOf(w, rep, i == 0); err != nil { // the brokers are the same for every report
			return err
		}
	}
	fmt.Fprintf(w, "\nover topic(s) %s and rack(s) %s: %.1f%% of %s read in the consumers' rack\n",
		strings.Join(s.Topics, ", "), strings.Join(s.Racks, ", "), 100*s.InRackShare, s.ShareUnit())
	if s.Cost != nil {
		writeCost(w, s.Cost)
	}
	return writeProducers(w, producerPlans(s.Reports), s.ProducerCost)
}

// producerPlans are the reports' producer plans, in their order.
func producerPlans(reports []*Report) []*ProducerPlan {
	var plans []*ProducerPlan
	for _, rep := range reports {
		if rep.Producer != nil {
			plans = append(plans, rep.Producer)
		}
	}
	return plans
}
