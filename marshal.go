package kafka

import "github.com/rackfetch/kafka-go/internal/marshal"

// Marshal encodes v in Kafka's binary protocol format, as kafka-go's Marshal
// does; Unmarshal decodes it.
//
// Supported are bool, int8, int16, int32, int64 and float64 (fixed-size, big
// endian), string (int16 length), []byte (int32 length), slices of
// supported types (int32 count), structs of supported types (their exported
// fields in order), and types whose pointer implements io.WriterTo (for
// Marshal) or io.ReaderFrom (for Unmarshal), which encode themselves.
//
// A struct field's `kafka` tag may hold "-" (skip the field) or options
// separated by commas: "nullable" makes an empty string, a nil []byte or a
// nil slice encode as null (length -1), which decodes back as "" or nil;
// "compact" is accepted and has no effect. Fields whose tag names versions
// ("min=v1,max=v3") belong to versioned messages and are left out, as by
// kafka-go's Marshal. The value itself is encoded as nullable.
//
// Encoding uses reflection (internal/marshal), compiled once per type;
// nothing else in this package uses it.
func Marshal(v interface{}) ([]byte, error) { return marshal.Marshal(-1, v) }

// Unmarshal decodes b, in the format Marshal writes, into the value v
// points to. Bytes left after the value are ignored; too few bytes give an
// error matching io.ErrUnexpectedEOF.
func Unmarshal(b []byte, v interface{}) error { return marshal.Unmarshal(-1, b, v) }

// Version is a version of a Kafka API, for encoding structs whose fields
// carry versions in their tags.
type Version int16

// Marshal is Marshal for the fields that exist at version n.
func (n Version) Marshal(v interface{}) ([]byte, error) { return marshal.Marshal(int16(n), v) }

// Unmarshal is Unmarshal for the fields that exist at version n.
func (n Version) Unmarshal(b []byte, v interface{}) error { return marshal.Unmarshal(int16(n), b, v) }
