package rackdetect

import (
	"context"

	kafka "github.com/rackfetch/kafka-go"
)

// ClientID detects the zone as Detect does and returns clientID with the
// zone in the spelling backend reads (kafka.ZoneClientID): for WarpStream,
// Inkless and Bufstream, which route clients by the zone in their client id
// rather than by rack. Either error (no zone found, a zone the backend
// cannot take, a client id that names one already) is returned as is.
//
//	id, err := rackdetect.ClientID(ctx, kafka.ZoneWarpStream, "orders", rackdetect.EC2{})
//	if err != nil {
//		log.Printf("no zone in the client id: %v", err)
//		id = "orders"
//	}
//	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Transport: &kafka.Transport{ClientID: id}}
func ClientID(ctx context.Context, backend kafka.ZoneBackend, clientID string, sources ...Source) (string, error) {
	zone, err := Detect(ctx, sources...)
	if err != nil {
		return "", err
	}
	return kafka.ZoneClientID(backend, clientID, zone)
}
