package protocol

import "testing"

var txnSamples = []sample{
	{"AddPartitionsToTxn", func() Request { return new(AddPartitionsToTxnRequest) }, addPartitionsToTxnSample},
	{"AddOffsetsToTxn", func() Request { return new(AddOffsetsToTxnRequest) }, addOffsetsToTxnSample},
	{"EndTxn", func() Request { return new(EndTxnRequest) }, endTxnSample},
	{"TxnOffsetCommit", func() Request { return new(TxnOffsetCommitRequest) }, txnOffsetCommitSample},
}

// FuzzTxnMessages decodes arbitrary bytes as the transaction requests and
// responses at every version: no panic, and whatever decodes encodes and
// decodes again to the same value.
func FuzzTxnMessages(f *testing.F) {
	seedSamples(f, txnSamples, true)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzSamples(t, data, txnSamples, true) })
}
