package kafka

import (
	"fmt"
	"strings"
)

// MessageTooLargeError is returned when a message is too large to fit
// within the allowed size: larger than the Writer's BatchBytes (the whole
// WriteMessages call then fails, and Remaining holds the other messages to
// write again), or refused by the broker as larger than the topic's
// max.message.bytes (then it is the message's entry in WriteErrors, or the
// error given to Completion, and Remaining is empty).
//
// errors.Is(err, MessageSizeTooLarge) holds for it.
type MessageTooLargeError struct {
	Message   Message
	Remaining []Message
}

func messageTooLarge(msgs []Message, i int) MessageTooLargeError {
	remain := make([]Message, 0, len(msgs)-1)
	remain = append(remain, msgs[:i]...)
	remain = append(remain, msgs[i+1:]...)
	return MessageTooLargeError{Message: msgs[i], Remaining: remain}
}

func (e MessageTooLargeError) Error() string { return MessageSizeTooLarge.Error() }

func (e MessageTooLargeError) Unwrap() error { return MessageSizeTooLarge }

// WriteErrors is returned by kafka.(*Writer).WriteMessages when the writer
// is not configured to write messages asynchronously. WriteErrors values
// contain a list of errors where each entry matches the position of a
// message in the WriteMessages call; nil entries are messages that were
// written. The program can determine the status of each message by looping
// over the error:
//
//	switch err := w.WriteMessages(ctx, msgs...).(type) {
//	case nil:
//	case kafka.WriteErrors:
//		for i := range msgs {
//			if err[i] != nil {
//				// handle the error writing msgs[i]
//			}
//		}
//	default:
//		// handle other errors
//	}
type WriteErrors []error

// Count counts the number of non-nil errors in err.
func (err WriteErrors) Count() int {
	n := 0
	for _, e := range err {
		if e != nil {
			n++
		}
	}
	return n
}

// Unwrap returns the non-nil errors, so that errors.Is and errors.As look
// into them: errors.Is(err, kafka.NotLeaderForPartition) holds when some
// message failed with it.
func (err WriteErrors) Unwrap() []error {
	var out []error
	for _, e := range err {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

func (err WriteErrors) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kafka write errors (%d/%d)", err.Count(), len(err))
	// Many messages usually fail for the same reason: list each distinct
	// error once.
	seen := map[string]bool{}
	sep := ": "
	for _, e := range err {
		if e == nil {
			continue
		}
		s := e.Error()
		if seen[s] {
			continue
		}
		seen[s] = true
		b.WriteString(sep)
		b.WriteString(s)
		sep = "; "
	}
	return b.String()
}
