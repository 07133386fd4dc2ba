package kafka

import (
	"fmt"
	"time"

	"github.com/rackfetch/kafka-go/internal/routing"
)

// SetRouteTrace makes every Reader report each routing event and its
// decision as a line to f (nil: stop), for the fault tests' debug output.
func SetRouteTrace(f func(line string)) {
	if f == nil {
		routeTrace.Store(nil)
		return
	}
	t := func(topic string, partition int, ev routing.Event, d routing.Decision) {
		what := ""
		switch ev.Kind {
		case routing.EventFetched:
			what = fmt.Sprintf("fetched from %d preferred=%d empty=%v", ev.Broker, ev.Preferred, ev.Empty)
		case routing.EventFetchError, routing.EventDialFailed:
			what = fmt.Sprintf("failure kind=%v at %d %+v", ev.Kind, ev.Broker, ev.Failure)
		case routing.EventMetadata:
			what = fmt.Sprintf("metadata leader=%d epoch=%d isr=%v", ev.Partition.Leader.ID, ev.Partition.LeaderEpoch, ev.Partition.Isr)
		default:
			what = fmt.Sprintf("event kind=%v at %d", ev.Kind, ev.Broker)
		}
		f(fmt.Sprintf("%s route p%d: %s -> broker=%d changed=%v reason=%q refresh=%v backoff=%v omitRack=%v",
			time.Now().Format("15:04:05.000"), partition, what, d.Broker, d.Changed, d.Reason, d.RefreshMetadata, d.Backoff, d.OmitRack))
	}
	routeTrace.Store(&t)
}
