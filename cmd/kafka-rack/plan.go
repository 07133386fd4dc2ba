package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	kafka "github.com/rackfetch/kafka-go"
)

// Report is everything the command prints (-json prints it as is).
type Report struct {
	Topic        string          `json:"topic"`
	Rack         string          `json:"rack"`
	ClientSelect bool            `json:"client_select"`
	Brokers      []BrokerCheck   `json:"brokers"`
	Warnings     []string        `json:"warnings,omitempty"`
	Partitions   []PartitionPlan `json:"partitions"`
	Cost         *Cost           `json:"cost,omitempty"`
	// Producer is where a Writer with Rack in the rack would send its
	// keyless messages (from the metadata alone).
	Producer *ProducerPlan `json:"producer,omitempty"`
}

// Replica is a broker as the plan names it.
type Replica struct {
	ID   int    `json:"id"`
	Rack string `json:"rack"`
}

// PartitionPlan is where a Reader in the rack would read one partition.
type PartitionPlan struct {
	Partition int     `json:"partition"`
	Leader    Replica `json:"leader"`
	ISR       []int   `json:"isr"`
	// Preferred is the leader's preferred_read_replica for a Fetch carrying
	// the rack (-1: none named).
	Preferred int `json:"preferred_read_replica"`
	// Read is the broker the Reader would read from, Reason why.
	Read   Replica `json:"read"`
	Reason string  `json:"reason"`
	InRack bool    `json:"in_rack"`
	// LeaderInRack is whether reads stayed in the rack without rack-aware
	// fetching (the baseline of the cost estimate).
	LeaderInRack bool `json:"leader_in_rack"`
	// Bytes are the bytes the partition grew by during -observe.
	Bytes int64  `json:"observed_bytes,omitempty"`
	Error string `json:"error,omitempty"`
}

// Reasons, worded as the Reader's log lines word them (RerouteReason.Sentence)
// where they match.
const (
	reasonPreferred     = "preferred replica"
	reasonNotInISR      = "preferred replica not in metadata or ISR"
	reasonLeaderInRack  = "leader is in the client's rack"
	reasonNoPreference  = "leader named no preference"
	reasonNoSelector    = "leader named no preference: replica.selector.class unset"
	reasonNoRackReplica = "no in-sync replica in the client's rack"
	reasonClientSelect  = "client-side selection (ReaderConfig.ReplicaSelector)"
	reasonNoLeader      = "no leader"
	reasonNotAsked      = "leader not asked: see the error"
	reasonOldFetch      = "leader speaks Fetch below v11: no rack sent"
)

// buildReport makes the plan of cfg.Topic for cfg.Rack: metadata, broker
// configs, and one Fetch carrying the rack to each partition's leader.
func buildReport(ctx context.Context, cfg *config) (*Report, error) {
	cl, dialer := cfg.client()
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{cfg.Topic}})
	if err != nil {
		return nil, fmt.Errorf("reading the metadata of topic %q: %w", cfg.Topic, err)
	}
	if len(md.Topics) != 1 {
		return nil, fmt.Errorf("reading the metadata of topic %q: the broker described %d topics", cfg.Topic, len(md.Topics))
	}
	topic := md.Topics[0]
	if topic.Error != nil {
		return nil, fmt.Errorf("topic %q: %w", cfg.Topic, topic.Error)
	}
	rep := &Report{Topic: cfg.Topic, Rack: cfg.Rack, ClientSelect: cfg.ClientSelect}
	rep.Brokers, rep.Warnings = checkBrokers(ctx, cl, md.Brokers, cfg.Rack)
	rep.Producer = planProducer(md, cfg.Topic, cfg.Rack, cfg.WriterMinShare)

	parts := topic.Partitions
	sort.Slice(parts, func(i, j int) bool { return parts[i].ID < parts[j].ID })
	var led []kafka.Partition // a partition without a leader has no end offset to read
	for _, p := range parts {
		if p.Error == nil && p.Leader.Host != "" {
			led = append(led, p)
		}
	}
	ends, failed, err := endOffsets(ctx, cl, cfg.Topic, led)
	if err != nil {
		return nil, err
	}
	byID := map[int]BrokerCheck{}
	for _, b := range rep.Brokers {
		byID[b.ID] = b
	}
	rep.Partitions = make([]PartitionPlan, len(parts))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4) // a few fetches at once: one connection each
	for i := range parts {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p := parts[i]
			leader, ok := byID[p.Leader.ID]
			if !ok { // a leader the answering broker did not list: nothing known
				leader = BrokerCheck{ID: p.Leader.ID, FetchMaxVersion: -1, Error: "not in the metadata's broker list"}
			}
			rep.Partitions[i] = planPartition(ctx, dialer, p, ends[p.ID], failed[p.ID], cfg, leader)
		}(i)
	}
	wg.Wait()
	return rep, nil
}

// lastOffsets returns each partition's end offset (the high watermark);
// any partition's failure fails it.
func lastOffsets(ctx context.Context, cl *kafka.Client, topic string, parts []kafka.Partition) (map[int]int64, error) {
	ends, failed, err := endOffsets(ctx, cl, topic, parts)
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		if err := failed[p.ID]; err != nil {
			return nil, err
		}
	}
	return ends, nil
}

// endOffsets returns the end offsets of parts, and the partitions whose
// offset could not be read with why; err is for the request as a whole.
func endOffsets(ctx context.Context, cl *kafka.Client, topic string, parts []kafka.Partition) (map[int]int64, map[int]error, error) {
	reqs := make([]kafka.OffsetRequest, len(parts))
	for i, p := range parts {
		reqs[i] = kafka.LastOffsetOf(p.ID)
	}
	ends, failed := make(map[int]int64, len(parts)), map[int]error{}
	if len(parts) == 0 {
		return ends, failed, nil
	}
	resp, err := cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, nil, fmt.Errorf("listing the end offsets of %q: %w", topic, err)
	}
	for _, po := range resp.Topics[topic] {
		if po.Error != nil {
			failed[po.Partition] = fmt.Errorf("listing the end offset of %s/%d: %w", topic, po.Partition, po.Error)
			continue
		}
		ends[po.Partition] = po.LastOffset
	}
	for _, p := range parts {
		if _, ok := ends[p.ID]; !ok && failed[p.ID] == nil {
			failed[p.ID] = fmt.Errorf("listing the end offset of %s/%d: no answer for the partition", topic, p.ID)
		}
	}
	return ends, failed, nil
}

// planPartition asks p's leader, as a Reader in cfg.Rack does, which replica
// to read, and checks the answer against metadata as the Reader's router
// does (internal/routing/selector.go: onLeaderAnswer, inSync).
func planPartition(ctx context.Context, d *kafka.Dialer, p kafka.Partition, end int64, endErr error, cfg *config, leader BrokerCheck) PartitionPlan {
	pp := PartitionPlan{Partition: p.ID, Leader: Replica{p.Leader.ID, p.Leader.Rack}, Preferred: -1, ISR: []int{}}
	for _, b := range p.Isr {
		pp.ISR = append(pp.ISR, b.ID)
	}
	pp.LeaderInRack = p.Leader.Rack == cfg.Rack
	if p.Error != nil || p.Leader.Host == "" {
		pp.Read, pp.Reason = Replica{ID: -1}, reasonNoLeader
		if p.Error != nil {
			pp.Error = p.Error.Error()
		}
		return pp
	}
	if endErr != nil {
		pp.Read, pp.Reason, pp.Error = pp.Leader, reasonNotAsked, endErr.Error()
		return pp
	}
	pref, err := preferredReplica(ctx, d, p, end, cfg.Timeout)
	if err != nil {
		pp.Read, pp.Reason, pp.Error = pp.Leader, reasonNotAsked, err.Error()
		return pp
	}
	pp.Preferred = pref
	pp.Read, pp.Reason = routeLikeReader(p, pref, cfg.Rack, cfg.ClientSelect, leader)
	pp.InRack = pp.Read.ID >= 0 && pp.Read.Rack == cfg.Rack
	return pp
}

// routeLikeReader is the Reader's decision after the leader's answer: a
// named replica is read only when metadata shows it in the ISR with a host
// and not offline; otherwise reads stay on the leader. With client-side
// selection, a leader naming none leaves the choice to clientSelect, unless
// the leader's Fetch is too old to carry a rack (followers refuse such
// fetches). lb is what checkBrokers found of the leader.
func routeLikeReader(p kafka.Partition, pref int, rack string, clientSelect bool, lb BrokerCheck) (Replica, string) {
	leader := Replica{p.Leader.ID, p.Leader.Rack}
	if pref >= 0 && pref != p.Leader.ID {
		if b, ok := inSync(p, pref); ok {
			return Replica{b.ID, b.Rack}, reasonPreferred
		}
		return leader, reasonNotInISR
	}
	if leader.Rack == rack {
		return leader, reasonLeaderInRack
	}
	if lb.oldFetch() {
		return leader, reasonOldFetch
	}
	if clientSelect {
		if id, ok := clientSelectReplica(rack, p); ok {
			b, _ := inSync(p, id)
			return Replica{b.ID, b.Rack}, reasonClientSelect
		}
	}
	if _, ok := inRackISR(p, rack); !ok {
		return leader, reasonNoRackReplica
	}
	if !lb.selector() {
		return leader, reasonNoSelector
	}
	return leader, reasonNoPreference
}

// inSync returns broker id as p's metadata shows it when it is fit to read:
// in the ISR, with a host, not offline (internal/routing.InSync).
func inSync(p kafka.Partition, id int) (kafka.Broker, bool) {
	for _, o := range p.OfflineReplicas {
		if o.ID == id {
			return kafka.Broker{}, false
		}
	}
	for _, b := range p.Isr {
		if b.ID != id {
			continue
		}
		if b.Host != "" {
			return b, true
		}
		for _, r := range p.Replicas {
			if r.ID == id && r.Host != "" {
				return r, true
			}
		}
	}
	return kafka.Broker{}, false
}

// inRackISR returns the in-sync replicas of p in rack, by id.
func inRackISR(p kafka.Partition, rack string) ([]int, bool) {
	var ids []int
	for _, b := range p.Isr {
		if rb, ok := inSync(p, b.ID); ok && rb.Rack == rack {
			ids = append(ids, b.ID)
		}
	}
	sort.Ints(ids)
	return ids, len(ids) > 0
}

// preferredReplica sends p's leader one Fetch v11+ carrying the rack, at
// the end of the log with a small MaxBytes and no wait, and returns the
// preferred read replica it names (-1: none).
func preferredReplica(ctx context.Context, d *kafka.Dialer, p kafka.Partition, end int64, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := d.DialPartition(ctx, "tcp", "", p)
	if err != nil {
		return -1, fmt.Errorf("dialing the leader of %s/%d: %w", p.Topic, p.ID, err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return -1, fmt.Errorf("setting a deadline on the connection to broker %d: %w", p.Leader.ID, err)
	}
	// The offset is absolute: no ListOffsets is needed before the fetch.
	if _, err := conn.Seek(end, kafka.SeekAbsolute|kafka.SeekDontCheck); err != nil {
		return -1, fmt.Errorf("positioning at offset %d of %s/%d: %w", end, p.Topic, p.ID, err)
	}
	b := conn.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: 0, MaxBytes: 1024, MaxWait: time.Millisecond})
	pref := b.PreferredReadReplica()
	if err := b.Close(); err != nil {
		return -1, fmt.Errorf("fetching %s/%d from its leader, broker %d, with rack %q: %w", p.Topic, p.ID, p.Leader.ID, d.RackID, err)
	}
	return pref, nil
}
