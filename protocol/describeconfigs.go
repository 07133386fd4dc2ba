package protocol

// DescribeConfigsRequest reads the configuration of topics, brokers and
// broker loggers. Kafka 4.0 removed v0 (KIP-896), so v1 is the oldest
// version implemented and the v0-only IsDefault flag is left out: from v1
// on ConfigSource carries that information.
type DescribeConfigsRequest struct {
	Resources            []DescribeConfigsRequestResource
	IncludeSynonyms      bool // v1+
	IncludeDocumentation bool // v3+
}

type DescribeConfigsRequestResource struct {
	ResourceType int8 // 2 topic, 4 broker, 8 broker logger
	ResourceName string
	// ConfigurationKeys nil (null on the wire) asks for every key.
	ConfigurationKeys []string
}

func (*DescribeConfigsRequest) Key() ApiKey           { return DescribeConfigs }
func (*DescribeConfigsRequest) MinVersion() int16     { return 1 }
func (*DescribeConfigsRequest) MaxVersion() int16     { return 4 }
func (*DescribeConfigsRequest) FlexibleFrom() int16   { return 4 }
func (*DescribeConfigsRequest) NewResponse() Response { return new(DescribeConfigsResponse) }

func (r *DescribeConfigsRequest) Encode(e *Encoder, v int16) {
	e.ArrayLen(len(r.Resources))
	for _, res := range r.Resources {
		e.Int8(res.ResourceType)
		e.String(res.ResourceName)
		e.NullableStringArray(res.ConfigurationKeys)
		e.Tags()
	}
	if v >= 1 {
		e.Bool(r.IncludeSynonyms)
	}
	if v >= 3 {
		e.Bool(r.IncludeDocumentation)
	}
	e.Tags()
}

func (r *DescribeConfigsRequest) Decode(d *Decoder, v int16) error {
	if n := d.ArrayLen(); n > 0 {
		r.Resources = make([]DescribeConfigsRequestResource, n)
		for i := range r.Resources {
			res := &r.Resources[i]
			res.ResourceType = d.Int8()
			res.ResourceName = d.String()
			res.ConfigurationKeys = d.StringArray()
			d.Tags()
		}
	}
	if v >= 1 {
		r.IncludeSynonyms = d.Bool()
	}
	if v >= 3 {
		r.IncludeDocumentation = d.Bool()
	}
	d.Tags()
	return d.Err()
}

// DescribeConfigsResponse holds one result per requested resource.
type DescribeConfigsResponse struct {
	ThrottleTimeMs int32
	Results        []DescribeConfigsResponseResult
}

type DescribeConfigsResponseResult struct {
	ErrorCode    int16
	ErrorMessage *string
	ResourceType int8
	ResourceName string
	Configs      []DescribeConfigsResponseConfig
}

type DescribeConfigsResponseConfig struct {
	Name          string
	Value         *string
	ReadOnly      bool
	ConfigSource  int8 // v1+
	IsSensitive   bool
	Synonyms      []DescribeConfigsResponseSynonym // v1+
	ConfigType    int8                             // v3+
	Documentation *string                          // v3+
}

type DescribeConfigsResponseSynonym struct {
	Name   string
	Value  *string
	Source int8
}

func (*DescribeConfigsResponse) Key() ApiKey       { return DescribeConfigs }
func (r *DescribeConfigsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *DescribeConfigsResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	e.ArrayLen(len(r.Results))
	for i := range r.Results {
		res := &r.Results[i]
		e.Int16(res.ErrorCode)
		e.NullableString(res.ErrorMessage)
		e.Int8(res.ResourceType)
		e.String(res.ResourceName)
		e.ArrayLen(len(res.Configs))
		for j := range res.Configs {
			c := &res.Configs[j]
			e.String(c.Name)
			e.NullableString(c.Value)
			e.Bool(c.ReadOnly)
			if v >= 1 {
				e.Int8(c.ConfigSource)
			}
			e.Bool(c.IsSensitive)
			if v >= 1 {
				e.ArrayLen(len(c.Synonyms))
				for _, s := range c.Synonyms {
					e.String(s.Name)
					e.NullableString(s.Value)
					e.Int8(s.Source)
					e.Tags()
				}
			}
			if v >= 3 {
				e.Int8(c.ConfigType)
				e.NullableString(c.Documentation)
			}
			e.Tags()
		}
		e.Tags()
	}
	e.Tags()
}

func (r *DescribeConfigsResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	if n := d.ArrayLenMin(d.minStruct(2+1, 2, 1)); n > 0 {
		r.Results = make([]DescribeConfigsResponseResult, n)
		for i := range r.Results {
			res := &r.Results[i]
			res.ErrorCode = d.Int16()
			res.ErrorMessage = d.NullableString()
			res.ResourceType = d.Int8()
			res.ResourceName = d.String()
			// Flags, then name, value, v3+ documentation and v1+ synonyms, empty.
			size := d.minStruct(2+when(v >= 1, 1)+when(v >= 3, 1), 2+when(v >= 3, 1), when(v >= 1, 1))
			if n := d.ArrayLenMin(size); n > 0 {
				res.Configs = make([]DescribeConfigsResponseConfig, n)
				for j := range res.Configs {
					c := &res.Configs[j]
					c.Name = d.String()
					c.Value = d.NullableString()
					c.ReadOnly = d.Bool()
					if v >= 1 {
						c.ConfigSource = d.Int8()
					}
					c.IsSensitive = d.Bool()
					if v >= 1 {
						if n := d.ArrayLenMin(d.minStruct(1, 2, 0)); n > 0 {
							c.Synonyms = make([]DescribeConfigsResponseSynonym, n)
							for k := range c.Synonyms {
								s := &c.Synonyms[k]
								s.Name = d.String()
								s.Value = d.NullableString()
								s.Source = d.Int8()
								d.Tags()
							}
						}
					}
					if v >= 3 {
						c.ConfigType = d.Int8()
						c.Documentation = d.NullableString()
					}
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(DescribeConfigsRequest) }) }
