package rackdetect

import (
	"errors"
	"fmt"
	"os"
)

// OverrideEnv is the environment variable that names the rack outright.
// When it is set, Detect returns its value without asking any source: an
// operator's explicit choice wins over every guess.
const OverrideEnv = "KAFKA_CLIENT_RACK"

// ErrBadOverride says that OverrideEnv is set to something that is not a
// zone. Detect then fails instead of guessing: a typo should not silently
// give another rack.
var ErrBadOverride = errors.New("bad " + OverrideEnv)

// override returns OverrideEnv's value; ok is false when it is unset or
// empty. A value that is not a zone is an error wrapping ErrBadOverride.
func override() (zone string, ok bool, err error) {
	v, set := os.LookupEnv(OverrideEnv)
	if !set || v == "" {
		return "", false, nil
	}
	zone, err = checkZone(v)
	if err != nil {
		return "", false, fmt.Errorf("rackdetect: environment variable %s: %w: %w", OverrideEnv, ErrBadOverride, err)
	}
	return zone, true, nil
}
