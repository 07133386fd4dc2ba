package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
)

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
