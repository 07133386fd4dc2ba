// Package protocol is the single wire layer of the library: primitive
// encoders and decoders, request and response headers, and typed Kafka
// messages that both encode and decode. Conn, Reader, Writer and the fake
// broker in testing/ all speak through it, so the client and the fake can
// never disagree about bytes.
//
// Every message implements Request or Response. Encoding appends to a
// caller-owned buffer (no reflection, no two-pass sizing); decoding reads
// from a byte slice with a sticky error, and every length read from the wire
// is checked against the bytes that remain (for arrays of structs, at their
// elements' smallest encoded size) before anything is allocated.
package protocol
