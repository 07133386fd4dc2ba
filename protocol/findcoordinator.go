package protocol

// Coordinator key types of FindCoordinator.
const (
	CoordinatorKeyTypeGroup       int8 = 0
	CoordinatorKeyTypeTransaction int8 = 1
	CoordinatorKeyTypeShare       int8 = 2 // v6+
)

// FindCoordinatorRequest asks which broker coordinates a group (or a
// transactional id). Versions below 4 look up a single key; version 4
// (KIP-699) batches them in CoordinatorKeys. The caller fills the field of
// the version it sends. Version 0 is not implemented: Kafka 4.0 removed it.
// Versions 5 and 6 only allow new error codes and key types.
type FindCoordinatorRequest struct {
	// CoordinatorKey is the "Key" field of the Kafka spec, renamed so it
	// does not clash with the Key method.
	CoordinatorKey  string   // v1-3
	KeyType         int8     // v1+
	CoordinatorKeys []string // v4+
}

func (*FindCoordinatorRequest) Key() ApiKey           { return FindCoordinator }
func (*FindCoordinatorRequest) MinVersion() int16     { return 1 }
func (*FindCoordinatorRequest) MaxVersion() int16     { return 6 }
func (*FindCoordinatorRequest) FlexibleFrom() int16   { return 3 }
func (*FindCoordinatorRequest) NewResponse() Response { return new(FindCoordinatorResponse) }

func (r *FindCoordinatorRequest) Encode(e *Encoder, v int16) {
	if v < 4 {
		e.String(r.CoordinatorKey)
	}
	e.Int8(r.KeyType)
	if v >= 4 {
		e.StringArray(r.CoordinatorKeys)
	}
	e.Tags()
}

func (r *FindCoordinatorRequest) Decode(d *Decoder, v int16) error {
	if v < 4 {
		r.CoordinatorKey = d.String()
	}
	r.KeyType = d.Int8()
	if v >= 4 {
		r.CoordinatorKeys = d.StringArray()
	}
	d.Tags()
	return d.Err()
}

// FindCoordinatorResponse locates the coordinator. Versions below 4 answer
// with the single top-level node and error; version 4+ with Coordinators,
// one per requested key.
type FindCoordinatorResponse struct {
	ThrottleTimeMs int32                                // v1+
	ErrorCode      int16                                // v1-3
	ErrorMessage   *string                              // v1-3
	NodeID         int32                                // v1-3
	Host           string                               // v1-3
	Port           int32                                // v1-3
	Coordinators   []FindCoordinatorResponseCoordinator // v4+
}

// FindCoordinatorResponseCoordinator is the answer for one key (v4+).
type FindCoordinatorResponseCoordinator struct {
	// CoordinatorKey is the spec's "Key".
	CoordinatorKey string
	NodeID         int32
	Host           string
	Port           int32
	ErrorCode      int16
	ErrorMessage   *string
}

func (*FindCoordinatorResponse) Key() ApiKey       { return FindCoordinator }
func (r *FindCoordinatorResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *FindCoordinatorResponse) Encode(e *Encoder, v int16) {
	if v >= 1 {
		e.Int32(r.ThrottleTimeMs)
	}
	if v < 4 {
		e.Int16(r.ErrorCode)
		if v >= 1 {
			e.NullableString(r.ErrorMessage)
		}
		e.Int32(r.NodeID)
		e.String(r.Host)
		e.Int32(r.Port)
	} else {
		e.ArrayLen(len(r.Coordinators))
		for i := range r.Coordinators {
			c := &r.Coordinators[i]
			e.String(c.CoordinatorKey)
			e.Int32(c.NodeID)
			e.String(c.Host)
			e.Int32(c.Port)
			e.Int16(c.ErrorCode)
			e.NullableString(c.ErrorMessage)
			e.Tags()
		}
	}
	e.Tags()
}

func (r *FindCoordinatorResponse) Decode(d *Decoder, v int16) error {
	if v >= 1 {
		r.ThrottleTimeMs = d.Int32()
	}
	if v < 4 {
		r.ErrorCode = d.Int16()
		if v >= 1 {
			r.ErrorMessage = d.NullableString()
		}
		r.NodeID = d.Int32()
		r.Host = d.String()
		r.Port = d.Int32()
	} else if n := d.ArrayLenMin(d.minStruct(4+4+2, 3, 0)); n > 0 {
		r.Coordinators = make([]FindCoordinatorResponseCoordinator, n)
		for i := range r.Coordinators {
			c := &r.Coordinators[i]
			c.CoordinatorKey = d.String()
			c.NodeID = d.Int32()
			c.Host = d.String()
			c.Port = d.Int32()
			c.ErrorCode = d.Int16()
			c.ErrorMessage = d.NullableString()
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(FindCoordinatorRequest) }) }
