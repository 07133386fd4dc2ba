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

// Routing events reach an AttrLogger as records with attributes, any other
// Logger as the Printf line it always got. Levels below Warn go to Logger,
// the others to ErrorLogger (else Logger), as logf and errorf do.

// logEvent logs one routing event at level: msg and attrs for an
// AttrLogger, the line format/args for a plain Logger.
func (r *Reader) logEvent(level slog.Level, msg string, attrs []slog.Attr, format string, args ...interface{}) {
	l := r.config.Logger
	if level >= slog.LevelWarn && r.config.ErrorLogger != nil {
		l = r.config.ErrorLogger
	}
	logEventTo(l, level, msg, attrs, format, args...)
}

func logEventTo(l Logger, level slog.Level, msg string, attrs []slog.Attr, format string, args ...interface{}) {
	switch al := l.(type) {
	case nil:
	case AttrLogger:
		al.LogAttrs(context.Background(), level, msg, attrs...)
	default:
		if format != "" {
			l.Printf(format, args...)
		}
	}
}

// logReroute logs a move of tp's reads from broker from to broker to.
func (f *fetcher) logReroute(from, to Broker, fromID, toID int, reason RerouteReason) {
	f.r.logEvent(slog.LevelInfo, "kafka reader: partition rerouted", []slog.Attr{
		slog.String("topic", f.tp.topic), slog.Int("partition", f.tp.partition),
		slog.Int("from", fromID), slog.String("from_rack", from.Rack),
		slog.Int("to", toID), slog.String("to_rack", to.Rack),
		slog.String("reason", string(reason)), slog.String("reason_text", reason.Sentence()),
		slog.Int("leader", f.meta.Leader.ID),
	}, "kafka reader: partition %s: broker %d (rack %s) → broker %d (rack %s), %s",
		f.tp, fromID, rackName(from.Rack), toID, rackName(to.Rack), reason.Sentence())
}

// logFailure logs a failure of a fetch at broker: at Warn when the Reader
// retries it, at Error when the application gets it too. line is the
// Printf line plain Loggers get.
func (f *fetcher) logFailure(returned bool, broker int, what string, err error, line string) {
	level := slog.LevelWarn
	if returned {
		level = slog.LevelError
	}
	f.r.logEvent(level, "kafka reader: "+what, []slog.Attr{
		slog.String("topic", f.tp.topic), slog.Int("partition", f.tp.partition),
		slog.Int("broker", broker), slog.Int64("offset", f.offset), slog.Any("error", err),
	}, "%s", line)
}

// logCommit logs a commit: the Reader's synchronous
// commits (CommitInterval 0) come once per CommitMessages call, so they go
// only to an AttrLogger, at Debug.
func (cg *ConsumerGroup) logCommit(quiet bool, groupID string, generationID int32, offsets, format string, args ...interface{}) {
	if !quiet {
		cg.log(format, args...)
		return
	}
	logEventTo(cg.config.Logger, slog.LevelDebug, "kafka reader: committed offsets", []slog.Attr{
		slog.String("group", groupID), slog.Int("generation", int(generationID)), slog.String("offsets", offsets),
	}, "")
}
