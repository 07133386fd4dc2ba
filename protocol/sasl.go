package protocol

// SaslHandshakeRequest names the SASL mechanism the client wants. Only
// version 1 is implemented: it is the one followed by SaslAuthenticate
// requests, and Kafka 4.0 removed version 0 (raw SASL tokens on the wire),
// whose body is otherwise identical.
type SaslHandshakeRequest struct {
	Mechanism string
}

func (*SaslHandshakeRequest) Key() ApiKey           { return SaslHandshake }
func (*SaslHandshakeRequest) MinVersion() int16     { return 1 }
func (*SaslHandshakeRequest) MaxVersion() int16     { return 1 }
func (*SaslHandshakeRequest) FlexibleFrom() int16   { return -1 }
func (*SaslHandshakeRequest) NewResponse() Response { return new(SaslHandshakeResponse) }

func (r *SaslHandshakeRequest) Encode(e *Encoder, v int16) { e.String(r.Mechanism) }

func (r *SaslHandshakeRequest) Decode(d *Decoder, v int16) error {
	r.Mechanism = d.String()
	return d.Err()
}

// SaslHandshakeResponse lists the mechanisms the broker has enabled; the
// error code is UNSUPPORTED_SASL_MECHANISM when the chosen one is not among
// them.
type SaslHandshakeResponse struct {
	ErrorCode  int16
	Mechanisms []string
}

func (*SaslHandshakeResponse) Key() ApiKey { return SaslHandshake }

func (r *SaslHandshakeResponse) Encode(e *Encoder, v int16) {
	e.Int16(r.ErrorCode)
	e.StringArray(r.Mechanisms)
}

func (r *SaslHandshakeResponse) Decode(d *Decoder, v int16) error {
	r.ErrorCode = d.Int16()
	r.Mechanisms = d.StringArray()
	return d.Err()
}

// SaslAuthenticateRequest carries one client message of the SASL exchange.
type SaslAuthenticateRequest struct {
	AuthBytes []byte
}

func (*SaslAuthenticateRequest) Key() ApiKey           { return SaslAuthenticate }
func (*SaslAuthenticateRequest) MinVersion() int16     { return 0 }
func (*SaslAuthenticateRequest) MaxVersion() int16     { return 2 }
func (*SaslAuthenticateRequest) FlexibleFrom() int16   { return 2 }
func (*SaslAuthenticateRequest) NewResponse() Response { return new(SaslAuthenticateResponse) }

func (r *SaslAuthenticateRequest) Encode(e *Encoder, v int16) {
	e.NonNullBytes(r.AuthBytes)
	e.Tags()
}

func (r *SaslAuthenticateRequest) Decode(d *Decoder, v int16) error {
	r.AuthBytes = d.NonNullBytes()
	d.Tags()
	return d.Err()
}

// SaslAuthenticateResponse carries one server message of the SASL exchange.
type SaslAuthenticateResponse struct {
	ErrorCode    int16
	ErrorMessage *string
	AuthBytes    []byte
	// SessionLifetimeMs is how long the session lasts before the client must
	// re-authenticate (KIP-368); 0 when the broker does not expire sessions.
	SessionLifetimeMs int64 // v1+
}

func (*SaslAuthenticateResponse) Key() ApiKey { return SaslAuthenticate }

func (r *SaslAuthenticateResponse) Encode(e *Encoder, v int16) {
	e.Int16(r.ErrorCode)
	e.NullableString(r.ErrorMessage)
	e.NonNullBytes(r.AuthBytes)
	if v >= 1 {
		e.Int64(r.SessionLifetimeMs)
	}
	e.Tags()
}

func (r *SaslAuthenticateResponse) Decode(d *Decoder, v int16) error {
	r.ErrorCode = d.Int16()
	r.ErrorMessage = d.NullableString()
	r.AuthBytes = d.NonNullBytes()
	if v >= 1 {
		r.SessionLifetimeMs = d.Int64()
	}
	d.Tags()
	return d.Err()
}

func init() {
	registerRequest(func() Request { return new(SaslHandshakeRequest) })
	registerRequest(func() Request { return new(SaslAuthenticateRequest) })
}
