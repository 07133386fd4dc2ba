package protocol

import "fmt"

// VersionRange is the range of versions a broker supports for one API.
type VersionRange struct{ Min, Max int16 }

// Versions maps API keys to what a broker supports, as told by ApiVersions.
type Versions map[ApiKey]VersionRange

// UnsupportedVersionError says the broker and the library share no version
// of an API (the broker is too old, or too new, for it).
type UnsupportedVersionError struct {
	Key                  ApiKey
	ClientMin, ClientMax int16
	Broker               VersionRange
	Missing              bool
}

func (e *UnsupportedVersionError) Error() string {
	if e.Missing {
		return fmt.Sprintf("kafka: broker does not support %s", e.Key)
	}
	return fmt.Sprintf("kafka: no common %s version: client supports %d-%d, broker %d-%d",
		e.Key, e.ClientMin, e.ClientMax, e.Broker.Min, e.Broker.Max)
}

// Pick returns the highest version of r both sides support, capped at
// limit when limit >= 0 (a user pin, or a feature's maximum).
func (vs Versions) Pick(r Request, limit int16) (int16, error) {
	br, ok := vs[r.Key()]
	if !ok {
		return 0, &UnsupportedVersionError{Key: r.Key(), ClientMin: r.MinVersion(), ClientMax: r.MaxVersion(), Missing: true}
	}
	v := r.MaxVersion()
	if br.Max < v {
		v = br.Max
	}
	if limit >= 0 && limit < v {
		v = limit
	}
	if v < r.MinVersion() || v < br.Min {
		return 0, &UnsupportedVersionError{Key: r.Key(), ClientMin: r.MinVersion(), ClientMax: r.MaxVersion(), Broker: br}
	}
	return v, nil
}
