package kafka

import (
	"errors"
	"fmt"
	"strings"
)

// ZoneBackend names a Kafka-compatible backend that learns the client's
// availability zone from its client id rather than from a rack field: such
// backends have no leaders to fetch near, so they route each client to
// brokers (agents) in its zone, and each spells the client id key its own
// way. A misspelt key is ignored by the backend, silently, and the client
// pays for cross-zone traffic; ZoneClientID writes the key for you.
type ZoneBackend string

const (
	// ZoneWarpStream writes ws_az=<zone>. WarpStream reads comma-separated
	// key=value pairs from the client id; warpstream_az is an alias of
	// ws_az, so a client id carrying either already has a zone.
	ZoneWarpStream ZoneBackend = "warpstream"

	// ZoneInkless writes diskless_az=<zone>, for Aiven's Inkless (diskless
	// topics). Inkless finds the key after a comma or a space; the zone must
	// be spelled as the brokers' broker.rack.
	ZoneInkless ZoneBackend = "inkless"

	// ZoneBufstream writes zone=<zone>. Bufstream reads key=value pairs
	// separated by ',' or ';', one kind of separator per client id: the
	// zone is joined with ';' when the client id already uses ';', else ','.
	ZoneBufstream ZoneBackend = "bufstream"
)

// ErrClientIDHasZone says that the client id given to ZoneClientID already
// names a zone for that backend. A second key would leave the backend to
// pick one of two zones; a program can keep the operator's choice on this
// error.
var ErrClientIDHasZone = errors.New("client id already names a zone")

// maxZoneLen bounds a zone, as rackdetect does: real zones are short, and a
// long value is a mistake (an error page, a whole label) rather than a zone.
const maxZoneLen = 64

// zoneSpelling is how one backend reads the zone from a client id.
type zoneSpelling struct {
	key     string   // the key written
	aliases []string // other keys the backend reads as the zone
	seps    string   // the characters that separate pairs
}

var zoneSpellings = map[ZoneBackend]zoneSpelling{
	ZoneWarpStream: {key: "ws_az", aliases: []string{"warpstream_az"}, seps: ","},
	ZoneInkless:    {key: "diskless_az", seps: ", "},
	ZoneBufstream:  {key: "zone", seps: ",;"},
}

// ZoneClientID returns clientID with zone appended as the backend expects
// it (ZoneWarpStream: "myapp,ws_az=us-east-1a"), for Dialer.ClientID or
// Transport.ClientID. It is opt-in: brokers that are not of that backend
// see an unusual client id and nothing else.
//
// The zone is passed on as given, case included: the backend compares it
// with its own spelling of the zone. It must be 1 to 64 ASCII letters,
// digits, '-', '_' or '.' (us-east-1a, use1-az4, europe-west1-b,
// eastus-1, 1); a space, ',', ';' or '=' would split it into other pairs.
//
// An empty clientID gives just the pair ("ws_az=us-east-1a"); the Dialer
// and Transport then send it instead of DefaultClientID, so pass
// DefaultClientID to keep that too. A clientID that already names a zone
// for the backend is an error wrapping ErrClientIDHasZone.
func ZoneClientID(backend ZoneBackend, clientID, zone string) (string, error) {
	sp, ok := zoneSpellings[backend]
	if !ok {
		return "", fmt.Errorf("kafka: ZoneClientID: unknown backend %q (want %q, %q or %q)",
			string(backend), ZoneWarpStream, ZoneInkless, ZoneBufstream)
	}
	if err := checkClientZone(zone); err != nil {
		return "", fmt.Errorf("kafka: ZoneClientID: %w", err)
	}
	sep := sp.seps[0]
	if backend == ZoneBufstream {
		hasComma, hasSemicolon := strings.Contains(clientID, ","), strings.Contains(clientID, ";")
		if hasComma && hasSemicolon {
			return "", fmt.Errorf("kafka: ZoneClientID: client id %q separates pairs with both ',' and ';'; %s reads one kind only", clientID, backend)
		}
		if hasSemicolon {
			sep = ';'
		}
	}
	for _, part := range strings.FieldsFunc(clientID, func(r rune) bool { return strings.ContainsRune(sp.seps, r) }) {
		part = strings.TrimSpace(part)
		for _, key := range append([]string{sp.key}, sp.aliases...) {
			if strings.HasPrefix(part, key+"=") {
				return "", fmt.Errorf("kafka: ZoneClientID: client id %q already sets %s for %s: %w", clientID, key, backend, ErrClientIDHasZone)
			}
		}
	}
	pair := sp.key + "=" + zone
	if clientID == "" || clientID[len(clientID)-1] == sep {
		return clientID + pair, nil
	}
	return clientID + string(sep) + pair, nil
}

// checkClientZone accepts what rackdetect accepts as a zone, and says what
// is wrong with anything else.
func checkClientZone(zone string) error {
	if zone == "" {
		return errors.New("empty zone")
	}
	if len(zone) > maxZoneLen {
		return fmt.Errorf("zone %.16q... is %d bytes, more than %d", zone, len(zone), maxZoneLen)
	}
	for i, r := range zone {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return fmt.Errorf("zone %q has %q at byte %d; a zone is ASCII letters, digits, '-', '_' and '.'", zone, r, i)
		}
	}
	return nil
}
