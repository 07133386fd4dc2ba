package faults

import (
	"fmt"
	"strings"
	"time"

	"github.com/rackfetch/kafka-go/testing/netfault"
)

// Fault is one row of the matrix: what happens on the path between the
// clients and the target broker.
type Fault struct {
	Name  string
	Fault netfault.Fault
}

// Faults in the order a run applies them.
var Faults = []Fault{
	{"blackhole", netfault.Fault{Blackhole: true}},
	{"oneway", netfault.Fault{DropReplies: true}},
	{"latency-300ms", netfault.Fault{Delay: 300 * time.Millisecond}},
	{"loss-20pct", netfault.Fault{Loss: 0.2}},
	{"bandwidth-1mbit", netfault.Fault{Rate: 1_000_000 / 8}},
}

// Targets: whose path is faulted. Every window's group is coordinated by
// the rack-c broker, so that the three are the rack-b broker (the
// consumers' in-rack replica of every partition, leader of two), the
// rack-a broker (leader of two partitions, neither in the consumers' rack
// nor the coordinator) and the rack-c broker (the coordinator, also leader
// of two).
const (
	TargetFollower    = "follower"
	TargetLeader      = "leader"
	TargetCoordinator = "coordinator"
)

// Targets in the order a run measures them.
var Targets = []string{TargetFollower, TargetLeader, TargetCoordinator}

// targetRack is the rack of each target's broker.
var targetRack = map[string]string{TargetFollower: "b", TargetLeader: "a", TargetCoordinator: "c"}

// coordinatorRack is the rack of every window's group coordinator.
const coordinatorRack = "c"

// FaultByName returns the named fault of Faults.
func FaultByName(name string) (Fault, error) {
	for _, f := range Faults {
		if f.Name == name {
			return f, nil
		}
	}
	return Fault{}, fmt.Errorf("unknown fault %q (want one of %s)", name, names(Faults, func(f Fault) string { return f.Name }))
}

// CheckTarget reports whether name is a target.
func CheckTarget(name string) error {
	if _, ok := targetRack[name]; !ok {
		return fmt.Errorf("unknown target %q (want one of %s)", name, strings.Join(Targets, ", "))
	}
	return nil
}

// CheckClient reports whether name is a client.
func CheckClient(name string) error {
	if consumers[name] == nil {
		return fmt.Errorf("unknown client %q (want one of %s)", name, strings.Join(Clients, ", "))
	}
	return nil
}

func names[T any](xs []T, name func(T) string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = name(x)
	}
	return strings.Join(out, ", ")
}

// Spec is one window of the matrix.
type Spec struct {
	Client string `json:"client"`
	Target string `json:"target"`
	Fault  string `json:"fault"`
	// For is how long the fault lasts; After how long the window goes on
	// once it healed (longer when reads take longer to come back, up to
	// BackLimit).
	For   time.Duration `json:"for"`
	After time.Duration `json:"after"`
	Rack  string        `json:"rack"` // the consumer's
	Rate  int           `json:"rate"` // records/s the producer writes in all
	// WriterFaulted: the producer writes through the fault proxy too, so
	// the fault is on its path as well: the Writer's rows of the matrix.
	// It is then the window's client (this library's Writer, franz-go's
	// client, each at its defaults and acks=all); otherwise always this
	// library's Writer, through the brokers' own listeners.
	WriterFaulted bool `json:"writer_faulted,omitempty"`
}

// BackLimit is how long after the heal a window waits for reads to come
// back.
const BackLimit = 60 * time.Second
