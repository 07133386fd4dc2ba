package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/internal/metadata"
	"github.com/rackfetch/kafka-go/internal/producer"
)

// ProducerPlan is where a Writer with Rack set to the report's rack would
// send the messages its Balancer places freely (keyless messages under the
// default RoundRobin), by the Writer's own rule (producer.ChooseRack, the
// skew guard included). Messages placed by their key keep their partition
// with or without a rack and are not planned.
type ProducerPlan struct {
	Topic string `json:"topic"`
	Rack  string `json:"rack"`
	// WriterMinShare is -writer-min-share, as Writer.RackMinShare (0: the
	// default 0.5, negative: the guard off); GuardShare is the share the
	// guard used (0: off, KIP-1123's plain rule).
	WriterMinShare float64 `json:"writer_min_share"`
	GuardShare     float64 `json:"guard_share"`
	// PartitionCount is the topic's partitions, Led how many the rack leads.
	PartitionCount int `json:"partition_count"`
	Led            int `json:"led_in_rack"`
	// Used are the partitions the Writer sends the rack's freely placed
	// messages to, in id order: every partition when the rack leads none
	// (AllPartitions).
	Used          []int `json:"used"`
	AllPartitions bool  `json:"all_partitions"`
	// ToppedUp: the rack leads too few partitions, and the skew guard added
	// partitions led elsewhere to Used.
	ToppedUp bool `json:"topped_up"`
	// Displaced: a partition whose preferred leader is in the rack is led
	// elsewhere (after a failure or restart, until a preferred leader
	// election).
	Displaced bool `json:"displaced"`
	// Partitions are the partitions of Used.
	Partitions []ProducerPartition `json:"partitions"`
	// CrossShareWithoutRack is the share of the rack's freely placed bytes
	// sent to a leader outside the rack by a Writer without Rack (every
	// partition in turn), CrossShareWithPlan with the plan.
	CrossShareWithoutRack float64 `json:"cross_zone_share_without_rack"`
	CrossShareWithPlan    float64 `json:"cross_zone_share_with_plan"`
	// Cost is the estimate with -produce-rate, for a single topic and rack
	// (the Summary carries the fleet's).
	Cost *ProducerCost `json:"cost,omitempty"`
}

// ProducerPartition is one partition a Writer in the rack would use.
type ProducerPartition struct {
	Partition int     `json:"partition"`
	Leader    Replica `json:"leader"`
	InRack    bool    `json:"in_rack"`
	// Share is the share of the rack's freely placed bytes it gets.
	Share float64 `json:"share"`
}

// ProducerCost is the cross-zone cost estimate of the producer plans at
// -produce-rate.
type ProducerCost struct {
	// BytesPerSecond is the keyless produce rate of the rack, or of the
	// fleet; each of Racks produces an equal part of it.
	BytesPerSecond float64  `json:"bytes_per_second"`
	Racks          []string `json:"racks"`
	// CrossShareWithoutRack and CrossShareWithPlan are the shares of the
	// produce bytes sent to a leader in another zone, without Writer.Rack
	// and with the plans.
	CrossShareWithoutRack float64 `json:"cross_zone_share_without_rack"`
	CrossShareWithPlan    float64 `json:"cross_zone_share_with_plan"`
	// GBPerMonth is the bytes produced in a month; CrossGB* those that
	// cross zones without and with the plans.
	GBPerMonth           float64  `json:"gb_per_month"`
	CrossGBWithoutRack   float64  `json:"cross_zone_gb_per_month_without_rack"`
	CrossGBWithPlan      float64  `json:"cross_zone_gb_per_month_with_plan"`
	PricePerGBEachWay    float64  `json:"price_per_gb_each_way"`
	SavedUSDPerMonth     float64  `json:"saved_usd_per_month"`
	CostUSDPerMonthAfter float64  `json:"cross_zone_usd_per_month_with_plan"`
	Assumptions          []string `json:"assumptions"`
}

// metadataView is a Metadata answer as producer.ChooseRack reads it: the
// Writer's rule runs on what the command read.
type metadataView struct {
	racks  map[int]string
	topics map[string][]metadata.Partition
}

var _ producer.RackView = metadataView{}

func newMetadataView(md *kafka.MetadataResponse) metadataView {
	v := metadataView{racks: make(map[int]string, len(md.Brokers)), topics: make(map[string][]metadata.Partition, len(md.Topics))}
	for _, b := range md.Brokers {
		v.racks[b.ID] = b.Rack
	}
	for _, t := range md.Topics {
		if t.Error != nil {
			continue
		}
		parts := make([]metadata.Partition, len(t.Partitions))
		for i, p := range t.Partitions {
			parts[i] = metadata.Partition{
				Topic:           p.Topic,
				ID:              p.ID,
				Leader:          metadata.Broker(p.Leader),
				Replicas:        brokersOf(p.Replicas),
				Isr:             brokersOf(p.Isr),
				OfflineReplicas: brokersOf(p.OfflineReplicas),
				LeaderEpoch:     p.LeaderEpoch,
				ErrorCode:       errorCode(p.Error),
			}
		}
		v.topics[t.Name] = parts
	}
	return v
}

// Changes is constant: the view is one answer, never merged into.
func (v metadataView) Changes() uint64       { return 0 }
func (v metadataView) Racks() map[int]string { return v.racks }
func (v metadataView) TopicPartitions(topic string) ([]metadata.Partition, bool) {
	parts, ok := v.topics[topic]
	return parts, ok
}

func brokersOf(bs []kafka.Broker) []metadata.Broker {
	if len(bs) == 0 {
		return nil
	}
	out := make([]metadata.Broker, len(bs))
	for i, b := range bs {
		out[i] = metadata.Broker(b)
	}
	return out
}

// errorCode is the Kafka error code of a partition's error (-1, unknown
// server error, for one that carries none).
func errorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke kafka.Error
	if errors.As(err, &ke) && ke != 0 {
		return int16(ke)
	}
	return -1
}

// guardShare is the share the Writer's skew guard uses for RackMinShare
// (Writer.rackMinShare): negative turns it off, 0 is the default.
func guardShare(writerMinShare float64) float64 {
	switch {
	case writerMinShare < 0:
		return 0
	case writerMinShare == 0:
		return producer.DefaultRackMinShare
	}
	return writerMinShare
}

// planProducer applies the Writer's rule to topic of md for a Writer in
// rack with RackMinShare writerMinShare.
func planProducer(md *kafka.MetadataResponse, topic, rack string, writerMinShare float64) *ProducerPlan {
	view := newMetadataView(md)
	parts, _ := view.TopicPartitions(topic)
	racks := view.Racks()
	pp := &ProducerPlan{Topic: topic, Rack: rack, WriterMinShare: writerMinShare,
		GuardShare: guardShare(writerMinShare), PartitionCount: len(parts)}
	choice := producer.ChooseRack(view, topic, rack, len(parts), pp.GuardShare)
	pp.Led, pp.Displaced = choice.Led, choice.Displaced
	pp.ToppedUp = len(choice.Local) > choice.Led
	used := map[int]bool{}
	for _, id := range choice.Local {
		used[id] = true
	}
	pp.AllPartitions = len(choice.Local) == 0
	pp.Used = []int{}
	pp.Partitions = []ProducerPartition{}
	crossAll := 0
	for _, p := range parts { // in id order
		in := inRackLeader(p, racks, rack)
		if !in {
			crossAll++
		}
		if !pp.AllPartitions && !used[p.ID] {
			continue
		}
		pp.Used = append(pp.Used, p.ID)
		leader := Replica{ID: p.Leader.ID, Rack: racks[p.Leader.ID]}
		if p.Leader.ID < 0 {
			leader.Rack = ""
		}
		pp.Partitions = append(pp.Partitions, ProducerPartition{Partition: p.ID, Leader: leader, InRack: in})
	}
	crossUsed := 0
	for i := range pp.Partitions {
		pp.Partitions[i].Share = 1 / float64(len(pp.Partitions))
		if !pp.Partitions[i].InRack {
			crossUsed++
		}
	}
	if len(parts) > 0 {
		pp.CrossShareWithoutRack = float64(crossAll) / float64(len(parts))
		pp.CrossShareWithPlan = float64(crossUsed) / float64(len(pp.Partitions))
	}
	return pp
}

// inRackLeader is whether a produce to p stays in rack: a leader known,
// without error, in the rack (as ChooseRack counts the rack's partitions).
// A partition without a leader counts as crossing: its next leader is
// anywhere.
func inRackLeader(p metadata.Partition, racks map[int]string, rack string) bool {
	return p.Leader.ID >= 0 && p.ErrorCode == 0 && racks[p.Leader.ID] == rack
}

// estimateProducerCost prices the producer plans (one per topic and rack):
// Writers in every rack of the plans produce an equal part of
// bytesPerSecond, spread over the topics in proportion to their partitions,
// and only their hop to the leader differs with Writer.Rack.
func estimateProducerCost(plans []*ProducerPlan, bytesPerSecond, price float64) *ProducerCost {
	c := &ProducerCost{BytesPerSecond: bytesPerSecond, PricePerGBEachWay: price, Racks: []string{}}
	var topics []string
	var weight, without, with float64
	leaderless := false
	for _, p := range plans {
		c.Racks = appendNew(c.Racks, p.Rack)
		topics = appendNew(topics, p.Topic)
		// Every topic is planned for every rack: weighing each plan by its
		// partitions gives each rack an equal part, each topic its share.
		w := float64(p.PartitionCount)
		weight += w
		without += w * p.CrossShareWithoutRack
		with += w * p.CrossShareWithPlan
		for _, pp := range p.Partitions {
			if pp.Leader.ID < 0 {
				leaderless = true
			}
		}
	}
	if weight > 0 {
		c.CrossShareWithoutRack, c.CrossShareWithPlan = without/weight, with/weight
	}
	c.GBPerMonth = bytesPerSecond * secondsPerMonth / bytesPerGB
	c.CrossGBWithoutRack = c.GBPerMonth * c.CrossShareWithoutRack
	c.CrossGBWithPlan = c.GBPerMonth * c.CrossShareWithPlan
	c.SavedUSDPerMonth = (c.CrossGBWithoutRack - c.CrossGBWithPlan) * 2 * price
	c.CostUSDPerMonthAfter = c.CrossGBWithPlan * 2 * price
	writers := fmt.Sprintf("Writers in rack %s produce every byte of the rate as messages their Balancer places freely (no key, RoundRobin)", strings.Join(c.Racks, ""))
	if len(c.Racks) > 1 {
		writers = fmt.Sprintf("Writers spread evenly over racks %s produce an equal part of the rate each, as messages their Balancer places freely (no key, RoundRobin)", strings.Join(c.Racks, ", "))
	}
	c.Assumptions = []string{
		writers + "; messages placed by their key keep their partition with or without a rack: leave them out of -produce-rate",
		"without Writer.Rack every partition gets an equal part of a rack's bytes (RoundRobin); with it, every partition of the rack's plan",
		"only the hop from the Writer to the partition's leader is counted: a batch sent to a leader in another zone crosses once; replicating it to the followers crosses zones the same with and without Writer.Rack, and is left out",
		fmt.Sprintf("a byte that crosses zones is billed $%.4f/GB leaving one zone and $%.4f/GB entering the other ($%.4f/GB in all)", price, price, 2*price),
		"GB = 10^9 bytes, MB = 10^6 bytes, a month = 30 days",
		"bytes are record batches as sent (compressed, batch headers included); request headers and acknowledgements are not counted",
		"the plan is the Writer's at this metadata: leadership moves change it, and a partition whose leader the Writer cannot reach is left out while it cannot",
	}
	if len(topics) > 1 {
		c.Assumptions = append(c.Assumptions, "the rate is spread over the topics in proportion to their partitions")
	}
	if leaderless {
		c.Assumptions = append(c.Assumptions, "a partition without a leader counts as crossing zones")
	}
	return c
}

// writeProducers prints the producer plans, one line per topic and rack,
// and their cost when -produce-rate gave one (c not nil).
func writeProducers(w io.Writer, plans []*ProducerPlan, c *ProducerCost) error {
	if len(plans) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nproducer: partitions a Writer with Rack sends its keyless messages to (%s)\n", guardName(plans[0]))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tRACK\tLEADS\tWRITES TO, ON LEADER\tEACH\tGUARD\tCROSS-ZONE WITHOUT RACK\tWITH PLAN")
	for _, p := range plans {
		each := "-"
		if len(p.Partitions) > 0 {
			each = fmt.Sprintf("%.1f%%", 100/float64(len(p.Partitions)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d of %d\t%s\t%s\t%s\t%.1f%%\t%.1f%%\n", p.Topic, p.Rack, p.Led, p.PartitionCount,
			usedPartitions(p), each, guardNote(p), 100*p.CrossShareWithoutRack, 100*p.CrossShareWithPlan)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the producer plan: %w", err)
	}
	if c != nil {
		writeProducerCost(w, c)
	}
	return nil
}

// guardName says which rule the plans follow.
func guardName(p *ProducerPlan) string {
	switch {
	case p.GuardShare <= 0:
		return fmt.Sprintf("RackMinShare %g: guard off, KIP-1123's plain rule", p.WriterMinShare)
	case p.GuardShare == producer.DefaultRackMinShare:
		return fmt.Sprintf("RackMinShare %g, the default skew guard", p.GuardShare)
	}
	return fmt.Sprintf("RackMinShare %g, the skew guard", p.GuardShare)
}

func usedPartitions(p *ProducerPlan) string {
	if p.AllPartitions {
		return fmt.Sprintf("all %d", len(p.Partitions))
	}
	s := make([]string, len(p.Partitions))
	for i, pp := range p.Partitions {
		s[i] = strconv.Itoa(pp.Partition) + " on " + replica(pp.Leader)
	}
	return strings.Join(s, ", ")
}

func guardNote(p *ProducerPlan) string {
	var note string
	switch {
	case p.AllPartitions:
		note = "rack leads none: every partition"
	case p.ToppedUp:
		note = fmt.Sprintf("topped up +%d", len(p.Partitions)-p.Led)
	case p.GuardShare <= 0:
		note = "off"
	default:
		note = "not needed"
	}
	if p.Displaced {
		note += "; leadership displaced"
	}
	return note
}

func writeProducerCost(w io.Writer, c *ProducerCost) {
	from := "rack " + strings.Join(c.Racks, "")
	if len(c.Racks) > 1 {
		from = "racks " + strings.Join(c.Racks, ", ") + ", an equal part each"
	}
	fmt.Fprintf(w, "\nproducer cost (keyless produce %.3f MB/s from -produce-rate, from %s)\n", c.BytesPerSecond/1e6, from)
	fmt.Fprintf(w, "  produce bytes crossing zones: %.1f%% without Writer.Rack (every partition in turn), %.1f%% with this plan\n", 100*c.CrossShareWithoutRack, 100*c.CrossShareWithPlan)
	fmt.Fprintf(w, "  cross-zone GB a month: %.1f without Writer.Rack, %.1f with it (of %.1f GB produced)\n", c.CrossGBWithoutRack, c.CrossGBWithPlan, c.GBPerMonth)
	fmt.Fprintf(w, "  saved: $%.2f a month at $%.4f/GB each way (cross-zone cost left: $%.2f a month)\n", c.SavedUSDPerMonth, c.PricePerGBEachWay, c.CostUSDPerMonthAfter)
	fmt.Fprintln(w, "  assuming:")
	for _, a := range c.Assumptions {
		fmt.Fprintf(w, "  - %s\n", a)
	}
}
