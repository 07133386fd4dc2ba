package consumer

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// The rack check: with a rack set, the Readers tell the user when
// rack-aware fetching cannot take effect, and why, instead of silently
// reading every byte from the leaders. RackDetector is its pure part (fed
// events, no I/O, no clock); the root package feeds it and turns its
// findings into kafka.RackInactive.

// The causes, as kafka.RackInactiveCause spells them (stable IDs: metric
// labels).
const (
	CauseNoReplicaSelector = "no_replica_selector"
	CauseNoBrokerInRack    = "no_broker_in_rack"
	CauseFetchTooOld       = "fetch_too_old"
)

// Finding is one cause found.
type Finding struct {
	Cause   string
	Brokers []int  // the brokers at fault, when the cause has some
	Detail  string // what was seen
	Since   time.Time
}

// Replica is a broker as the rack check needs it.
type Replica struct {
	ID   int
	Rack string // "" when metadata left it out
}

// The leader of a partition with an in-sync replica in the client's rack
// may answer -1 for a moment with a selector too (an ISR the client saw
// before it shrank): a leader is taken to have none only after this many
// such answers spread over at least this long, the last one judged on
// metadata read after the first, and never once it named a replica.
const (
	RackSilentAnswers = 5
	RackSilentWindow  = 10 * time.Second
)

// RackFetchMin is the first Fetch version carrying the client's rack.
const RackFetchMin = 11

type partitionKey struct {
	topic     string
	partition int
}

// RackDetector finds the causes of rack-aware fetching being inactive,
// each once. It is not safe for concurrent use.
type RackDetector struct {
	rack    string
	found   []Finding
	old     map[int]int16 // brokers below RackFetchMin: their Fetch max
	leaders map[int]*leaderSilence
	// served: partitions a broker in the client's rack has served (the
	// leader's selector named it, or the client chose it): rack fetching
	// works for them, whatever their leader answers.
	served map[partitionKey]bool
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

// NewRackDetector returns a detector for a client in rack.
func NewRackDetector(rack string) *RackDetector {
	return &RackDetector{rack: rack, old: map[int]int16{}, leaders: map[int]*leaderSilence{}, served: map[partitionKey]bool{}}
}

// Found returns the causes found so far, in the order found.
func (d *RackDetector) Found() []Finding { return append([]Finding(nil), d.found...) }

func (d *RackDetector) has(cause string) bool {
	for _, f := range d.found {
		if f.Cause == cause {
			return true
		}
	}
	return false
}

// add records a cause not found before; it returns nil when it was.
func (d *RackDetector) add(f Finding) *Finding {
	if d.has(f.Cause) {
		return nil
	}
	d.found = append(d.found, f)
	return &f
}

// Versions takes a broker's highest Fetch version (from ApiVersions).
func (d *RackDetector) Versions(now time.Time, broker int, fetchMax int16) *Finding {
	if fetchMax >= RackFetchMin {
		delete(d.old, broker)
		return nil
	}
	d.old[broker] = fetchMax
	return d.add(Finding{Cause: CauseFetchTooOld, Brokers: []int{broker}, Since: now,
		Detail: fmt.Sprintf("broker %d supports Fetch up to v%d; the rack is sent from v%d on (Kafka 2.4+), so every partition is read from its leader",
			broker, fetchMax, RackFetchMin)})
}

// FetchTooOld reports whether broker, as last dialed, supports Fetch only
// below RackFetchMin: it serves no consumer as a follower.
func (d *RackDetector) FetchTooOld(broker int) bool {
	_, old := d.old[broker]
	return old
}

// Brokers takes the racks of every broker known (by id) and the replicas
// of a partition being read. It finds no broker in the client's rack only
// when every replica's broker is known: one that is down may be in it.
func (d *RackDetector) Brokers(now time.Time, racks map[int]string, replicas []int) *Finding {
	if d.rackSeen || len(racks) == 0 {
		return nil
	}
	for _, r := range racks {
		if r == d.rack {
			d.rackSeen = true
			return nil
		}
	}
	for _, id := range replicas {
		if _, ok := racks[id]; !ok {
			return nil
		}
	}
	return d.add(Finding{Cause: CauseNoBrokerInRack, Since: now, Detail: noBrokerInRack(d.rack, racks)})
}

// RackAnswer is a partition's answer to a fetch.
type RackAnswer struct {
	Now       time.Time
	Broker    int    // who answered
	Rack      string // its rack
	Topic     string
	Partition int
	Leader    Replica   // racks filled in where known
	ISR       []Replica // racks filled in where known
	RackSent  bool      // the fetch carried the client's rack
	Preferred int       // the preferred read replica answered (-1: none)
	MetaAt    time.Time // when the metadata of Leader and ISR was read
}

// Answered takes a fetch answer; only a leader's answer to a fetch carrying
// the rack is evidence about the leader's replica selector. refresh asks
// for metadata newer than the evidence, to confirm the ISR it relies on.
func (d *RackDetector) Answered(a RackAnswer) (found *Finding, refresh bool) {
	tp := partitionKey{a.Topic, a.Partition}
	if a.Broker != a.Leader.ID && a.Rack == d.rack {
		d.served[tp] = true
	}
	if !a.RackSent || a.Broker != a.Leader.ID || a.Broker < 0 {
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
	if s.named || a.Leader.Rack == d.rack || d.served[tp] {
		return nil, false // it has a selector; the leader is the replica in the rack; or the client chose one
	}
	inRack := -1
	for _, b := range a.ISR {
		if b.ID != a.Leader.ID && b.Rack == d.rack && d.rack != "" {
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
	if s.answers < RackSilentAnswers || s.last.Sub(s.first) < RackSilentWindow {
		return nil, false
	}
	if !a.MetaAt.After(s.first) {
		return nil, true // the ISR may have shrunk since the client read it
	}
	return d.add(Finding{Cause: CauseNoReplicaSelector, Brokers: []int{a.Broker}, Since: a.Now,
		Detail: fmt.Sprintf("leader broker %d (rack %s) named no preferred replica in %d answers over %s to fetches carrying rack %q, although in-sync replica %d is in that rack: set replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector on the brokers",
			a.Broker, rackName(a.Leader.Rack), s.answers, s.last.Sub(s.first).Round(time.Second), d.rack, s.inRack)}), false
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

// rackName is rack for a message: "none" when unset.
func rackName(rack string) string {
	if rack == "" {
		return "none"
	}
	return rack
}
