package main

import (
	"fmt"
	"strings"
)

// Cost is the cross-zone cost estimate of the plan.
type Cost struct {
	// Source is "-rate" or "-observe".
	Source string `json:"source"`
	// BytesPerSecond is the consume rate the estimate uses.
	BytesPerSecond float64 `json:"bytes_per_second"`
	// ObservedBytes and ObservedSeconds are what -observe measured.
	ObservedBytes   int64   `json:"observed_bytes,omitempty"`
	ObservedSeconds float64 `json:"observed_seconds,omitempty"`
	// InRackShare is the share of bytes read in the rack with the plan,
	// LeaderInRackShare without rack-aware fetching (every read at the
	// leader).
	InRackShare       float64 `json:"in_rack_share"`
	LeaderInRackShare float64 `json:"leader_in_rack_share"`
	// GBPerMonth is the bytes consumed in a month; CrossGB* those that
	// cross zones without and with the plan.
	GBPerMonth           float64  `json:"gb_per_month"`
	CrossGBWithoutRack   float64  `json:"cross_zone_gb_per_month_without_rack"`
	CrossGBWithPlan      float64  `json:"cross_zone_gb_per_month_with_plan"`
	PricePerGBEachWay    float64  `json:"price_per_gb_each_way"`
	SavedUSDPerMonth     float64  `json:"saved_usd_per_month"`
	CostUSDPerMonthAfter float64  `json:"cross_zone_usd_per_month_with_plan"`
	Assumptions          []string `json:"assumptions"`
}

const (
	secondsPerMonth = 30 * 24 * 3600 // a 30-day month
	bytesPerGB      = 1e9
)

// topicPartition names a partition across topics.
type topicPartition struct {
	Topic     string
	Partition int
}

// estimateCost prices the reads of reports: one per topic and rack, the
// racks a fleet of consumers is spread over evenly. Each partition is read
// from every rack for an equal part of its bytes, so it counts as in rack
// for the racks' share whose plan reads it there. Partitions weigh their
// observed bytes (observed is nil with -rate: every partition then weighs
// the same), and what stops crossing zones is priced.
func estimateCost(reports []*Report, bytesPerSecond float64, observed map[topicPartition]int64, price float64) *Cost {
	c := &Cost{Source: "-rate", BytesPerSecond: bytesPerSecond, PricePerGBEachWay: price}
	weight := func(topicPartition) float64 { return 1 }
	weighting := "the rate is spread evenly over the partitions"
	if observed != nil {
		c.Source = "-observe"
		var sum int64
		for _, n := range observed {
			sum += n
		}
		c.ObservedBytes = sum
		if sum > 0 {
			weight = func(tp topicPartition) float64 { return float64(observed[tp]) }
			weighting = "each partition weighs what it grew by while observed"
		} else {
			weighting = "nothing was written while observed: partitions weigh the same"
		}
	}
	type reads struct{ racks, inRack, leaderIn int }
	byTP := map[topicPartition]*reads{}
	var order []topicPartition
	var racks []string
	for _, rep := range reports {
		racks = appendNew(racks, rep.Rack)
		for _, p := range rep.Partitions {
			tp := topicPartition{rep.Topic, p.Partition}
			r := byTP[tp]
			if r == nil {
				r = &reads{}
				byTP[tp] = r
				order = append(order, tp)
			}
			r.racks++
			if p.InRack {
				r.inRack++
			}
			if p.LeaderInRack {
				r.leaderIn++
			}
		}
	}
	var total, inRack, leaderIn float64
	for _, tp := range order {
		r, w := byTP[tp], weight(tp)
		total += w
		inRack += w * float64(r.inRack) / float64(r.racks)
		leaderIn += w * float64(r.leaderIn) / float64(r.racks)
	}
	if total > 0 {
		c.InRackShare, c.LeaderInRackShare = inRack/total, leaderIn/total
	}
	c.GBPerMonth = bytesPerSecond * secondsPerMonth / bytesPerGB
	c.CrossGBWithoutRack = c.GBPerMonth * (1 - c.LeaderInRackShare)
	c.CrossGBWithPlan = c.GBPerMonth * (1 - c.InRackShare)
	c.SavedUSDPerMonth = (c.CrossGBWithoutRack - c.CrossGBWithPlan) * 2 * price
	c.CostUSDPerMonthAfter = c.CrossGBWithPlan * 2 * price
	readers := "one consumer group in the rack reads every byte of the topic once"
	if len(racks) > 1 {
		readers = fmt.Sprintf("one consumer group spread evenly over racks %s reads every byte once: each rack's consumers read an equal part of every partition, from their own rack where the plan says so", strings.Join(racks, ", "))
	}
	c.Assumptions = []string{
		readers + "; producers and replication are not counted here (rack-aware fetching does not change them; -produce-rate prices the producers)",
		fmt.Sprintf("a byte that crosses zones is billed $%.4f/GB leaving one zone and $%.4f/GB entering the other ($%.4f/GB in all)", price, price, 2*price),
		"GB = 10^9 bytes, MB = 10^6 bytes, a month = 30 days",
		"bytes are record batches as stored (compressed, batch headers included); request and response headers are not counted",
		"without rack-aware fetching every partition is read at its leader; with it, at the replica in the plan",
		weighting,
	}
	return c
}

func appendNew(s []string, v string) []string {
	for _, o := range s {
		if o == v {
			return s
		}
	}
	return append(s, v)
}
