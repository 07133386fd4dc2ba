package testing

// Just enough of the Kafka protocol, by hand and with the standard library only, for the harness's own
// integration tests: Metadata v4, SaslHandshake v1 and SaslAuthenticate v1 (PLAIN, SCRAM-SHA-256/512).
// The client library's real protocol package is tested elsewhere; this only proves the cluster.

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

const (
	apiMetadata         = 3
	apiSaslHandshake    = 17
	apiSaslAuthenticate = 36
)

type wireConn struct {
	net.Conn
	corr int32
}

func dialWire(addr string, tlsConfig *tls.Config, timeout time.Duration) (*wireConn, error) {
	d := net.Dialer{Timeout: timeout}
	var c net.Conn
	var err error
	if tlsConfig != nil {
		c, err = tls.DialWithDialer(&d, "tcp", addr, tlsConfig)
	} else {
		c, err = d.Dial("tcp", addr)
	}
	if err != nil {
		return nil, err
	}
	return &wireConn{Conn: c}, nil
}

// roundTrip sends one request (header v1) and returns the response body after the correlation id.
func (c *wireConn) roundTrip(key, ver int16, body []byte, timeout time.Duration) ([]byte, error) {
	c.corr++
	var b []byte
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(ver))
	b = binary.BigEndian.AppendUint32(b, uint32(c.corr))
	b = appendString(b, "ktesting")
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	if _, err := c.Write(b); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 16<<20 {
		return nil, fmt.Errorf("response size %d", n)
	}
	resp := make([]byte, n)
	if _, err := io.ReadFull(c, resp); err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(resp)); got != c.corr {
		return nil, fmt.Errorf("correlation id %d, want %d", got, c.corr)
	}
	return resp[4:], nil
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func appendBytes(b, s []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = errors.New("short response")
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) int16() int16 {
	if v := r.take(2); v != nil {
		return int16(binary.BigEndian.Uint16(v))
	}
	return 0
}

func (r *reader) int32() int32 {
	if v := r.take(4); v != nil {
		return int32(binary.BigEndian.Uint32(v))
	}
	return 0
}

func (r *reader) nullableString() (string, bool) {
	n := r.int16()
	if n < 0 {
		return "", false
	}
	return string(r.take(int(n))), true
}

func (r *reader) bytes() []byte {
	n := r.int32()
	if n < 0 {
		return nil
	}
	return r.take(int(n))
}

type brokerInfo struct {
	ID   int
	Addr string
	Rack string
}

// metadata asks for Metadata v4 without topics and returns the brokers, by id.
func (c *wireConn) metadata(timeout time.Duration) (map[int]brokerInfo, error) {
	body := []byte{0, 0, 0, 0, 0} // topics: [] ; allow_auto_topic_creation: false
	resp, err := c.roundTrip(apiMetadata, 4, body, timeout)
	if err != nil {
		return nil, err
	}
	r := &reader{b: resp}
	r.int32() // throttle_time_ms
	n := r.int32()
	brokers := map[int]brokerInfo{}
	for i := int32(0); i < n && r.err == nil; i++ {
		id := r.int32()
		host, _ := r.nullableString()
		port := r.int32()
		rack, _ := r.nullableString()
		brokers[int(id)] = brokerInfo{ID: int(id), Addr: net.JoinHostPort(host, strconv.Itoa(int(port))), Rack: rack}
	}
	return brokers, r.err
}

// fetchMetadata dials addr and asks for Metadata.
func fetchMetadata(addr string, tlsConfig *tls.Config, timeout time.Duration) (map[int]brokerInfo, error) {
	c, err := dialWire(addr, tlsConfig, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.metadata(timeout)
}

// kafkaError is a non-zero error code in a response.
type kafkaError struct {
	code int16
	msg  string
}

func (e *kafkaError) Error() string { return fmt.Sprintf("kafka error %d %s", e.code, e.msg) }

// saslLogin runs SaslHandshake v1 and SaslAuthenticate v1 for mechanism with user and password.
func (c *wireConn) saslLogin(mechanism, user, password string, timeout time.Duration) error {
	resp, err := c.roundTrip(apiSaslHandshake, 1, appendString(nil, mechanism), timeout)
	if err != nil {
		return err
	}
	r := &reader{b: resp}
	if code := r.int16(); code != 0 {
		return &kafkaError{code: code, msg: "SaslHandshake " + mechanism}
	}
	auth := func(msg []byte) ([]byte, error) {
		resp, err := c.roundTrip(apiSaslAuthenticate, 1, appendBytes(nil, msg), timeout)
		if err != nil {
			return nil, err
		}
		r := &reader{b: resp}
		code := r.int16()
		emsg, _ := r.nullableString()
		out := r.bytes()
		if r.err != nil {
			return nil, r.err
		}
		if code != 0 {
			return nil, &kafkaError{code: code, msg: emsg}
		}
		return out, nil
	}
	switch mechanism {
	case "PLAIN":
		_, err := auth([]byte("\x00" + user + "\x00" + password))
		return err
	case "SCRAM-SHA-256":
		return scramLogin(auth, sha256.New, user, password)
	case "SCRAM-SHA-512":
		return scramLogin(auth, sha512.New, user, password)
	}
	return fmt.Errorf("mechanism %s", mechanism)
}

// scramLogin is the client side of RFC 5802 (no channel binding); user names here need no escaping.
func scramLogin(auth func([]byte) ([]byte, error), h func() hash.Hash, user, password string) error {
	var nb [18]byte
	if _, err := rand.Read(nb[:]); err != nil {
		return err
	}
	nonce := base64.RawStdEncoding.EncodeToString(nb[:])
	clientFirstBare := "n=" + user + ",r=" + nonce
	serverFirst, err := auth([]byte("n,," + clientFirstBare))
	if err != nil {
		return err
	}
	attrs := map[string]string{}
	for _, kv := range strings.Split(string(serverFirst), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			attrs[k] = v
		}
	}
	salt, err := base64.StdEncoding.DecodeString(attrs["s"])
	iters, _ := strconv.Atoi(attrs["i"])
	if err != nil || iters <= 0 || !strings.HasPrefix(attrs["r"], nonce) {
		return fmt.Errorf("bad server-first-message %q", serverFirst)
	}
	mac := func(key []byte, s string) []byte {
		m := hmac.New(h, key)
		m.Write([]byte(s))
		return m.Sum(nil)
	}
	// Hi(): PBKDF2 with HMAC-H and one block.
	u := mac([]byte(password), string(append(append([]byte{}, salt...), 0, 0, 0, 1)))
	salted := append([]byte{}, u...)
	for i := 1; i < iters; i++ {
		u = mac([]byte(password), string(u))
		for j := range salted {
			salted[j] ^= u[j]
		}
	}
	clientKey := mac(salted, "Client Key")
	sum := h()
	sum.Write(clientKey)
	storedKey := sum.Sum(nil)
	withoutProof := "c=biws,r=" + attrs["r"]
	authMessage := clientFirstBare + "," + string(serverFirst) + "," + withoutProof
	sig := mac(storedKey, authMessage)
	proof := make([]byte, len(clientKey))
	for i := range proof {
		proof[i] = clientKey[i] ^ sig[i]
	}
	serverFinal, err := auth([]byte(withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof)))
	if err != nil {
		return err
	}
	want := "v=" + base64.StdEncoding.EncodeToString(mac(mac(salted, "Server Key"), authMessage))
	if string(serverFinal) != want {
		return fmt.Errorf("server signature %q, want %q", serverFinal, want)
	}
	return nil
}

// tlsConfigFor trusts the cluster's CA (KAFKA_TLS_CA).
func tlsConfigFor(caFile string) (*tls.Config, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", caFile)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}
