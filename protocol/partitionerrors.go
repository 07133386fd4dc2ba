package protocol

// TopicPartitionErrors is the answer layout several responses share: per
// topic, an error code per partition. OffsetCommit, TxnOffsetCommit,
// OffsetDelete and AddPartitionsToTxn (up to v3) answer with it; their
// topic and partition types are aliases of these.
type TopicPartitionErrors struct {
	Name       string
	Partitions []PartitionError
}

type PartitionError struct {
	PartitionIndex int32
	ErrorCode      int16
}

func encodeTopicPartitionErrors(e *Encoder, topics []TopicPartitionErrors) {
	e.ArrayLen(len(topics))
	for i := range topics {
		t := &topics[i]
		e.String(t.Name)
		e.ArrayLen(len(t.Partitions))
		for _, p := range t.Partitions {
			e.Int32(p.PartitionIndex)
			e.Int16(p.ErrorCode)
			e.Tags()
		}
		e.Tags()
	}
}

func decodeTopicPartitionErrors(d *Decoder) []TopicPartitionErrors {
	n := d.ArrayLenMin(d.minStruct(0, 1, 1))
	if n <= 0 {
		return nil
	}
	topics := make([]TopicPartitionErrors, n)
	for i := range topics {
		t := &topics[i]
		t.Name = d.String()
		if m := d.ArrayLenMin(d.minStruct(4+2, 0, 0)); m > 0 {
			t.Partitions = make([]PartitionError, m)
			for j := range t.Partitions {
				p := &t.Partitions[j]
				p.PartitionIndex = d.Int32()
				p.ErrorCode = d.Int16()
				d.Tags()
			}
		}
		d.Tags()
	}
	return topics
}
