package protocol

// The ACL admin APIs. Versions 1-3 are implemented: v1 added the resource
// pattern type, v2 made the messages flexible and v3 only added the User
// resource type to the allowed values. v0 (no pattern type) is deprecated
// and Kafka 4.0 removed it (KIP-896).

const (
	DescribeAcls ApiKey = 29
	CreateAcls   ApiKey = 30
	DeleteAcls   ApiKey = 31
)

// DescribeAclsRequest lists the ACLs matching one filter. Nil strings in
// the filter match any value.
type DescribeAclsRequest struct {
	ResourceTypeFilter int8
	ResourceNameFilter *string
	PatternTypeFilter  int8
	PrincipalFilter    *string
	HostFilter         *string
	Operation          int8
	PermissionType     int8
}

func (*DescribeAclsRequest) Key() ApiKey           { return DescribeAcls }
func (*DescribeAclsRequest) MinVersion() int16     { return 1 }
func (*DescribeAclsRequest) MaxVersion() int16     { return 3 }
func (*DescribeAclsRequest) FlexibleFrom() int16   { return 2 }
func (*DescribeAclsRequest) NewResponse() Response { return new(DescribeAclsResponse) }

func (r *DescribeAclsRequest) Encode(e *Encoder, v int16) {
	e.Int8(r.ResourceTypeFilter)
	e.NullableString(r.ResourceNameFilter)
	e.Int8(r.PatternTypeFilter)
	e.NullableString(r.PrincipalFilter)
	e.NullableString(r.HostFilter)
	e.Int8(r.Operation)
	e.Int8(r.PermissionType)
	e.Tags()
}

func (r *DescribeAclsRequest) Decode(d *Decoder, v int16) error {
	r.ResourceTypeFilter = d.Int8()
	r.ResourceNameFilter = d.NullableString()
	r.PatternTypeFilter = d.Int8()
	r.PrincipalFilter = d.NullableString()
	r.HostFilter = d.NullableString()
	r.Operation = d.Int8()
	r.PermissionType = d.Int8()
	d.Tags()
	return d.Err()
}

// DescribeAclsResponse groups the matching ACLs by resource.
type DescribeAclsResponse struct {
	ThrottleTimeMs int32
	ErrorCode      int16
	ErrorMessage   *string
	Resources      []DescribeAclsResponseResource
}

type DescribeAclsResponseResource struct {
	ResourceType int8
	ResourceName string
	PatternType  int8
	Acls         []DescribeAclsResponseAcl
}

type DescribeAclsResponseAcl struct {
	Principal      string
	Host           string
	Operation      int8
	PermissionType int8
}

func (*DescribeAclsResponse) Key() ApiKey       { return DescribeAcls }
func (r *DescribeAclsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *DescribeAclsResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	e.Int16(r.ErrorCode)
	e.NullableString(r.ErrorMessage)
	e.ArrayLen(len(r.Resources))
	for i := range r.Resources {
		res := &r.Resources[i]
		e.Int8(res.ResourceType)
		e.String(res.ResourceName)
		e.Int8(res.PatternType)
		e.ArrayLen(len(res.Acls))
		for _, a := range res.Acls {
			e.String(a.Principal)
			e.String(a.Host)
			e.Int8(a.Operation)
			e.Int8(a.PermissionType)
			e.Tags()
		}
		e.Tags()
	}
	e.Tags()
}

func (r *DescribeAclsResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	r.ErrorCode = d.Int16()
	r.ErrorMessage = d.NullableString()
	if n := d.ArrayLenMin(d.minStruct(2, 1, 1)); n > 0 {
		r.Resources = make([]DescribeAclsResponseResource, n)
		for i := range r.Resources {
			res := &r.Resources[i]
			res.ResourceType = d.Int8()
			res.ResourceName = d.String()
			res.PatternType = d.Int8()
			if n := d.ArrayLenMin(d.minStruct(2, 2, 0)); n > 0 {
				res.Acls = make([]DescribeAclsResponseAcl, n)
				for j := range res.Acls {
					a := &res.Acls[j]
					a.Principal = d.String()
					a.Host = d.String()
					a.Operation = d.Int8()
					a.PermissionType = d.Int8()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

// CreateAclsRequest adds ACLs; the response has one result per creation,
// in order.
type CreateAclsRequest struct {
	Creations []CreateAclsRequestCreation
}

type CreateAclsRequestCreation struct {
	ResourceType        int8
	ResourceName        string
	ResourcePatternType int8
	Principal           string
	Host                string
	Operation           int8
	PermissionType      int8
}

func (*CreateAclsRequest) Key() ApiKey           { return CreateAcls }
func (*CreateAclsRequest) MinVersion() int16     { return 1 }
func (*CreateAclsRequest) MaxVersion() int16     { return 3 }
func (*CreateAclsRequest) FlexibleFrom() int16   { return 2 }
func (*CreateAclsRequest) NewResponse() Response { return new(CreateAclsResponse) }

func (r *CreateAclsRequest) Encode(e *Encoder, v int16) {
	e.ArrayLen(len(r.Creations))
	for _, c := range r.Creations {
		e.Int8(c.ResourceType)
		e.String(c.ResourceName)
		e.Int8(c.ResourcePatternType)
		e.String(c.Principal)
		e.String(c.Host)
		e.Int8(c.Operation)
		e.Int8(c.PermissionType)
		e.Tags()
	}
	e.Tags()
}

func (r *CreateAclsRequest) Decode(d *Decoder, v int16) error {
	if n := d.ArrayLenMin(d.minStruct(4, 3, 0)); n > 0 {
		r.Creations = make([]CreateAclsRequestCreation, n)
		for i := range r.Creations {
			c := &r.Creations[i]
			c.ResourceType = d.Int8()
			c.ResourceName = d.String()
			c.ResourcePatternType = d.Int8()
			c.Principal = d.String()
			c.Host = d.String()
			c.Operation = d.Int8()
			c.PermissionType = d.Int8()
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

type CreateAclsResponse struct {
	ThrottleTimeMs int32
	Results        []CreateAclsResponseResult
}

type CreateAclsResponseResult struct {
	ErrorCode    int16
	ErrorMessage *string
}

func (*CreateAclsResponse) Key() ApiKey       { return CreateAcls }
func (r *CreateAclsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *CreateAclsResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	e.ArrayLen(len(r.Results))
	for _, res := range r.Results {
		e.Int16(res.ErrorCode)
		e.NullableString(res.ErrorMessage)
		e.Tags()
	}
	e.Tags()
}

func (r *CreateAclsResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	if n := d.ArrayLenMin(d.minStruct(2, 1, 0)); n > 0 {
		r.Results = make([]CreateAclsResponseResult, n)
		for i := range r.Results {
			res := &r.Results[i]
			res.ErrorCode = d.Int16()
			res.ErrorMessage = d.NullableString()
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

// DeleteAclsRequest removes the ACLs matching each filter. Nil strings in
// a filter match any value.
type DeleteAclsRequest struct {
	Filters []DeleteAclsRequestFilter
}

type DeleteAclsRequestFilter struct {
	ResourceTypeFilter int8
	ResourceNameFilter *string
	PatternTypeFilter  int8
	PrincipalFilter    *string
	HostFilter         *string
	Operation          int8
	PermissionType     int8
}

func (*DeleteAclsRequest) Key() ApiKey           { return DeleteAcls }
func (*DeleteAclsRequest) MinVersion() int16     { return 1 }
func (*DeleteAclsRequest) MaxVersion() int16     { return 3 }
func (*DeleteAclsRequest) FlexibleFrom() int16   { return 2 }
func (*DeleteAclsRequest) NewResponse() Response { return new(DeleteAclsResponse) }

func (r *DeleteAclsRequest) Encode(e *Encoder, v int16) {
	e.ArrayLen(len(r.Filters))
	for _, f := range r.Filters {
		e.Int8(f.ResourceTypeFilter)
		e.NullableString(f.ResourceNameFilter)
		e.Int8(f.PatternTypeFilter)
		e.NullableString(f.PrincipalFilter)
		e.NullableString(f.HostFilter)
		e.Int8(f.Operation)
		e.Int8(f.PermissionType)
		e.Tags()
	}
	e.Tags()
}

func (r *DeleteAclsRequest) Decode(d *Decoder, v int16) error {
	if n := d.ArrayLenMin(d.minStruct(4, 3, 0)); n > 0 {
		r.Filters = make([]DeleteAclsRequestFilter, n)
		for i := range r.Filters {
			f := &r.Filters[i]
			f.ResourceTypeFilter = d.Int8()
			f.ResourceNameFilter = d.NullableString()
			f.PatternTypeFilter = d.Int8()
			f.PrincipalFilter = d.NullableString()
			f.HostFilter = d.NullableString()
			f.Operation = d.Int8()
			f.PermissionType = d.Int8()
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

// DeleteAclsResponse has one result per filter, in order, each listing the
// ACLs the filter matched.
type DeleteAclsResponse struct {
	ThrottleTimeMs int32
	FilterResults  []DeleteAclsResponseFilterResult
}

type DeleteAclsResponseFilterResult struct {
	ErrorCode    int16
	ErrorMessage *string
	MatchingAcls []DeleteAclsResponseMatchingAcl
}

type DeleteAclsResponseMatchingAcl struct {
	ErrorCode      int16
	ErrorMessage   *string
	ResourceType   int8
	ResourceName   string
	PatternType    int8
	Principal      string
	Host           string
	Operation      int8
	PermissionType int8
}

func (*DeleteAclsResponse) Key() ApiKey       { return DeleteAcls }
func (r *DeleteAclsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *DeleteAclsResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	e.ArrayLen(len(r.FilterResults))
	for i := range r.FilterResults {
		fr := &r.FilterResults[i]
		e.Int16(fr.ErrorCode)
		e.NullableString(fr.ErrorMessage)
		e.ArrayLen(len(fr.MatchingAcls))
		for j := range fr.MatchingAcls {
			m := &fr.MatchingAcls[j]
			e.Int16(m.ErrorCode)
			e.NullableString(m.ErrorMessage)
			e.Int8(m.ResourceType)
			e.String(m.ResourceName)
			e.Int8(m.PatternType)
			e.String(m.Principal)
			e.String(m.Host)
			e.Int8(m.Operation)
			e.Int8(m.PermissionType)
			e.Tags()
		}
		e.Tags()
	}
	e.Tags()
}

func (r *DeleteAclsResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	if n := d.ArrayLenMin(d.minStruct(2, 1, 1)); n > 0 {
		r.FilterResults = make([]DeleteAclsResponseFilterResult, n)
		for i := range r.FilterResults {
			fr := &r.FilterResults[i]
			fr.ErrorCode = d.Int16()
			fr.ErrorMessage = d.NullableString()
			if n := d.ArrayLenMin(d.minStruct(6, 4, 0)); n > 0 {
				fr.MatchingAcls = make([]DeleteAclsResponseMatchingAcl, n)
				for j := range fr.MatchingAcls {
					m := &fr.MatchingAcls[j]
					m.ErrorCode = d.Int16()
					m.ErrorMessage = d.NullableString()
					m.ResourceType = d.Int8()
					m.ResourceName = d.String()
					m.PatternType = d.Int8()
					m.Principal = d.String()
					m.Host = d.String()
					m.Operation = d.Int8()
					m.PermissionType = d.Int8()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

func init() {
	apiNames[DescribeAcls] = "DescribeAcls"
	apiNames[CreateAcls] = "CreateAcls"
	apiNames[DeleteAcls] = "DeleteAcls"
	registerRequest(func() Request { return new(DescribeAclsRequest) })
	registerRequest(func() Request { return new(CreateAclsRequest) })
	registerRequest(func() Request { return new(DeleteAclsRequest) })
}
