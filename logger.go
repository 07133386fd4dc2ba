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
