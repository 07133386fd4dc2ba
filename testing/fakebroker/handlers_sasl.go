package fakebroker

import (
	"bytes"
	"encoding/binary"
)

// checkPlain verifies a SASL/PLAIN token: [authzid] NUL user NUL password.
func (b *Broker) checkPlain(token []byte) bool {
	want := b.cluster.cfg.SASL
	if want == nil {
		return false
	}
	parts := bytes.Split(token, []byte{0})
	if len(parts) != 3 {
		return false
	}
	return string(parts[1]) == want.User && string(parts[2]) == want.Password
}

// rawSASLToken handles the bare token that follows a v0 SaslHandshake: an
// empty frame answers success, a failure closes the connection.
func (b *Broker) rawSASLToken(c *conn, token []byte) bool {
	c.rawSASL = false
	if c.mechanism != "PLAIN" || !b.checkPlain(token) {
		return false
	}
	c.authenticated = true
	_, err := c.Write(binary.BigEndian.AppendUint32(nil, 0))
	return err == nil
}
