package producer

import (
	"time"

	"github.com/rackfetch/kafka-go/compress"
)

// Kafka error codes the runtime acts on.
const (
	codeNotLeaderForPartition    int16 = 6
	codeMessageSizeTooLarge      int16 = 10
	codeOutOfOrderSequenceNumber int16 = 45
	codeDuplicateSequenceNumber  int16 = 46
	codeInvalidProducerEpoch     int16 = 47
	codeInvalidProducerIDMapping int16 = 49
	codeUnknownProducerID        int16 = 59
)

// Config is what the runtime of a Writer is given: the root package's
// parts it uses.
type Config[M any] struct {
	Cluster  Cluster
	Codec    Codec[M]
	Stats    Stats
	Errors   Errors[M]
	Settings Settings[M]
}

// Settings are the Writer's configuration fields, with their defaults
// applied. They are read at each use, as the Writer's fields may change
// (the Writer documents they should not once it is in use).
type Settings[M any] interface {
	logSettings
	Async() bool
	RequiredAcks() int16 // 0, 1 or -1
	Compression() compress.Compression
	MaxAttempts() int
	DeliveryTimeout() time.Duration
	WriteBackoffMin() time.Duration
	WriteBackoffMax() time.Duration
	BatchSize() int
	BatchBytes() int64
	BatchTimeout() time.Duration
	WriteTimeout() time.Duration
	// Completion, when not nil, is called with the messages of each
	// batch written or failed.
	Completion() func(msgs []M, err error)
}

// logSettings are the Settings that do not depend on the message type.
type logSettings interface {
	ReadTimeout() time.Duration
	Logger() Logger      // nil: none
	ErrorLogger() Logger // nil: Logger
}

// Errors makes the kafka package's errors.
type Errors[M any] struct {
	// Code returns the kafka.Error of code.
	Code func(code int16) error
	// Produce is a partition's error in a produce response, with the
	// broker's message.
	Produce func(code int16, msg string) error
	// Retriable reports whether a failed produce may succeed later.
	Retriable func(err error) bool
	// Temporary reports whether err holds a kafka.Error that may go away.
	Temporary func(err error) bool
	// TooLarge is the error of a message the broker refuses as too large.
	TooLarge func(m *M) error
}

func (cfg *Config[M]) withLogger(do func(Logger)) { withLogger(cfg.Settings, do) }

func (cfg *Config[M]) withErrorLogger(do func(Logger)) { withErrorLogger(cfg.Settings, do) }

func withLogger(s logSettings, do func(Logger)) {
	if l := s.Logger(); l != nil {
		do(l)
	}
}

func withErrorLogger(s logSettings, do func(Logger)) {
	if l := s.ErrorLogger(); l != nil {
		do(l)
	} else {
		withLogger(s, do)
	}
}
