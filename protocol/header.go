package protocol

import "fmt"

// MaxResponseSize bounds a response frame read from a broker, so a hostile
// size prefix cannot make the client allocate gigabytes.
var MaxResponseSize int32 = 256 << 20

// RequestHeader is the header of every request (versions 0-2: version 2 adds
// tagged fields for flexible requests).
type RequestHeader struct {
	Key           ApiKey
	Version       int16
	CorrelationID int32
	ClientID      *string
}

// headerVersions returns the request and response header versions for
// version v of r. ApiVersions responses always use header v0 so that a
// client can read them before it knows anything about the broker.
func headerVersions(key ApiKey, flexible bool) (req, resp int16) {
	if !flexible {
		return 1, 0
	}
	if key == ApiVersions {
		return 2, 0
	}
	return 2, 1
}

// AppendRequest appends a complete size-prefixed request frame for r at
// version v to dst.
func AppendRequest(dst []byte, r Request, v int16, correlationID int32, clientID string) []byte {
	flexible := IsFlexible(r, v)
	hv, _ := headerVersions(r.Key(), flexible)
	e := Encoder{B: dst}
	start := e.BeginSize()
	e.Int16(int16(r.Key()))
	e.Int16(v)
	e.Int32(correlationID)
	e.NullableString(&clientID) // the client id is never compact
	if hv >= 2 {
		e.Flexible = true
		e.Tags()
	}
	e.Flexible = flexible
	r.Encode(&e, v)
	e.EndSize(start)
	return e.B
}

// DecodeRequestHeader reads a request header from the start of a frame
// body (after the size) and returns it with the decoder positioned at the
// request body. flexibleFrom says, for an api key, from which version the
// request is flexible (-1: never); the fake broker passes its table.
func DecodeRequestHeader(body []byte, flexibleFrom func(ApiKey) int16) (RequestHeader, *Decoder, error) {
	d := NewDecoder(body, false)
	var h RequestHeader
	h.Key = ApiKey(d.Int16())
	h.Version = d.Int16()
	h.CorrelationID = d.Int32()
	h.ClientID = d.NullableString()
	if d.Err() != nil {
		return h, nil, fmt.Errorf("decoding request header: %w", d.Err())
	}
	f := flexibleFrom(h.Key)
	flexible := f >= 0 && h.Version >= f
	if flexible {
		d.Flexible = true
		d.Tags()
	}
	if d.Err() != nil {
		return h, nil, fmt.Errorf("decoding request header: %w", d.Err())
	}
	return h, d, nil
}

// AppendResponse appends a complete size-prefixed response frame.
func AppendResponse(dst []byte, resp Response, v int16, flexible bool, correlationID int32) []byte {
	_, hv := headerVersions(resp.Key(), flexible)
	e := Encoder{B: dst}
	start := e.BeginSize()
	e.Int32(correlationID)
	if hv >= 1 {
		e.Flexible = true
		e.Tags()
	}
	e.Flexible = flexible
	resp.Encode(&e, v)
	e.EndSize(start)
	return e.B
}

// DecodeResponse decodes a response frame body (after the size) into resp,
// checking the correlation id.
func DecodeResponse(body []byte, resp Response, v int16, flexible bool, correlationID int32) error {
	_, hv := headerVersions(resp.Key(), flexible)
	d := NewDecoder(body, false)
	got := d.Int32()
	if d.Err() == nil && got != correlationID {
		return fmt.Errorf("kafka protocol: %s response has correlation id %d, expected %d", resp.Key(), got, correlationID)
	}
	if hv >= 1 {
		d.Flexible = true
		d.Tags()
	}
	if d.Err() != nil {
		return fmt.Errorf("decoding %s v%d response header: %w", resp.Key(), v, d.Err())
	}
	d.Flexible = flexible
	if err := resp.Decode(d, v); err != nil {
		return fmt.Errorf("decoding %s v%d response: %w", resp.Key(), v, err)
	}
	return nil
}
