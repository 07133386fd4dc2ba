package kafka

import (
	"context"
	"fmt"
	"log/slog"
)

// Logger interface API for log.Logger.
type Logger interface {
	Printf(string, ...interface{})
}

// LoggerFunc is a bridge between Logger and any third party logger.
type LoggerFunc func(string, ...interface{})

func (f LoggerFunc) Printf(msg string, args ...interface{}) { f(msg, args...) }

// AttrLogger is an optional interface of a Logger (ReaderConfig.Logger and
// ErrorLogger, ConsumerGroupConfig's): a Logger that implements it gets the
// Reader's routing events as records with a level and attributes instead
// of Printf lines. Reroutes come at Info (attributes topic, partition, from,
// from_rack, to, to_rack, reason: the RerouteReason ID, reason_text: its
// sentence, leader), failures the Reader retries at
// Warn and errors returned to the application at Error (topic, partition,
// broker, offset, error), and each commit of CommitInterval 0 at Debug
// (group, generation, offsets). Other lines still come through Printf.
// *slog.Logger has this method; SlogAdapter makes one a Logger.
type AttrLogger interface {
	LogAttrs(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr)
}

// SlogAdapter is the library's adapter from log/slog to Logger: routing
// events reach the *slog.Logger as records with attributes and their own
// levels (AttrLogger), other lines as preformatted messages at Level. Use
// NewSlogAdapter(l, slog.LevelInfo) as ReaderConfig.Logger, and
// NewSlogAdapter(l, slog.LevelError) as ErrorLogger (or one adapter as
// both). A nil Logger logs to slog.Default().
type SlogAdapter struct {
	Logger *slog.Logger
	Level  slog.Level // of the Printf lines
}

// NewSlogAdapter returns a SlogAdapter writing Printf lines at level.
func NewSlogAdapter(l *slog.Logger, level slog.Level) *SlogAdapter {
	return &SlogAdapter{Logger: l, Level: level}
}

func (a *SlogAdapter) logger() *slog.Logger {
	if a.Logger == nil {
		return slog.Default()
	}
	return a.Logger
}

// Printf logs a preformatted line at a.Level.
func (a *SlogAdapter) Printf(format string, args ...interface{}) {
	l := a.logger()
	if l.Enabled(context.Background(), a.Level) {
		l.Log(context.Background(), a.Level, fmt.Sprintf(format, args...))
	}
}

// LogAttrs logs a record with attributes at level.
func (a *SlogAdapter) LogAttrs(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	a.logger().LogAttrs(ctx, level, msg, attrs...)
}
