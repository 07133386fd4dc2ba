package protocol

// ApiVersionsRequest asks a broker which versions of each API it supports.
type ApiVersionsRequest struct {
	ClientSoftwareName    string // v3+
	ClientSoftwareVersion string // v3+
}

func (*ApiVersionsRequest) Key() ApiKey           { return ApiVersions }
func (*ApiVersionsRequest) MinVersion() int16     { return 0 }
func (*ApiVersionsRequest) MaxVersion() int16     { return 3 }
func (*ApiVersionsRequest) FlexibleFrom() int16   { return 3 }
func (*ApiVersionsRequest) NewResponse() Response { return new(ApiVersionsResponse) }

func (r *ApiVersionsRequest) Encode(e *Encoder, v int16) {
	if v >= 3 {
		e.String(r.ClientSoftwareName)
		e.String(r.ClientSoftwareVersion)
		e.Tags()
	}
}

func (r *ApiVersionsRequest) Decode(d *Decoder, v int16) error {
	if v >= 3 {
		r.ClientSoftwareName = d.String()
		r.ClientSoftwareVersion = d.String()
		d.Tags()
	}
	return d.Err()
}

// ApiVersionsResponse lists the version range of every API a broker speaks.
type ApiVersionsResponse struct {
	ErrorCode      int16
	ApiKeys        []ApiVersionsKey
	ThrottleTimeMs int32 // v1+
}

type ApiVersionsKey struct {
	ApiKey     ApiKey
	MinVersion int16
	MaxVersion int16
}

func (*ApiVersionsResponse) Key() ApiKey       { return ApiVersions }
func (r *ApiVersionsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *ApiVersionsResponse) Encode(e *Encoder, v int16) {
	e.Int16(r.ErrorCode)
	e.ArrayLen(len(r.ApiKeys))
	for _, k := range r.ApiKeys {
		e.Int16(int16(k.ApiKey))
		e.Int16(k.MinVersion)
		e.Int16(k.MaxVersion)
		e.Tags()
	}
	if v >= 1 {
		e.Int32(r.ThrottleTimeMs)
	}
	e.Tags()
}

// errUnsupportedVersion is UNSUPPORTED_VERSION, with which a broker answers
// an ApiVersions version it does not know.
const errUnsupportedVersion = 35

// Decode reads the response at v; a broker refusing v answers in the v0
// layout, which is what is read when v's layout does not fit or carries
// UNSUPPORTED_VERSION (as the Java client does).
func (r *ApiVersionsResponse) Decode(d *Decoder, v int16) error {
	if v == 0 {
		return r.decode(d, 0)
	}
	start := *d
	if err := r.decode(d, v); err == nil && r.ErrorCode != errUnsupportedVersion {
		return nil
	}
	*d = start
	d.Flexible = false
	*r = ApiVersionsResponse{}
	return r.decode(d, 0)
}

func (r *ApiVersionsResponse) decode(d *Decoder, v int16) error {
	r.ErrorCode = d.Int16()
	if n := d.ArrayLenMin(d.minStruct(6, 0, 0)); n > 0 {
		r.ApiKeys = make([]ApiVersionsKey, n)
		for i := range r.ApiKeys {
			k := &r.ApiKeys[i]
			k.ApiKey = ApiKey(d.Int16())
			k.MinVersion = d.Int16()
			k.MaxVersion = d.Int16()
			d.Tags()
		}
	}
	if v >= 1 {
		r.ThrottleTimeMs = d.Int32()
	}
	d.Tags()
	return d.Err()
}

// Versions returns the response as a version table.
func (r *ApiVersionsResponse) Versions() Versions {
	vs := make(Versions, len(r.ApiKeys))
	for _, k := range r.ApiKeys {
		vs[k.ApiKey] = VersionRange{Min: k.MinVersion, Max: k.MaxVersion}
	}
	return vs
}

func init() { registerRequest(func() Request { return new(ApiVersionsRequest) }) }
