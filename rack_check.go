package kafka

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// The rack check: with ReaderConfig.Rack set, the Reader tells the user
// when rack-aware fetching cannot take effect, and why, instead of
// silently reading every byte from the leaders. rackDetector is the pure
// part (fed events, no I/O, no clock); reader_rack_check.go feeds it.

// RackInactiveCause says why rack-aware fetching (ReaderConfig.Rack) is not
// taking effect. As RerouteReason, its value is a stable machine-readable
// ID ([a-z_]+), the cause label of the metrics modules; Sentence is the
// text log lines show.
type RackInactiveCause string

const (
	// RackNoReplicaSelector ("no_replica_selector"): the leaders answer
	// fetches carrying the rack without naming a preferred replica,
	// although an in-sync replica is in the client's rack: the brokers lack
	// replica.selector.class
	// (org.apache.kafka.common.replica.RackAwareReplicaSelector).
	RackNoReplicaSelector RackInactiveCause = "no_replica_selector"
	// RackNoBrokerInRack ("no_broker_in_rack"): no broker has broker.rack
	// equal to the client's rack (a typo, or AZ names where the brokers use
	// AZ IDs).
	RackNoBrokerInRack RackInactiveCause = "no_broker_in_rack"
	// RackFetchTooOld ("fetch_too_old"): a broker supports Fetch only below
	// v11 (Kafka before 2.4), which cannot carry the rack.
	RackFetchTooOld RackInactiveCause = "fetch_too_old"
)

// Sentence is the English text of the cause, as log lines show it. It may
// be reworded; match on the cause itself. An unknown cause's sentence is
// its ID.
func (c RackInactiveCause) Sentence() string {
	switch c {
	case RackNoReplicaSelector:
		return "no replica selector"
	case RackNoBrokerInRack:
		return "no broker in the client's rack"
	case RackFetchTooOld:
		return "brokers below Fetch v11"
	}
	return string(c)
}

// RackInactive is one cause, found by the Reader, of rack-aware fetching
// not taking effect.
type RackInactive struct {
	Cause RackInactiveCause
	// Brokers are the brokers at fault when the cause has some: the
	// leaders naming no replica, the brokers below Fetch v11.
	Brokers []int
	// Detail says what was seen, as the log line did.
	Detail string
	// Since is when the cause was found.
	Since time.Time
}

func (ri RackInactive) String() string {
	return "rack-aware fetching is inactive (" + ri.Cause.Sentence() + "): " + ri.Detail
}

// The leader of a partition with an in-sync replica in the client's rack
// may answer -1 for a moment with a selector too (an ISR the client saw
// before it shrank): a leader is taken to have none only after this many
// such answers spread over at least this long, the last one judged on
// metadata read after the first, and never once it named a replica.
const (
	rackSilentAnswers = 5
	rackSilentWindow  = 10 * time.Second
)

// rackFetchMin is the first Fetch version carrying the client's rack.
const rackFetchMin = 11

// rackDetector finds the causes of rack-aware fetching being inactive,
// each once.
type rackDetector struct {
	rack    string
	found   []RackInactive
	old     map[int]int16 // brokers below rackFetchMin: their Fetch max
	leaders map[int]*leaderSilence
	// served: partitions a broker in the client's rack has served (the
	// leader's selector named it, or the client chose it): rack fetching
	// works for them, whatever their leader answers.
	served map[topicPartition]bool
	// rackSeen: some broker was seen in the client's rack.
	rackSeen bool
}

// leaderSilence is a leader's answers naming no replica while one was due.
type leaderSilence struct {
	answers     int
	first, last time.Time
	inRack      int // an in-sync replica in the client's rack, for the detail
	named       bool
}

func newRackDetector(rack string) *rackDetector {
	return &rackDetector{rack: rack, old: map[int]int16{}, leaders: map[int]*leaderSilence{}, served: map[topicPartition]bool{}}
}

func (d *rackDetector) has(c RackInactiveCause) bool {
	for _, f := range d.found {
		if f.Cause == c {
			return true
		}
	}
	return false
}

// add records a cause not found before; it returns nil when it was.
func (d *rackDetector) add(f RackInactive) *RackInactive {
	if d.has(f.Cause) {
		return nil
	}
	d.found = append(d.found, f)
	return &f
}

// versions takes a broker's highest Fetch version (from ApiVersions).
func (d *rackDetector) versions(now time.Time, broker int, fetchMax int16) *RackInactive {
	if fetchMax >= rackFetchMin {
		delete(d.old, broker)
		return nil
	}
	d.old[broker] = fetchMax
	return d.add(RackInactive{Cause: RackFetchTooOld, Brokers: []int{broker}, Since: now,
		Detail: fmt.Sprintf("broker %d supports Fetch up to v%d; the rack is sent from v%d on (Kafka 2.4+), so every partition is read from its leader",
			broker, fetchMax, rackFetchMin)})
}

// brokers takes the racks of every broker known (by id) and the replicas
// of a partition being read. It finds no broker in the client's rack only
// when every replica's broker is known: one that is down may be in it.
func (d *rackDetector) brokers(now time.Time, racks map[int]string, replicas []Broker) *RackInactive {
	if d.rackSeen || len(racks) == 0 {
		return nil
	}
	for _, r := range racks {
		if r == d.rack {
			d.rackSeen = true
			return nil
		}
	}
	for _, b := range replicas {
		if _, ok := racks[b.ID]; !ok {
			return nil
		}
	}
	return d.add(RackInactive{Cause: RackNoBrokerInRack, Since: now, Detail: noBrokerInRack(d.rack, racks)})
}

// rackAnswer is a partition's answer to a fetch.
type rackAnswer struct {
	Now       time.Time
	Broker    int       // who answered
	Rack      string    // its rack
	Partition Partition // the partition's metadata, racks filled in where known
	RackSent  bool      // the fetch carried the client's rack
	Preferred int       // the preferred read replica answered (-1: none)
	MetaAt    time.Time // when the metadata of Partition was read
}

// answered takes a fetch answer; only a leader's answer to a fetch carrying
// the rack is evidence about the leader's replica selector. refresh asks
// for metadata newer than the evidence, to confirm the ISR it relies on.
func (d *rackDetector) answered(a rackAnswer) (found *RackInactive, refresh bool) {
	p := a.Partition
	tp := topicPartition{p.Topic, p.ID}
	if a.Broker != p.Leader.ID && a.Rack == d.rack {
		d.served[tp] = true
	}
	if !a.RackSent || a.Broker != p.Leader.ID || a.Broker < 0 {
		return nil, false
	}
	if _, old := d.old[a.Broker]; old {
		return nil, false // the rack did not reach it
	}
	s := d.leaders[a.Broker]
	if s == nil {
		s = &leaderSilence{inRack: -1}
		d.leaders[a.Broker] = s
	}
	if a.Preferred >= 0 {
		s.named = true
		return nil, false
	}
	if s.named || p.Leader.Rack == d.rack || d.served[tp] {
		return nil, false // it has a selector; the leader is the replica in the rack; or the client chose one
	}
	inRack := -1
	for _, b := range p.Isr {
		if b.ID != p.Leader.ID && b.Rack == d.rack && d.rack != "" {
			inRack = b.ID
			break
		}
	}
	if inRack < 0 {
		s.answers = 0 // no in-sync replica to name: the silence so far may be why
		return nil, false
	}
	if s.answers == 0 {
		s.first = a.Now
	}
	s.answers++
	s.last, s.inRack = a.Now, inRack
	if s.answers < rackSilentAnswers || s.last.Sub(s.first) < rackSilentWindow {
		return nil, false
	}
	if !a.MetaAt.After(s.first) {
		return nil, true // the ISR may have shrunk since the client read it
	}
	return d.add(RackInactive{Cause: RackNoReplicaSelector, Brokers: []int{a.Broker}, Since: a.Now,
		Detail: fmt.Sprintf("leader broker %d (rack %s) named no preferred replica in %d answers over %s to fetches carrying rack %q, although in-sync replica %d is in that rack: set replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector on the brokers",
			a.Broker, rackName(p.Leader.Rack), s.answers, s.last.Sub(s.first).Round(time.Second), d.rack, s.inRack)}), false
}

var (
	awsZoneName = regexp.MustCompile(`^[a-z]{2}(-gov)?-[a-z]+-[0-9]+[a-z]$`) // us-east-1a
	awsZoneID   = regexp.MustCompile(`^[a-z]{2,5}[0-9]+-az[0-9]+$`)          // use1-az1
)

// noBrokerInRack says that no broker is in rack, naming the racks the
// brokers have and the likely mistake.
func noBrokerInRack(rack string, racks map[int]string) string {
	var names []string
	seen := map[string]bool{}
	for _, r := range racks {
		if !seen[r] {
			seen[r] = true
			names = append(names, fmt.Sprintf("%q", r))
		}
	}
	sort.Strings(names)
	if len(names) == 1 && names[0] == `""` {
		return fmt.Sprintf("no broker is in rack %q: the brokers set no broker.rack", rack)
	}
	msg := fmt.Sprintf("no broker is in rack %q; the brokers' racks are %s", rack, strings.Join(names, ", "))
	for r := range seen {
		switch {
		case strings.EqualFold(strings.TrimSpace(rack), strings.TrimSpace(r)):
			return msg + fmt.Sprintf(" (%q differs only in case or spaces; racks are compared exactly)", r)
		case awsZoneName.MatchString(rack) && awsZoneID.MatchString(r):
			return msg + " (the brokers use AWS AZ IDs, the client an AZ name: AZ names differ between accounts, set the rack to the AZ ID)"
		}
	}
	return msg
}
