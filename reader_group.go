package kafka

import (
	"context"
	"errors"
)

// readerGroup runs the Reader's consumer group mode.
type readerGroup struct{}

var errGroupUnavailable = errors.New("kafka reader: consumer group mode is not available yet")

func (r *Reader) startGroup() {
	r.group = &readerGroup{}
	r.queue.pushErr(0, errGroupUnavailable)
}

func (g *readerGroup) wait() {}

func (g *readerGroup) commit(ctx context.Context, msgs []Message) error { return errGroupUnavailable }
