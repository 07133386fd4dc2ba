package protocol

// ListGroupsRequest lists the groups a broker coordinates. Version 5 (group
// type filter, KIP-848) is not implemented.
type ListGroupsRequest struct {
	// StatesFilter keeps only groups in these states; empty means all.
	StatesFilter []string // v4+
}

func (*ListGroupsRequest) Key() ApiKey           { return ListGroups }
func (*ListGroupsRequest) MinVersion() int16     { return 0 }
func (*ListGroupsRequest) MaxVersion() int16     { return 4 }
func (*ListGroupsRequest) FlexibleFrom() int16   { return 3 }
func (*ListGroupsRequest) NewResponse() Response { return new(ListGroupsResponse) }

func (r *ListGroupsRequest) Encode(e *Encoder, v int16) {
	if v >= 4 {
		e.StringArray(r.StatesFilter)
	}
	e.Tags()
}

func (r *ListGroupsRequest) Decode(d *Decoder, v int16) error {
	if v >= 4 {
		r.StatesFilter = d.StringArray()
	}
	d.Tags()
	return d.Err()
}

// ListGroupsResponse lists the groups of one broker.
type ListGroupsResponse struct {
	ThrottleTimeMs int32 // v1+
	ErrorCode      int16
	Groups         []ListGroupsResponseGroup
}

type ListGroupsResponseGroup struct {
	GroupID      string
	ProtocolType string
	GroupState   string // v4+
}

func (*ListGroupsResponse) Key() ApiKey       { return ListGroups }
func (r *ListGroupsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *ListGroupsResponse) Encode(e *Encoder, v int16) {
	if v >= 1 {
		e.Int32(r.ThrottleTimeMs)
	}
	e.Int16(r.ErrorCode)
	e.ArrayLen(len(r.Groups))
	for i := range r.Groups {
		g := &r.Groups[i]
		e.String(g.GroupID)
		e.String(g.ProtocolType)
		if v >= 4 {
			e.String(g.GroupState)
		}
		e.Tags()
	}
	e.Tags()
}

func (r *ListGroupsResponse) Decode(d *Decoder, v int16) error {
	if v >= 1 {
		r.ThrottleTimeMs = d.Int32()
	}
	r.ErrorCode = d.Int16()
	if n := d.ArrayLenMin(d.minStruct(0, 2+when(v >= 4, 1), 0)); n > 0 {
		r.Groups = make([]ListGroupsResponseGroup, n)
		for i := range r.Groups {
			g := &r.Groups[i]
			g.GroupID = d.String()
			g.ProtocolType = d.String()
			if v >= 4 {
				g.GroupState = d.String()
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(ListGroupsRequest) }) }
