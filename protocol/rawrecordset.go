package protocol

import "io"

// RawRecordSet is a pre-encoded record set for the root package's
// Client.RawProduce, which sends it as it is.
//
// Reader yields the records field of a non-flexible Produce partition: an
// int32 size (big endian) followed by that many bytes of record batches
// (magic 2; brokers take exactly one batch per partition). A reader holding only the batches, without the size, is taken
// as well. A nil Reader, a null (-1) or zero size mean no records.
type RawRecordSet struct {
	Reader io.Reader
}
