package kafka

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// rackCheck feeds the rackDetector (rack_check.go) of a share of Readers
// (engineShare: one check for all, keyed by broker and partition) with
// what the fetchers and the engine's dials see, and reports each cause it
// finds once per share, at Warn through ErrorLogger (else Logger, else
// slog.Default()): a Reader asked to read in its rack that cannot is a
// configuration fault costing cross-rack traffic, which belongs where
// faults are watched, not among the Logger's routine lines (which many
// programs drop), and is never silent.
type rackCheck struct {
	mu       sync.Mutex
	d        *rackDetector // made at first use, when the Reader has a rack
	metaSeen uint64        // the metadata version racks is from (0: none)
	racks    map[int]string
	asked    time.Time // when the detector last had metadata re-read
}

// detector returns the detector, making it; rc.mu must be held.
func (rc *rackCheck) detector(rack string) *rackDetector {
	if rc.d == nil {
		rc.d = newRackDetector(rack)
	}
	return rc.d
}

// rackDialed tells the check the Fetch versions of a broker the share's
// engine dialed.
func (s *engineShare) rackDialed(id int, c *Conn) {
	rack := s.key.rack
	if rack == "" {
		return
	}
	vs, err := c.apiVersions()
	if err != nil {
		return // the engine fails the fetch and dials again
	}
	rc := &s.rack
	rc.mu.Lock()
	found := rc.detector(rack).versions(time.Now(), id, vs[protocol.Fetch].Max)
	rc.mu.Unlock()
	reportRackInactive(s.anyMember(), rack, found)
}

// rackFetched tells the check how broker answered a fetch of f's partition
// (preferred: the preferred read replica it named).
func (r *Reader) rackFetched(ctx context.Context, f *fetcher, broker, preferred int, rackSent bool) {
	if r.config.Rack == "" {
		return
	}
	now := f.now()
	// The latest metadata, no older than metaAt.
	metaAt := r.share.rt.Refreshed()
	p, ok := r.cluster.partition(f.tp.topic, f.tp.partition)
	if !ok {
		p = f.meta
	}
	rc := r.rack
	rc.mu.Lock()
	d := rc.detector(r.config.Rack)
	if v := r.share.rt.Version(); v != rc.metaSeen || rc.racks == nil {
		rc.metaSeen, rc.racks = v, r.cluster.brokerRacks()
	}
	found, refresh := d.brokers(now, rc.racks, p.Replicas), false
	if found == nil {
		p.Leader = withRack(p.Leader, rc.racks)
		p.Isr = withRacks(p.Isr, rc.racks)
		b, ok := f.broker(broker)
		if !ok {
			b = Broker{ID: broker}
		}
		found, refresh = d.answered(rackAnswer{Now: now, Broker: broker, Rack: withRack(b, rc.racks).Rack,
			Partition: p, RackSent: rackSent, Preferred: preferred, MetaAt: metaAt})
		refresh = refresh && now.Sub(rc.asked) >= rackSilentWindow
		if refresh {
			rc.asked = now
		}
	}
	rc.mu.Unlock()
	r.rackReport(found)
	if refresh {
		// Once per window at most; a failure is retried by the next one.
		f.release()
		_ = r.refreshMetadata(ctx, f.tp.topic)
	}
}

// rackReport logs a cause found.
func (r *Reader) rackReport(found *RackInactive) {
	reportRackInactive(r, r.config.Rack, found)
}

// reportRackInactive logs a cause found of rack-aware fetching being
// inactive for the Readers of rack, at Warn: through r's ErrorLogger, else
// its Logger, else (no Logger given, or no Reader left) slog.Default().
func reportRackInactive(r *Reader, rack string, found *RackInactive) {
	if found == nil {
		return
	}
	var l Logger
	if r != nil {
		l = r.config.ErrorLogger
		if l == nil {
			l = r.config.Logger
		}
	}
	if l == nil {
		l = &SlogAdapter{Level: slog.LevelWarn} // slog.Default() when it logs
	}
	logEventTo(l, slog.LevelWarn, "kafka reader: rack-aware fetching is inactive", []slog.Attr{
		slog.String("rack", rack), slog.String("cause", string(found.Cause)),
		slog.Any("brokers", found.Brokers), slog.String("detail", found.Detail),
	}, "kafka reader: %s", found)
}

// rackStatus returns the causes found so far, in the order found.
func (r *Reader) rackStatus() []RackInactive {
	rc := r.rack
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.d == nil || len(rc.d.found) == 0 {
		return nil
	}
	return append([]RackInactive(nil), rc.d.found...)
}

// withRack fills in b's rack from racks when metadata left it out (a
// broker the answer did not list).
func withRack(b Broker, racks map[int]string) Broker {
	if b.Rack == "" {
		b.Rack = racks[b.ID]
	}
	return b
}

// withRacks is withRack over bs, copying only when something is missing.
func withRacks(bs []Broker, racks map[int]string) []Broker {
	for i, b := range bs {
		if b.Rack == "" && racks[b.ID] != "" {
			out := append([]Broker(nil), bs...)
			for j := i; j < len(out); j++ {
				out[j] = withRack(out[j], racks)
			}
			return out
		}
	}
	return bs
}

// brokerRacks returns the rack of every broker seen in metadata.
func (cl *cluster) brokerRacks() map[int]string {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	out := make(map[int]string, len(cl.brokers))
	for id, b := range cl.brokers {
		out[id] = b.Rack
	}
	return out
}
