package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
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

// PeerProtocolError reports a peer that does not speak what the client
// speaks: an HTTP or a TLS server where the client expected Kafka in
// plaintext, or a plaintext port where the client speaks TLS. No retry
// fixes it: the address or the Dialer's TLS setting is wrong.
type PeerProtocolError struct {
	// Addr is the address dialed.
	Addr string
	// Peer is what seems to answer there: "HTTP", "TLS" or "plaintext".
	Peer string
	// Err is what the client saw.
	Err error
}

func (e *PeerProtocolError) Error() string {
	switch e.Peer {
	case "HTTP":
		return fmt.Sprintf("%s answered in HTTP, not in the Kafka protocol: not a Kafka listener (%v)", e.Addr, e.Err)
	case "TLS":
		return fmt.Sprintf("%s answered in TLS: a TLS listener, for a client without TLS (set Dialer.TLS or Transport.TLS) (%v)", e.Addr, e.Err)
	case "plaintext":
		return fmt.Sprintf("%s closed the connection during the TLS handshake without a TLS answer: a plaintext listener? (%v)", e.Addr, e.Err)
	}
	return fmt.Sprintf("%s answered in %s, not in the Kafka protocol (%v)", e.Addr, e.Peer, e.Err)
}

func (e *PeerProtocolError) Unwrap() error { return e.Err }

// sniffPeer waits for the first bytes of the first answer on the
// connection, which should be a Kafka response frame's size, and names the
// protocol of a peer that is not Kafka: no valid frame starts with "HTTP" or
// a TLS record header, each would be a size above MaxResponseSize. A peer
// silent until the deadline may be an HTTP server waiting for the end of a
// request line: it is sent one, with a moment to answer (a stalled Kafka
// broker drops the connection on the bogus size it makes). stop undoes the
// request's deadlines; a caller that cancelled ctx is not kept waiting. It
// returns "" when the peer may be Kafka.
func (c *Conn) sniffPeer(ctx context.Context, stop func()) string {
	head, err := c.rbuf.Peek(4)
	var ne net.Error
	if err != nil && len(head) == 0 && errors.As(err, &ne) && ne.Timeout() && !errors.Is(ctx.Err(), context.Canceled) {
		stop()
		_ = c.conn.SetDeadline(time.Now().Add(peerProbeTimeout))
		if _, err = c.conn.Write([]byte("\r\n\r\n")); err == nil {
			head, err = c.rbuf.Peek(4)
		}
		_ = c.conn.SetDeadline(time.Unix(1, 0)) // the request fails as it would have
	}
	if err != nil {
		return ""
	}
	switch {
	case string(head) == "HTTP":
		return "HTTP"
	case head[1] == 3 && (head[0] == 0x15 || head[0] == 0x16): // a TLS alert or handshake record, version 3.x
		return "TLS"
	}
	return ""
}

// peerProbeTimeout bounds the wait for an HTTP server's answer to the
// probe of sniffPeer.
const peerProbeTimeout = 300 * time.Millisecond

// tlsHandshakeError names the likely cause of a failed TLS handshake with
// addr: a peer that answered in HTTP, or one that closed the connection
// without a TLS answer, as a Kafka plaintext listener does with a
// ClientHello it reads as an oversized request. A broker shutting down
// closes connections too, so "plaintext" is said only when a Kafka
// ApiVersions answer on a new plaintext connection confirms it (a failure
// named so is not retried).
func (d *Dialer) tlsHandshakeError(ctx context.Context, network, addr string, err error) error {
	var rhe tls.RecordHeaderError
	switch {
	case errors.As(err, &rhe) && string(rhe.RecordHeader[:4]) == "HTTP":
		return &PeerProtocolError{Addr: addr, Peer: "HTTP", Err: err}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		if ctx.Err() == nil && d.answersPlaintext(ctx, network, addr) {
			return &PeerProtocolError{Addr: addr, Peer: "plaintext", Err: err}
		}
	}
	return err
}

// answersPlaintext reports whether addr answers ApiVersions without TLS.
func (d *Dialer) answersPlaintext(ctx context.Context, network, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, tlsProbeTimeout)
	defer cancel()
	probe := *d
	probe.TLS = nil
	nc, err := probe.dialContext(ctx, network, addr)
	if err != nil {
		return false
	}
	c := NewConnWith(nc, ConnConfig{ClientID: d.ClientID})
	defer c.Close()
	_, err = c.loadApiVersions(ctx)
	return err == nil
}

// namePeer names the peer at address after the first request of a
// plaintext connection failed with err: a peer that closed the connection
// without a byte of answer may be a TLS server (what one does with bytes
// that are not TLS), which a TLS handshake on a new connection tells.
func (d *Dialer) namePeer(ctx context.Context, network, address string, err error) error {
	if d.TLS != nil || !(errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) || ctx.Err() != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, tlsProbeTimeout)
	defer cancel()
	probe := *d
	// Only to learn whether the peer speaks TLS: nothing is sent over it.
	probe.TLS = &tls.Config{InsecureSkipVerify: true} //nolint:gosec
	nc, perr := probe.dialContext(ctx, network, address)
	if perr != nil {
		return err
	}
	nc.Close()
	return &PeerProtocolError{Addr: address, Peer: "TLS", Err: err}
}

// tlsProbeTimeout bounds the handshake of namePeer.
const tlsProbeTimeout = time.Second
