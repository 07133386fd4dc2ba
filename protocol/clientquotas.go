package protocol

// The client quota APIs (KIP-546), versions 0-1; v1 only made them
// flexible.

const (
	DescribeClientQuotas ApiKey = 48
	AlterClientQuotas    ApiKey = 49
)

// ClientQuotasEntity is one component of a quota entity: a type ("user",
// "client-id", "ip") and a name, nil for the type's default entity.
type ClientQuotasEntity struct {
	EntityType string
	EntityName *string
}

func (ent *ClientQuotasEntity) encode(e *Encoder) {
	e.String(ent.EntityType)
	e.NullableString(ent.EntityName)
	e.Tags()
}

func (ent *ClientQuotasEntity) decode(d *Decoder) {
	ent.EntityType = d.String()
	ent.EntityName = d.NullableString()
	d.Tags()
}

func encodeClientQuotasEntities(e *Encoder, ents []ClientQuotasEntity) {
	e.ArrayLen(len(ents))
	for i := range ents {
		ents[i].encode(e)
	}
}

func decodeClientQuotasEntities(d *Decoder) []ClientQuotasEntity {
	n := d.ArrayLenMin(d.minStruct(0, 2, 0))
	if n <= 0 {
		return nil
	}
	ents := make([]ClientQuotasEntity, n)
	for i := range ents {
		ents[i].decode(d)
	}
	return ents
}

// DescribeClientQuotasRequest reads the quotas of the entities matching
// every component.
type DescribeClientQuotasRequest struct {
	Components []DescribeClientQuotasRequestComponent
	// Strict leaves out entities that have components of types the filter
	// does not name.
	Strict bool
}

type DescribeClientQuotasRequestComponent struct {
	EntityType string
	MatchType  int8    // 0 exact name, 1 default entity, 2 any name
	Match      *string // the name for MatchType 0, else nil
}

func (*DescribeClientQuotasRequest) Key() ApiKey           { return DescribeClientQuotas }
func (*DescribeClientQuotasRequest) MinVersion() int16     { return 0 }
func (*DescribeClientQuotasRequest) MaxVersion() int16     { return 1 }
func (*DescribeClientQuotasRequest) FlexibleFrom() int16   { return 1 }
func (*DescribeClientQuotasRequest) NewResponse() Response { return new(DescribeClientQuotasResponse) }

func (r *DescribeClientQuotasRequest) Encode(e *Encoder, v int16) {
	e.ArrayLen(len(r.Components))
	for _, c := range r.Components {
		e.String(c.EntityType)
		e.Int8(c.MatchType)
		e.NullableString(c.Match)
		e.Tags()
	}
	e.Bool(r.Strict)
	e.Tags()
}

func (r *DescribeClientQuotasRequest) Decode(d *Decoder, v int16) error {
	if n := d.ArrayLenMin(d.minStruct(1, 2, 0)); n > 0 {
		r.Components = make([]DescribeClientQuotasRequestComponent, n)
		for i := range r.Components {
			c := &r.Components[i]
			c.EntityType = d.String()
			c.MatchType = d.Int8()
			c.Match = d.NullableString()
			d.Tags()
		}
	}
	r.Strict = d.Bool()
	d.Tags()
	return d.Err()
}

// DescribeClientQuotasResponse lists each matching entity with its quota
// values. Entries is null on the wire when ErrorCode is set.
type DescribeClientQuotasResponse struct {
	ThrottleTimeMs int32
	ErrorCode      int16
	ErrorMessage   *string
	Entries        []DescribeClientQuotasResponseEntry
}

type DescribeClientQuotasResponseEntry struct {
	Entity []ClientQuotasEntity
	Values []DescribeClientQuotasResponseValue
}

type DescribeClientQuotasResponseValue struct {
	Key   string
	Value float64
}

func (*DescribeClientQuotasResponse) Key() ApiKey       { return DescribeClientQuotas }
func (r *DescribeClientQuotasResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *DescribeClientQuotasResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	e.Int16(r.ErrorCode)
	e.NullableString(r.ErrorMessage)
	e.ArrayLen(lenOrNull(r.Entries))
	for i := range r.Entries {
		ent := &r.Entries[i]
		encodeClientQuotasEntities(e, ent.Entity)
		e.ArrayLen(len(ent.Values))
		for _, val := range ent.Values {
			e.String(val.Key)
			e.Float64(val.Value)
			e.Tags()
		}
		e.Tags()
	}
	e.Tags()
}

func (r *DescribeClientQuotasResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	r.ErrorCode = d.Int16()
	r.ErrorMessage = d.NullableString()
	if n := d.ArrayLenMin(d.minStruct(0, 0, 2)); n > 0 {
		r.Entries = make([]DescribeClientQuotasResponseEntry, n)
		for i := range r.Entries {
			ent := &r.Entries[i]
			ent.Entity = decodeClientQuotasEntities(d)
			if n := d.ArrayLenMin(d.minStruct(8, 1, 0)); n > 0 {
				ent.Values = make([]DescribeClientQuotasResponseValue, n)
				for j := range ent.Values {
					val := &ent.Values[j]
					val.Key = d.String()
					val.Value = d.Float64()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

// AlterClientQuotasRequest sets or removes quota values of entities.
type AlterClientQuotasRequest struct {
	Entries      []AlterClientQuotasRequestEntry
	ValidateOnly bool
}

type AlterClientQuotasRequestEntry struct {
	Entity []ClientQuotasEntity
	Ops    []AlterClientQuotasRequestOp
}

type AlterClientQuotasRequestOp struct {
	Key    string
	Value  float64 // ignored when Remove is set
	Remove bool
}

func (*AlterClientQuotasRequest) Key() ApiKey           { return AlterClientQuotas }
func (*AlterClientQuotasRequest) MinVersion() int16     { return 0 }
func (*AlterClientQuotasRequest) MaxVersion() int16     { return 1 }
func (*AlterClientQuotasRequest) FlexibleFrom() int16   { return 1 }
func (*AlterClientQuotasRequest) NewResponse() Response { return new(AlterClientQuotasResponse) }

func (r *AlterClientQuotasRequest) Encode(e *Encoder, v int16) {
	e.ArrayLen(len(r.Entries))
	for i := range r.Entries {
		ent := &r.Entries[i]
		encodeClientQuotasEntities(e, ent.Entity)
		e.ArrayLen(len(ent.Ops))
		for _, op := range ent.Ops {
			e.String(op.Key)
			e.Float64(op.Value)
			e.Bool(op.Remove)
			e.Tags()
		}
		e.Tags()
	}
	e.Bool(r.ValidateOnly)
	e.Tags()
}

func (r *AlterClientQuotasRequest) Decode(d *Decoder, v int16) error {
	if n := d.ArrayLenMin(d.minStruct(0, 0, 2)); n > 0 {
		r.Entries = make([]AlterClientQuotasRequestEntry, n)
		for i := range r.Entries {
			ent := &r.Entries[i]
			ent.Entity = decodeClientQuotasEntities(d)
			if n := d.ArrayLenMin(d.minStruct(9, 1, 0)); n > 0 {
				ent.Ops = make([]AlterClientQuotasRequestOp, n)
				for j := range ent.Ops {
					op := &ent.Ops[j]
					op.Key = d.String()
					op.Value = d.Float64()
					op.Remove = d.Bool()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	r.ValidateOnly = d.Bool()
	d.Tags()
	return d.Err()
}

// AlterClientQuotasResponse has one result per entity altered.
type AlterClientQuotasResponse struct {
	ThrottleTimeMs int32
	Entries        []AlterClientQuotasResponseEntry
}

type AlterClientQuotasResponseEntry struct {
	ErrorCode    int16
	ErrorMessage *string
	Entity       []ClientQuotasEntity
}

func (*AlterClientQuotasResponse) Key() ApiKey       { return AlterClientQuotas }
func (r *AlterClientQuotasResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *AlterClientQuotasResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	e.ArrayLen(len(r.Entries))
	for i := range r.Entries {
		ent := &r.Entries[i]
		e.Int16(ent.ErrorCode)
		e.NullableString(ent.ErrorMessage)
		encodeClientQuotasEntities(e, ent.Entity)
		e.Tags()
	}
	e.Tags()
}

func (r *AlterClientQuotasResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	if n := d.ArrayLenMin(d.minStruct(2, 1, 1)); n > 0 {
		r.Entries = make([]AlterClientQuotasResponseEntry, n)
		for i := range r.Entries {
			ent := &r.Entries[i]
			ent.ErrorCode = d.Int16()
			ent.ErrorMessage = d.NullableString()
			ent.Entity = decodeClientQuotasEntities(d)
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

func init() {
	apiNames[DescribeClientQuotas] = "DescribeClientQuotas"
	apiNames[AlterClientQuotas] = "AlterClientQuotas"
	registerRequest(func() Request { return new(DescribeClientQuotasRequest) })
	registerRequest(func() Request { return new(AlterClientQuotasRequest) })
}
