package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

var (
	errInvalidWriteTopic     = errors.New("writes must NOT set Topic on kafka.Message")
	errInvalidWritePartition = errors.New("writes must NOT set Partition on kafka.Message")
)

// Write writes a message with value b to the Conn's partition.
func (c *Conn) Write(b []byte) (int, error) {
	return c.WriteCompressedMessages(nil, Message{Value: b})
}

// WriteMessages writes a batch of messages to the Conn's partition.
func (c *Conn) WriteMessages(msgs ...Message) (int, error) {
	return c.WriteCompressedMessages(nil, msgs...)
}

// WriteCompressedMessages writes a batch of messages compressed with codec
// (nil: none). It returns the number of key and value bytes written.
func (c *Conn) WriteCompressedMessages(codec CompressionCodec, msgs ...Message) (nbytes int, err error) {
	nbytes, _, _, _, err = c.WriteCompressedMessagesAt(codec, msgs...)
	return nbytes, err
}

// WriteCompressedMessagesAt is WriteCompressedMessages that also returns the
// partition, the offset of the first message and the append time (the zero
// time unless the topic uses log append time).
func (c *Conn) WriteCompressedMessagesAt(codec CompressionCodec, msgs ...Message) (nbytes int, partition int32, offset int64, appendTime time.Time, err error) {
	if len(msgs) == 0 {
		return 0, c.partition, -1, time.Time{}, nil
	}
	now := time.Now()
	builder := protocol.NewRecordBatchBuilder()
	builder.Codec = codec
	for i := range msgs {
		m := &msgs[i]
		if m.Topic != "" && m.Topic != c.topic {
			return 0, 0, 0, time.Time{}, errInvalidWriteTopic
		}
		if m.Partition != 0 {
			return 0, 0, 0, time.Time{}, errInvalidWritePartition
		}
		t := m.Time
		if t.IsZero() {
			t = now
		}
		builder.Add(protocol.Record{Timestamp: t.UnixMilli(), Key: m.Key, Value: m.Value, Headers: m.Headers})
		nbytes += len(m.Key) + len(m.Value)
	}
	records, err := builder.AppendTo(nil)
	if err != nil {
		return 0, 0, 0, time.Time{}, fmt.Errorf("encoding %d messages for %s/%d: %w", len(msgs), c.topic, c.partition, err)
	}
	res, err := c.produce(context.Background(), records)
	if err != nil {
		return 0, 0, 0, time.Time{}, err
	}
	if res.LogAppendTimeMs >= 0 {
		appendTime = time.UnixMilli(res.LogAppendTimeMs)
	}
	return nbytes, c.partition, res.BaseOffset, appendTime, nil
}

// produce sends one record batch to the Conn's partition and returns the
// partition's result. With acks=0 the broker sends no response.
func (c *Conn) produce(ctx context.Context, records []byte) (protocol.ProduceResponsePartition, error) {
	acks := int16(c.requiredAcks.Load())
	req := &protocol.ProduceRequest{
		TransactionalID: c.transactionalID,
		Acks:            acks,
		TimeoutMs:       c.requestTimeoutMs(),
		Topics: []protocol.ProduceRequestTopic{{
			Name:       c.topic,
			Partitions: []protocol.ProduceRequestPartition{{Index: c.partition, Records: records}},
		}},
	}
	vs, err := c.apiVersions()
	if err != nil {
		return protocol.ProduceResponsePartition{}, err
	}
	// Versions 11+ change what transactional batches mean; plain produce
	// stays at 10.
	v, err := vs.Pick(req, 10)
	if err != nil {
		return protocol.ProduceResponsePartition{}, err
	}
	where := fmt.Sprintf("producing to %s/%d on broker %d", c.topic, c.partition, c.broker)
	if acks == 0 {
		err := c.exchange(ctx, req, nil, v)
		if err != nil {
			err = fmt.Errorf("%s: %w", where, err)
		}
		return protocol.ProduceResponsePartition{BaseOffset: -1, LogAppendTimeMs: -1}, err
	}
	resp := req.NewResponse().(*protocol.ProduceResponse)
	if err := c.exchange(ctx, req, resp, v); err != nil {
		return protocol.ProduceResponsePartition{}, fmt.Errorf("%s: %w", where, err)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if t.Name == c.topic && p.Index == c.partition {
				if p.ErrorCode != 0 {
					return p, fmt.Errorf("%s: %w", where, makeError(p.ErrorCode, deref(p.ErrorMessage)))
				}
				return p, nil
			}
		}
	}
	return protocol.ProduceResponsePartition{}, fmt.Errorf("%s: partition missing from the response", where)
}
