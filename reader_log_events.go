package kafka

import (
	"context"
	"log/slog"
)

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
