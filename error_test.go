package kafka

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// errorConstants parses error.go and returns every constant it declares
// (all of them are Error codes or aliases of one), so a constant added without
// a table entry fails the tests below. Values are integer literals, a negated
// literal, or the name of an earlier constant, which is all this evaluates.
func errorConstants(t *testing.T) map[string]Error {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "error.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]Error{}
	var eval func(ast.Expr) (Error, bool)
	eval = func(x ast.Expr) (Error, bool) {
		switch x := x.(type) {
		case *ast.BasicLit:
			n, err := strconv.Atoi(x.Value)
			return Error(n), err == nil
		case *ast.UnaryExpr:
			v, ok := eval(x.X)
			return -v, ok && x.Op == token.SUB
		case *ast.Ident:
			v, ok := values[x.Name]
			return v, ok
		}
		return 0, false
	}
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					t.Fatalf("%s: constants must have explicit values", name.Name)
				}
				v, ok := eval(vs.Values[i])
				if !ok {
					t.Fatalf("%s: cannot evaluate its value", name.Name)
				}
				values[name.Name] = v
			}
		}
	}
	if len(values) < 130 {
		t.Fatalf("found only %d constants in error.go", len(values))
	}
	return values
}

func TestErrorEveryConstantDescribed(t *testing.T) {
	consts := errorConstants(t)
	if consts["Unknown"] != Unknown || consts["NotLeaderOrFollower"] != NotLeaderForPartition ||
		consts["ShareSessionLimitReached"] != ShareSessionLimitReached {
		t.Fatal("the parser of error.go disagrees with the compiler")
	}
	for name, e := range consts {
		if _, ok := errorTable[e]; !ok {
			t.Errorf("%s (%d) has no table entry", name, int(e))
			continue
		}
		if e.Title() == "" || e.Description() == "" {
			t.Errorf("%s (%d): empty title or description", name, int(e))
		}
		d := e.Description()
		if strings.HasSuffix(d, ".") || d[:1] != strings.ToLower(d[:1]) {
			t.Errorf("%s: description %q should be lower case without a final period", name, d)
		}
	}
}

func TestErrorTableCoversAllCodes(t *testing.T) {
	// Every code Kafka defines: -1 and 1 through 133.
	if len(errorTable) != 134 {
		t.Errorf("table has %d entries, want 134", len(errorTable))
	}
	for code := Error(1); code <= ShareSessionLimitReached; code++ {
		if _, ok := errorTable[code]; !ok {
			t.Errorf("code %d missing from the table", int(code))
		}
	}
	titles := map[string]Error{}
	for e, info := range errorTable {
		if other, dup := titles[info.title]; dup {
			t.Errorf("codes %d and %d share the title %q", int(e), int(other), info.title)
		}
		titles[info.title] = e
	}
}

func TestErrorKafkaGoValues(t *testing.T) {
	// Spot checks that names map to the codes kafka-go and Kafka use.
	for _, tc := range []struct {
		e    Error
		code int
	}{
		{Unknown, -1}, {OffsetOutOfRange, 1}, {NotLeaderForPartition, 6}, {NotLeaderOrFollower, 6},
		{RequestTimedOut, 7}, {UnsupportedVersion, 35}, {OperationNotAttempted, 55},
		{SASLAuthenticationFailed, 58}, {FencedLeaderEpoch, 74}, {OffsetNotAvailable, 78},
		{FencedInstanceID, 82}, {FetchSessionTopicIDError, 106}, {IneligibleReplica, 107},
		{StaleMemberEpoch, 113}, {TransactionAbortable, 120}, {InvalidRegularExpression, 128},
		{ShareSessionLimitReached, 133},
	} {
		if int(tc.e) != tc.code {
			t.Errorf("%s = %d, want %d", tc.e.Title(), int(tc.e), tc.code)
		}
	}
}

func TestErrorString(t *testing.T) {
	if got, want := OffsetOutOfRange.Error(), "[1] Offset Out Of Range: "+OffsetOutOfRange.Description(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got := Unknown.Error(); !strings.HasPrefix(got, "[-1] Unknown Server Error: ") {
		t.Errorf("Unknown.Error() = %q", got)
	}

	// Codes from brokers newer than this table must still read well.
	for _, code := range []Error{999, 134, -2, 32767} {
		s := code.Error()
		if !strings.HasPrefix(s, fmt.Sprintf("[%d] Unknown Error Code: ", int(code))) {
			t.Errorf("Error(%d).Error() = %q", int(code), s)
		}
		if !strings.Contains(code.Description(), fmt.Sprint(int(code))) {
			t.Errorf("Error(%d).Description() = %q does not name the code", int(code), code.Description())
		}
		if strings.Contains(s, "%!") {
			t.Errorf("formatting glitch in %q", s)
		}
		if code.Temporary() || code.Timeout() {
			t.Errorf("unknown code %d must not be temporary or a timeout", int(code))
		}
	}
	if got := Error(0).Error(); got != "[0] No Error: the request succeeded" {
		t.Errorf("Error(0).Error() = %q", got)
	}
}

func TestErrorTemporaryTimeout(t *testing.T) {
	temporary := []Error{
		InvalidMessage, UnknownTopicOrPartition, LeaderNotAvailable, NotLeaderForPartition,
		RequestTimedOut, ReplicaNotAvailable, NetworkException, GroupLoadInProgress,
		GroupCoordinatorNotAvailable, NotCoordinatorForGroup, NotEnoughReplicas,
		NotEnoughReplicasAfterAppend, NotController, ConcurrentTransactions, KafkaStorageError,
		FetchSessionIDNotFound, InvalidFetchSessionEpoch, ListenerNotFound, FencedLeaderEpoch,
		UnknownLeaderEpoch, OffsetNotAvailable, PreferredLeaderNotAvailable,
		EligibleLeadersNotAvailable, ElectionNotNeeded, UnstableOffsetCommit,
		ThrottlingQuotaExceeded, UnknownTopicID, InconsistentTopicID, FetchSessionTopicIDError,
		ShareSessionNotFound, InvalidShareSessionEpoch, ShareSessionLimitReached,
	}
	isTemp := map[Error]bool{}
	for _, e := range temporary {
		isTemp[e] = true
		if !e.Temporary() {
			t.Errorf("%s should be temporary", e.Title())
		}
	}
	// Everything else Kafka treats as fatal for the request.
	for e := range errorTable {
		if !isTemp[e] && e.Temporary() {
			t.Errorf("%s (%d) should not be temporary", e.Title(), int(e))
		}
	}
	for _, e := range []Error{OffsetOutOfRange, TopicAuthorizationFailed, SASLAuthenticationFailed, RebalanceInProgress, ProducerFenced} {
		if e.Temporary() {
			t.Errorf("%s should not be temporary", e.Title())
		}
	}

	if !RequestTimedOut.Timeout() {
		t.Error("RequestTimedOut.Timeout() = false")
	}
	for _, e := range []Error{NetworkException, LeaderNotAvailable, Unknown, InvalidTransactionTimeout} {
		if e.Timeout() {
			t.Errorf("%s.Timeout() = true", e.Title())
		}
	}
}

func TestErrorIsAs(t *testing.T) {
	wrapped := fmt.Errorf("fetching partition 3: %w", fmt.Errorf("broker 1: %w", OffsetOutOfRange))
	if !errors.Is(wrapped, OffsetOutOfRange) {
		t.Error("errors.Is does not find OffsetOutOfRange in a wrapped error")
	}
	if errors.Is(wrapped, UnknownTopicOrPartition) {
		t.Error("errors.Is matches the wrong code")
	}
	var kerr Error
	if !errors.As(wrapped, &kerr) || kerr != OffsetOutOfRange {
		t.Errorf("errors.As = %v", kerr)
	}
	if !errors.Is(fmt.Errorf("x: %w", NotLeaderForPartition), NotLeaderOrFollower) {
		t.Error("the alias does not match the kafka-go name")
	}
	var iface interface{ Temporary() bool }
	if !errors.As(fmt.Errorf("x: %w", LeaderNotAvailable), &iface) || !iface.Temporary() {
		t.Error("Temporary is not reachable through errors.As")
	}
}

func TestErrorFromCode(t *testing.T) {
	if err := errorFromCode(0); err != nil {
		t.Errorf("errorFromCode(0) = %v", err)
	}
	if err := errorFromCode(3); err != UnknownTopicOrPartition {
		t.Errorf("errorFromCode(3) = %v", err)
	}
	if err := errorFromCode(-1); err != Unknown {
		t.Errorf("errorFromCode(-1) = %v", err)
	}
	if err := makeError(0, "ignored"); err != nil {
		t.Errorf("makeError(0) = %v", err)
	}
	if err := makeError(87, ""); err != InvalidRecord {
		t.Errorf("makeError(87, \"\") = %v", err)
	}
	err := makeError(87, "record 4 has no key")
	if !errors.Is(err, InvalidRecord) {
		t.Errorf("makeError lost the code: %v", err)
	}
	if want := InvalidRecord.Error() + ": record 4 has no key"; err.Error() != want {
		t.Errorf("makeError = %q, want %q", err.Error(), want)
	}
}
