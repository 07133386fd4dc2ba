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

// SlogLogger adapts a *slog.Logger to Logger, logging every line at level.
// Use it as ReaderConfig.Logger (slog.LevelInfo) and ErrorLogger
// (slog.LevelError).
func SlogLogger(l *slog.Logger, level slog.Level) Logger {
	return LoggerFunc(func(format string, args ...interface{}) {
		if l.Enabled(context.Background(), level) {
			l.Log(context.Background(), level, fmt.Sprintf(format, args...))
		}
	})
}

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

// SlogAdapter is a Logger over a *slog.Logger that also takes the Reader's
// structured records (AttrLogger). Unlike SlogLogger, whose behaviour is
// unchanged, routing events keep their attributes and get their own levels.
// One adapter may serve as both Logger and ErrorLogger.
type SlogAdapter struct {
	Logger *slog.Logger
	Level  slog.Level // of the Printf lines
}

// NewSlogAdapter returns a SlogAdapter writing Printf lines at level.
func NewSlogAdapter(l *slog.Logger, level slog.Level) *SlogAdapter {
	return &SlogAdapter{Logger: l, Level: level}
}

// Printf logs a preformatted line at a.Level.
func (a *SlogAdapter) Printf(format string, args ...interface{}) {
	if a.Logger.Enabled(context.Background(), a.Level) {
		a.Logger.Log(context.Background(), a.Level, fmt.Sprintf(format, args...))
	}
}

// LogAttrs logs a record with attributes at level.
func (a *SlogAdapter) LogAttrs(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	a.Logger.LogAttrs(ctx, level, msg, attrs...)
}
