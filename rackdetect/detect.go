package rackdetect

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// DefaultTimeout bounds each source that has no Timeout of its own. A
// metadata service answers in milliseconds; off its cloud the address
// usually does not answer at all, and a program should not wait long to
// learn that.
const DefaultTimeout = 2 * time.Second

// ErrNoZone says that a source answered but has no zone: a VM outside any
// availability zone, a pod without the label.
var ErrNoZone = errors.New("no zone")

// Source is one place to read the zone from.
type Source interface {
	// Name names the source in errors ("ec2", "gce", "azure", "kubernetes").
	Name() string
	// Zone returns the zone, or a *SourceError.
	Zone(ctx context.Context) (string, error)
}

// SourceError is the failure of one source: which one, and why.
type SourceError struct {
	Source string
	Err    error
}

func (e *SourceError) Error() string { return "rackdetect: " + e.Source + ": " + e.Err.Error() }

func (e *SourceError) Unwrap() error { return e.Err }

// named returns a function that wraps a source's error in a *SourceError.
func named(source string) func(string, error) (string, error) {
	return func(zone string, err error) (string, error) {
		if err != nil {
			return "", &SourceError{Source: source, Err: err}
		}
		return zone, nil
	}
}

// DetectError is returned by Detect when no source gave a zone; it holds
// every source's error in order, and errors.Is and errors.As reach them.
type DetectError struct {
	Errs []error
}

func (e *DetectError) Error() string {
	if len(e.Errs) == 0 {
		return "rackdetect: no source given"
	}
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = strings.TrimPrefix(err.Error(), "rackdetect: ")
	}
	return "rackdetect: no zone found: " + strings.Join(msgs, "; ")
}

func (e *DetectError) Unwrap() []error { return e.Errs }

// Detect returns the value of OverrideEnv (KAFKA_CLIENT_RACK) when it is
// set, and otherwise asks the sources in order and returns the first zone
// found. An override that is not a zone is an error (ErrBadOverride), not a
// reason to guess. When no source finds a zone, the error is a *DetectError
// with each source's reason; a cancelled ctx stops the search.
func Detect(ctx context.Context, sources ...Source) (string, error) {
	if zone, ok, err := override(); err != nil || ok {
		return zone, err
	}
	var errs []error
	for _, s := range sources {
		if s == nil {
			continue
		}
		zone, err := s.Zone(ctx)
		if err == nil {
			return zone, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return "", &DetectError{Errs: errs}
}

// checkZone accepts what looks like a zone (use1-az4, europe-west1-b,
// eastus-1): a short run of letters, digits, '-', '_' and '.'. Anything else
// is an error page or a proxy's answer, not a zone.
func checkZone(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", ErrNoZone
	}
	if len(s) > 64 {
		return "", fmt.Errorf("not a zone: %d bytes", len(s))
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return "", fmt.Errorf("not a zone: %q", s)
		}
	}
	return s, nil
}

func timeoutOr(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return DefaultTimeout
}
