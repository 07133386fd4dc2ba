package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
)

// brokersError is the failure of a request that every broker tried
// failed: each broker's own error, in the order tried, so that errors.Is
// and errors.As reach every cause and the message names every broker.
type brokersError struct {
	tried int
	errs  []error
}

func (e *brokersError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no broker answered among %d tried", e.tried)
	sep := ": "
	for _, err := range e.errs {
		b.WriteString(sep)
		b.WriteString(err.Error())
		sep = "; "
	}
	return b.String()
}

func (e *brokersError) Unwrap() []error { return e.errs }

// add records one broker's failure; the same failure twice (a broker
// tried again) is kept once.
func (e *brokersError) add(err error) {
	for _, x := range e.errs {
		if x.Error() == err.Error() {
			return
		}
	}
	e.errs = append(e.errs, err)
}

// permanentFailure reports a failure to reach the cluster that no retry
// fixes: the credentials or the SASL mechanism, the TLS setup, an address
// that names no host or no Kafka listener. When every broker tried failed,
// it holds only if each one's failure is permanent: one broker down among
// misconfigured ones may come back.
func permanentFailure(err error) bool {
	var be *brokersError
	if errors.As(err, &be) {
		for _, e := range be.errs {
			if !permanentFailure(e) {
				return false
			}
		}
		return len(be.errs) > 0
	}
	var kerr Error
	if errors.As(err, &kerr) {
		switch kerr {
		case SASLAuthenticationFailed, UnsupportedSASLMechanism, IllegalSASLState:
			return true
		}
		return false
	}
	var (
		peerErr *PeerProtocolError
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		hostErr x509.HostnameError
		authErr x509.UnknownAuthorityError
		recErr  tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &dnsErr):
		return dnsErr.IsNotFound
	case errors.As(err, &peerErr), errors.As(err, &certErr), errors.As(err, &hostErr),
		errors.As(err, &authErr), errors.As(err, &recErr):
		return true
	}
	return false
}

// lastFailure keeps the latest failure a client retried without
// returning it, so that a caller whose context ends meanwhile learns why
// nothing came (withCause).
type lastFailure struct{ v atomic.Pointer[error] }

func (l *lastFailure) set(err error) { l.v.Store(&err) }

func (l *lastFailure) clear() { l.v.Store(nil) }

// withCause adds the latest failure to err when err is the caller's
// context ending: errors.Is(err, context.DeadlineExceeded) still holds,
// and errors.Is/As reach the failure too.
func (l *lastFailure) withCause(err error) error {
	p := l.v.Load()
	if p == nil || !(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		return err
	}
	return fmt.Errorf("%w (while retrying: %w)", err, *p)
}
