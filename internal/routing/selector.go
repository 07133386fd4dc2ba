// Package routing is the Reader's routing state machine for rack-aware
// fetching (KIP-392): per partition, where to fetch next and how long to
// wait first. It owns every routing wait (the one backoff a fetcher sleeps
// after an event), the replica cooldowns, the client-side choice and the
// follower lag bound. It does no I/O, never reads the clock and knows
// nothing of the kafka package, which (replica_selector.go) converts its
// metadata into Partition views and classifies its errors into Failure
// values.
package routing

import "time"

// The routing state machine of rack-aware fetching (KIP-392).
//
// One Selector exists per partition a Reader fetches, whether or not
// the Reader has a rack: without one it never leaves the leader, but leader
// changes, backoff and metadata refreshes go through the same transitions.
// It does no I/O, starts no goroutine and never reads the clock: the
// fetcher reports what happened (an event, carrying the time) and gets
// where to fetch next (a decision). Switches happen only between batches, because the fetcher only
// asks between batches: records already fetched are always delivered.
//
// Transition table. L is the leader, F a follower, X the replica the leader
// names as preferred. The flap budget counts leases, not moves: a lease is
// a move of the reads to a follower other than the one they were last on
// as a follower, and only such moves are ever refused for it. Moves back to
// the leader (a failure, the TTL, a leader change, the leader's -1) are
// never refused and do not count. A move back to the follower of the last
// lease, with no other follower read from in between, renews that lease
// (its TTL starts again), off the budget, whatever took reads away from it:
// a failing follower is already kept away by its cooldown (growing while it
// keeps failing), a lagging one by its lag hold, and counting the way back
// would keep reads off a recovered follower for a minute. So the budget
// damps reads moving between followers (leaders naming one, then another),
// never the return of one replica. Reads that stay on the old leader, in
// the reader's rack, when leadership moves make it the last lease's
// replica without a lease (they never moved).
//
//	on   event                                      → decision
//	L    fetched from L, X usable (*)               → F=X for PreferenceTTL      ReasonPreferred
//	L    fetched from L, X not in ISR / no host     → L, RefreshMetadata, hold   ReasonUnknownReplica
//	L    fetched from L, X cooling down             → L                          ReasonCoolingDown
//	L    fetched from L, flap budget used up        → L                          ReasonFlapDamped
//	L    fetched from L, X = the last lease's F     → F=X, a renewal (*)         ReasonPreferred
//	     (whatever took reads from F: the TTL, a failure, leaving the ISR, a leader
//	     change — the new leader naming F is a renewal too; not after another follower)
//	L    fetched from L, -1 (or Rack == "")         → L
//	L    leadership/epoch error or disconnect of L  → L, RefreshMetadata, Backoff (grows, bounded)
//	L    dial failure of L                          → L, RefreshMetadata, Backoff (grows, bounded)
//	     (a Reader that reads from followers, with a stand-in: next row)
//	L    dial failure or stall of L, S a stand-in (◊) → S, L cools down for all  ReasonLeaderUnreachable
//	L    L cooling for all (another partition's failure), S a stand-in → S  ReasonLeaderUnreachable
//	S    L's cooldown over (its probe reached it)   → L                          ReasonLeaderReachable
//	S    S fails or cools down, another stand-in S' → S'                         ReasonFollowerFailed
//	     (none: → L, and L's failures back off as above)
//	S    metadata, S out of the ISR, L still cooling → another stand-in, else L
//	S    metadata, another leader                   → the new L (S if it is L)   ReasonLeaderChanged
//	L    other error of L                           → L, Backoff; OffsetOutOfRange: no backoff (the Reader resets)
//	F    fetched from F, -1                         → F (the TTL is not extended)
//	F    fetched from F, empty at once, at/above HW → F, Backoff FollowerBackoffMin→Max (a non-empty fetch resets)
//	F    stale-client error of F (†), ≤ 3 in a row  → F, RefreshMetadata, Backoff  ReasonStaleClient
//	     (FENCED_LEADER_EPOCH: any number in a row, not counted in the 3; the Backoff grows to FollowerBackoffMax)
//	F    partition error of F (‡)                   → L at once, (F, partition) cools down  ReasonFollowerFailed
//	F    broker failure of F (§)                    → L at once, F cools down for all        ReasonFollowerFailed
//	F    F cooling (it failed for another partition)→ L                          ReasonFollowerFailed
//	F    any event after PreferenceTTL              → L                          ReasonTTL
//	F    fetched from L, -1                         → L                          ReasonLeaderPreferred
//	F    fetched from L naming F again              → F, the TTL restarts
//	F    fetched from L naming a refused replica    → L                          the refusal's reason
//	any  metadata with a lower leader epoch         → ignored
//	L    metadata, other leader or higher epoch     → new L, ValidateOffset      ReasonLeaderChanged
//	     (the old L in the reader's rack and usable: stays there as F, TTL from now;
//	     an old L whose latest failure was a broker failure (§) cools down first)
//	F    metadata, other leader or higher epoch     → F if still usable, else new L; ValidateOffset
//	F    metadata, F out of the ISR/offline/unknown → L                          ReasonFollowerGone
//	any  metadata without a leader                  → unchanged, RefreshMetadata, Backoff
//	any  metadata, a cooling replica back in the ISR after it was seen out → its cooldown ends
//	     (with Cooldowns.RequireProbe a broker-level one's probe is due at once instead)
//	any  a broker-level cooldown over, Cooldowns.RequireProbe → Probe it; refused until it answers
//	     (a refused probe is asked again 1 s later, doubling up to 30 s: cooldown_probe.go)
//	any  metadata no longer listing a broker (Cooldowns.Listed) → its cooldowns and probe are forgotten
//	     (a follower lagging the leader by more than MaxFollowerLag: lag.go)
//
// With a client-side ReplicaSelector (choice.go), C being its pick
// among the usable replicas (none: the rows above apply unchanged):
//
//	L    fetched from L, -1, C usable (*)           → F=C for PreferenceTTL      ReasonClientChoice
//	L    fetched from L, -1, C = the last lease's F → F=C, a renewal             ReasonClientChoice
//	     (metadata before the leader's answer — it failed, a new leader —: a renewal too)
//	L    fetched from L, -1, flap budget used up    → L                          ReasonFlapDamped
//	L    metadata (start, leader change, cooldown over), C usable → F=C          ReasonClientChoice
//	L    while a replica the leader named is refused→ L (the broker's choice wins)
//	F    fetched from L, -1, C = F                  → F, the TTL restarts
//	F    fetched from L naming X                    → as above: the broker's X wins
//
// (*) usable: in the ISR of the latest metadata, with a host there, not
// offline, not cooling down, and fewer than MaxSwitchesPerMinute leases in
// the last 60 s (a renewal needs no room in the budget, and uses none).
// (†) FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH or NOT_LEADER_OR_FOLLOWER
// from a follower say the CLIENT's view is stale (its epoch is older or
// newer than the replica's), not that the replica is broken: a leader
// change gives them for every partition it touches. Fresh metadata decides:
// the replica still in the ISR is read again with the new epoch; out of it,
// reads go to the leader (ReasonFollowerGone). Only a replica that keeps
// saying so with fresh metadata counts as failed for the partition — but
// never for FENCED_LEADER_EPOCH: the replica is ahead of the client, and
// the metadata a refresh reads may lag it for a while (a broker applying
// the election later under load); the leader would fence the old epoch
// too.
// (‡) Kafka errors about one partition (OffsetOutOfRange — a follower's
// range is not authoritative, only the leader decides resets —, unknown
// partition, replica not available, corrupt records, ...).
// (§) the dial, the connection (reset, EOF, timeouts), a stall, and
// KAFKA_STORAGE_ERROR. Cooldowns start short and grow when the same
// replica fails again soon (cooldown.go).
// Offsets are only ever resolved at the leader: ValidateOffset is a check
// the fetcher makes at the leader, even while fetches stay on F.
//
// While the leader keeps naming a replica this selector refuses, the
// decision carries OmitRack: a leader that names a preferred replica answers
// without records, so the fetcher asks it without the client rack (the
// broker then names nobody and serves the records) until the refusal ends
// (the cooldown's end, the flap budget's next free slot, or for a replica
// unknown to metadata a hold of 1 s doubling up to 10 s while it stays
// unknown, or a metadata refresh showing it). Each refusal of an empty answer
// also backs off (FollowerBackoffMin→Max), in case the rack is sent anyway.
// Reports about a broker the partition no longer reads from are stale and
// change nothing, except that a failed follower still cools down.
// (◊) stand-in: with a rack or a client-side choice, an in-sync follower
// not cooling down, in the client's rack first (leaderpath.go). While reads
// are on it the TTL does not send them back: only the leader's probe does.

// EventKind says what happened to the partition's last fetch.
type EventKind int

const (
	// EventFetched: a fetch answered without a partition error.
	// Preferred is the response's preferred read replica (-1: none);
	// Empty and HighWatermark describe the records returned.
	EventFetched EventKind = iota
	// EventFetchError: the broker answered with a partition error, or the
	// request failed (timeout, disconnect). Err holds it.
	EventFetchError
	// EventDialFailed: the broker could not be reached.
	EventDialFailed
	// EventMetadata: new metadata for the partition arrived (Partition).
	EventMetadata
	// EventTick: time passed (TTL expiry is checked on every event too).
	EventTick
	// EventLeaderHW: the leader's high watermark (HighWatermark) was
	// read at Now (lag.go).
	EventLeaderHW
)

// Event is one input of the state machine.
type Event struct {
	Kind   EventKind
	Broker int       // the broker the event concerns (the one fetched from)
	Now    time.Time // the caller's clock, so tests control time

	Preferred     int   // EventFetched: preferred read replica, -1 for none
	Empty         bool  // EventFetched: no records returned
	FetchOffset   int64 // EventFetched: the offset fetched
	HighWatermark int64 // EventFetched: the responding replica's high watermark
	NextOffset    int64 // EventFetched: the position after the records returned
	LongPolled    bool  // EventFetched: the broker held the fetch (an empty answer is no spin)

	Failure Failure // EventFetchError, EventDialFailed: what the error blames (failure.go)

	Partition Partition // EventMetadata: the partition's current metadata
}

// Reason names why reads moved. The values are stable machine-readable IDs
// ([a-z_]+): the kafka package exports them as RerouteReason constants
// (reader_routing_stats.go), metrics use them as label values, and they never
// change; the sentence a log line shows is RerouteReason.Sentence.
type Reason string

const (
	ReasonPreferred       Reason = "preferred_replica"
	ReasonTTL             Reason = "preference_expired"
	ReasonFollowerFailed  Reason = "follower_failed"
	ReasonFollowerGone    Reason = "follower_left_isr"
	ReasonUnknownReplica  Reason = "unknown_replica"
	ReasonLeaderChanged   Reason = "leader_changed"
	ReasonLeaderPreferred Reason = "leader_no_preference"
	ReasonFollowerLagging Reason = "follower_lagging"

	// ReasonLeaderUnreachable, ReasonLeaderReachable: leaderpath.go.

	// Labels of decisions that stay where they are (Changed is false).
	ReasonCoolingDown Reason = "replica_cooling_down"
	ReasonFlapDamped  Reason = "flap_damped"
	ReasonLeaderError Reason = "leader_failed"
	ReasonStaleClient Reason = "stale_metadata"
)

// Decision is the state machine's output: where and when to fetch next.
type Decision struct {
	Broker int // broker id to fetch from next (the leader or a follower)

	// Changed is set when Broker differs from the previous decision;
	// Reason says why. The fetcher logs one line per change.
	Changed bool
	Reason  Reason

	// RefreshMetadata asks the fetcher to reload the partition's metadata
	// (and report it back as EventMetadata) before the next fetch.
	RefreshMetadata bool

	// ValidateOffset asks the fetcher to check its position with
	// OffsetForLeaderEpoch at the leader (KIP-320) before fetching: the
	// leader changed. The check goes to the leader whatever Broker is: a
	// follower still in the ISR keeps serving the fetches.
	ValidateOffset bool

	// Backoff is how long to wait before the next fetch (a follower behind
	// the fetch offset answers at once with nothing; an error backs off).
	Backoff time.Duration

	// OmitRack asks the fetcher to send the next fetch (to the leader)
	// without the client's rack. It is set while the leader names a
	// replica this selector refuses (cooling down, unknown, over the flap
	// budget): such a leader answers with no records, so without the rack
	// it names nobody and serves the partition itself.
	OmitRack bool

	// Probe asks the fetcher to probe ProbeBroker (connect and ask its
	// API versions) and report the outcome to the Cooldowns (Probed): its
	// cooldown ran out and waits for the proof that it is back
	// (Cooldowns.RequireProbe). Any partition's decision may carry it.
	Probe       bool
	ProbeBroker int
}

// Config holds the Reader's routing settings.
type Config struct {
	Rack string // the client's rack; empty disables follower fetching

	// PreferenceTTL bounds how long a preferred replica is used before
	// the leader is asked again (default 5 minutes).
	PreferenceTTL time.Duration

	// Cooldown is how long a failed replica is not used (default 5 minutes).
	Cooldown time.Duration

	// MaxSwitchesPerMinute damps flapping: a partition moves its reads to
	// a follower at most this often, whatever the brokers say (default 4).
	MaxSwitchesPerMinute int

	// FollowerBackoffMin/Max bound the wait when a follower has nothing yet
	// above the fetch offset (defaults 50ms, 1s).
	FollowerBackoffMin, FollowerBackoffMax time.Duration

	// LeaderBackoffMin/Max bound the wait after consecutive failures of
	// the leader (defaults 100ms, 1s: ReaderConfig.ReadBackoffMin/Max).
	LeaderBackoffMin, LeaderBackoffMax time.Duration

	// ErrorBackoffMin/Max bound the wait after consecutive failed fetches
	// and dials of any broker: n² × Min after the n-th in a row, at most
	// Max (ReaderConfig.ReadBackoffMin/Max; defaults 100ms, 1s); a fetch
	// that works starts the count again. Min is also the pause after an
	// empty answer given at once (no long poll) that names no replica:
	// such a broker is not asked again in a busy loop (backoff.go).
	ErrorBackoffMin, ErrorBackoffMax time.Duration

	// Choice picks a replica when the leader names none (choice.go; nil:
	// never).
	Choice Chooser
	// Versions tells which brokers serve a consumer's fetch as a follower
	// (Fetch v11+), for a stand-in of an unreachable leader
	// (leaderpath.go); nil: every broker does.
	Versions FetchVersions
	// MaxFollowerLag bounds how far reads may wait on a follower behind
	// the leader (lag.go); zero turns the check off.
	MaxFollowerLag time.Duration
}

const (
	routeDefaultTTL                = 5 * time.Minute
	routeDefaultCooldown           = 5 * time.Minute
	routeDefaultMaxSwitches        = 4
	routeDefaultFollowerBackoffMin = 50 * time.Millisecond
	routeDefaultFollowerBackoffMax = time.Second
	routeDefaultLeaderBackoffMin   = 100 * time.Millisecond
	routeDefaultLeaderBackoffMax   = time.Second
	routeDefaultErrorBackoffMin    = 100 * time.Millisecond
	routeDefaultErrorBackoffMax    = time.Second

	// routeSwitchWindow is the sliding window of the flap budget.
	routeSwitchWindow = time.Minute
	// A preferred replica missing from metadata is refused for a hold
	// before the leader is asked with the rack again (unless a metadata
	// refresh shows it sooner). The first hold is short: the leader names
	// a replica as soon as it rejoins the ISR, and the refresh that
	// naming triggers may reach a broker that does not know it yet (on
	// ZooKeeper clusters the controller's UpdateMetadata reaches brokers
	// seconds apart). The first holds stay short, so that the partition is
	// back on its rack within a second of metadata catching up; while the
	// replica stays unknown longer the hold doubles up to the maximum,
	// which bounds the metadata refreshes the leader's naming can cause.
	routeUnknownReplicaHoldMin = time.Second
	routeUnknownShortHolds     = 5
	routeUnknownReplicaHold    = 10 * time.Second
)

// backoffRange sets a zero (or negative) bound of a backoff range to its
// default and keeps max at or above min.
func backoffRange(min, max *time.Duration, defMin, defMax time.Duration) {
	if *min <= 0 {
		*min = defMin
	}
	if *max <= 0 {
		*max = defMax
	}
	if *max < *min {
		*max = *min
	}
}

// withDefaults returns cfg with every zero (or negative) field set to its
// default.
func (cfg Config) withDefaults() Config {
	if cfg.PreferenceTTL <= 0 {
		cfg.PreferenceTTL = routeDefaultTTL
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = routeDefaultCooldown
	}
	if cfg.MaxSwitchesPerMinute <= 0 {
		cfg.MaxSwitchesPerMinute = routeDefaultMaxSwitches
	}
	backoffRange(&cfg.FollowerBackoffMin, &cfg.FollowerBackoffMax, routeDefaultFollowerBackoffMin, routeDefaultFollowerBackoffMax)
	backoffRange(&cfg.LeaderBackoffMin, &cfg.LeaderBackoffMax, routeDefaultLeaderBackoffMin, routeDefaultLeaderBackoffMax)
	backoffRange(&cfg.ErrorBackoffMin, &cfg.ErrorBackoffMax, routeDefaultErrorBackoffMin, routeDefaultErrorBackoffMax)
	return cfg
}

// Selector routes one partition's fetches.
type Selector struct {
	cfg      Config
	cooldown *Cooldowns // shared by every partition of a Reader

	part     Partition // the latest metadata accepted
	accepted uint64    // how many metadata events part came from
	leader   int       // part's leader id (-1: none known yet)
	epoch    int       // part's leader epoch (-1: unknown)
	cur      int       // where fetches go now
	now      time.Time // the latest event time seen; time never goes back

	pinnedAt time.Time   // when the preference for cur (a follower) was set
	switches []time.Time // leases (moves to a follower) within routeSwitchWindow, oldest first
	// leased is the follower reads were last on (-1: none yet): reads
	// moving back to it renew its lease, off the budget, whatever took
	// them away; only a move to another follower is a new lease.
	leased int

	emptyStreak int // consecutive empty answers of the follower at its HW
	staleErrors int // consecutive stale-client errors of the follower
	// fencedErrors: how many of them were FENCED_LEADER_EPOCH, which never
	// count towards routeMaxStaleErrors (only the backoff grows with them).
	fencedErrors int
	leaderErrors int // consecutive failures of the leader
	// leaderDown: the leader's latest failure blamed the broker (a dial,
	// a lost connection, a timeout). When leadership moves away from it,
	// it cools down like a follower that failed: it may be dead, and as a
	// follower it would be read next.
	leaderDown bool
	failures   int // consecutive failed fetches and dials, of any broker (backoff.go)
	// away: reads are on a stand-in because the leader could not be
	// reached (leaderpath.go); they go back when its cooldown is over.
	away     bool
	refusals int // consecutive namings of a refused replica by the leader

	// The replica the leader names that is refused, and until when: the
	// fetcher omits the rack meanwhile. held < 0 when none.
	held       int
	heldUntil  time.Time
	heldReason Reason
	// unknown is the replica of the latest holds for being unknown to
	// metadata (-1: none), unknownHolds how many there were in a row.
	unknown      int
	unknownHolds int

	choice choiceState // client-side selection (choice.go)
	lag    followerLag // lag.go
}

// New starts routing partition p at its leader.
func New(cfg Config, cooldown *Cooldowns, p Partition, now time.Time) *Selector {
	if cooldown == nil {
		cooldown = NewCooldowns()
	}
	return &Selector{
		cfg:      cfg.withDefaults(),
		cooldown: cooldown,
		part:     p,
		leader:   p.Leader.ID,
		epoch:    p.LeaderEpoch,
		cur:      p.Leader.ID,
		now:      now,
		held:     -1,
		leased:   -1,
		unknown:  -1,
		lag:      newFollowerLag(),
	}
}

// current returns the broker the partition is routed to now.
func (s *Selector) Current() int { return s.cur }

// partition returns the partition's metadata as the selector accepted it:
// the one view of leader, epoch and ISR the fetcher acts on.
func (s *Selector) Partition() Partition { return s.part }

// Accepted counts the metadata events the selector took as its view (an
// older epoch or no leader is not taken): when it changes, Partition
// returns the metadata of the latest EventMetadata.
func (s *Selector) Accepted() uint64 { return s.accepted }

// tp names the partition, the key of its replicas' cooldowns.
func (s *Selector) tp() topicPartition { return topicPartition{s.part.Topic, s.part.ID} }

// Next folds ev into the state and returns where to fetch next and how
// long to wait first: the one wait of the fetcher (backoff.go).
func (s *Selector) Next(ev Event) Decision {
	d := s.step(ev)
	d.Backoff = max(d.Backoff, s.eventBackoff(ev))
	return d
}

// step is the transition table above: where to fetch next, and the waits
// routing asks for itself.
func (s *Selector) step(ev Event) Decision {
	now := ev.Now
	if now.Before(s.now) {
		now = s.now // a late or zero clock reading must not rewind TTLs
	}
	s.now = now
	prev := s.cur
	var d Decision

	switch ev.Kind {
	case EventMetadata:
		s.onMetadata(ev.Partition, now, &d)
		s.onMetadataChoice(ev.Partition, now, &d)
	case EventFetched:
		s.onFetched(ev, now, &d)
	case EventFetchError, EventDialFailed:
		s.onFailure(ev, now, &d)
	case EventLeaderHW:
		if !ev.Now.IsZero() {
			s.lag.sawLeader(ev.Now, ev.HighWatermark) // when it was read, not now
		}
	}

	// Checked on every event, whatever it was about.
	s.awayCheck(now, &d)
	if s.cur != s.leader && !s.away {
		if s.cooldown.cooling(s.cur, s.tp(), now) {
			s.route(&d, s.leader, ReasonFollowerFailed, now)
		} else if !now.Before(s.pinnedAt.Add(s.cfg.PreferenceTTL)) {
			s.route(&d, s.leader, ReasonTTL, now)
		}
		s.lagCheck(now, &d)
	}
	if s.leader < 0 {
		// No leader known: nowhere to fetch until metadata names one.
		d.RefreshMetadata = true
		if d.Backoff == 0 {
			d.Backoff = s.leaderFailed()
		}
	}

	if s.held >= 0 && s.heldReason == ReasonCoolingDown && !s.cooldown.cooling(s.held, s.tp(), now) {
		s.held = -1 // its cooldown ended early (back in the ISR): let the leader name it
	}
	d.Broker = s.cur
	d.Changed = s.cur != prev
	d.ProbeBroker, d.Probe = s.cooldown.ProbeDue(now)
	d.OmitRack = s.cur == s.leader && s.cfg.Rack != "" && s.held >= 0 && now.Before(s.heldUntil)
	if s.held >= 0 && !now.Before(s.heldUntil) {
		s.held = -1
	}
	return d
}

// route moves reads to broker b (a no-op when already there) and labels
// the decision. Leases are counted by the caller (onLeaderAnswer).
func (s *Selector) route(d *Decision, b int, reason Reason, now time.Time) {
	d.Reason = reason
	if b == s.cur {
		return
	}
	if b != s.leader {
		s.leased = b
	}
	s.away = false // leaveLeader sets it again for a stand-in
	s.cur = b
	s.emptyStreak = 0
	s.staleErrors, s.fencedErrors = 0, 0
	// The reader has not waited at b yet: a wait at the replica it had
	// before (or at b before it failed) is no lag of b's now.
	s.lag.waitOn = -1
	d.Backoff = 0 // a new replica is asked at once
}

// budgetLeft reports whether a lease fits the flap budget at now and, when
// not, when it will.
func (s *Selector) budgetLeft(now time.Time) (bool, time.Time) {
	s.pruneSwitches(now)
	n, limit := len(s.switches), s.cfg.MaxSwitchesPerMinute
	if n < limit {
		return true, time.Time{}
	}
	// A smaller MaxSwitchesPerMinute cannot occur, but be exact anyway:
	// n-limit+1 leases must leave the window, the last of them being
	// switches[n-limit].
	return false, s.switches[n-limit].Add(routeSwitchWindow)
}

// pruneSwitches forgets the leases that left the window ending at now.
func (s *Selector) pruneSwitches(now time.Time) {
	cut := now.Add(-routeSwitchWindow)
	i := 0
	for i < len(s.switches) && !s.switches[i].After(cut) {
		i++
	}
	s.switches = s.switches[i:]
}

func (s *Selector) onMetadata(p Partition, now time.Time, d *Decision) {
	if p.Leader.ID < 0 {
		// An election is in progress: keep routing as is, the fetch
		// errors say the rest, and ask again shortly.
		d.RefreshMetadata = true
		d.Backoff = s.leaderFailed()
		d.Reason = ReasonLeaderError
		return
	}
	if p.LeaderEpoch < s.epoch {
		return // older than what is known: a lagging broker answered
	}
	s.lag.metaAt = now
	changed := p.Leader.ID != s.leader || p.LeaderEpoch > s.epoch
	s.part = p
	s.accepted++
	// What the ISR says ends the cooldowns of replicas seen leaving it
	// and coming back (cooldown.go), before the checks below use them.
	for _, r := range p.Replicas {
		s.cooldown.observeISR(r.ID, s.tp(), s.inSync(r.ID), now)
	}
	if changed {
		onFollower := s.cur != s.leader
		if s.leaderDown && p.Leader.ID != s.leader {
			s.cooldown.fail(s.leader, wholeBroker, now, s.cfg.Cooldown)
		}
		// A new leader decides again where reads go: reads on a stand-in
		// of the old one go to it.
		wasAway := s.away && p.Leader.ID != s.leader
		s.away = s.away && !wasAway
		s.leaderDown = false
		s.leader, s.epoch = p.Leader.ID, p.LeaderEpoch
		s.leaderErrors = 0
		s.refusals = 0
		s.held = -1
		d.ValidateOffset = true
		d.Reason = ReasonLeaderChanged
		// A follower still in the ISR serves the new epoch as well as it
		// served the old one: a leader change elsewhere is no reason to
		// read across racks. Reads on the old leader stay there too when
		// it is in the reader's rack and still in the ISR (it is now such
		// a follower: Kafka 2.x moves leadership back to a restarted
		// preferred leader at once), as if the new leader had named it:
		// its TTL starts now. Otherwise they follow the new leader.
		switch {
		case wasAway && s.cur != s.leader:
			s.route(d, s.leader, ReasonLeaderChanged, now)
		case onFollower && s.usable(s.cur, now):
		case !onFollower && s.cfg.Choice == nil && s.cur != s.leader && s.inOwnRack(s.cur) && s.usable(s.cur, now):
			s.pinnedAt, s.leased = now, s.cur
		case !onFollower && s.cfg.Choice != nil && s.cur != s.leader && s.clientChoice(now) == s.cur:
			// The client picks the old leader as it is now: reads stay,
			// which is no lease (they never left it).
			s.pinnedAt, s.leased = now, s.cur
			d.Reason = ReasonClientChoice
		default:
			s.route(d, s.leader, ReasonLeaderChanged, now)
		}
		return
	}
	if s.cur != s.leader && !s.inSync(s.cur) {
		s.route(d, s.leader, ReasonFollowerGone, now)
	}
	if s.held >= 0 && s.heldReason == ReasonUnknownReplica && s.inSync(s.held) {
		s.held = -1 // the refresh shows it: let the leader name it again
		s.unknown = -1
	}
}

// usable reports whether follower b may be read now: in the ISR with a
// host, and not cooling down for this partition.
func (s *Selector) usable(b int, now time.Time) bool {
	return b >= 0 && s.inSync(b) && !s.cooldown.cooling(b, s.tp(), now)
}

func (s *Selector) onFetched(ev Event, now time.Time, d *Decision) {
	s.lagFetched(ev)
	switch {
	case ev.Broker == s.leader:
		s.leaderErrors = 0
		s.leaderDown = false
		s.away = false
		s.onLeaderAnswer(ev, now, d)
	case ev.Broker == s.cur:
		// A follower's -1 means "stay with me": the pin holds, its TTL
		// is not extended. Followers never name a replica; ignore one.
		s.staleErrors, s.fencedErrors = 0, 0
		if !ev.Empty || ev.LongPolled {
			s.emptyStreak = 0 // a long poll already waited
		} else if ev.FetchOffset >= ev.HighWatermark {
			// Its high watermark trails the leader's: it answers at
			// once with nothing, so wait before asking again.
			s.emptyStreak++
			d.Backoff = routeBackoffStep(s.cfg.FollowerBackoffMin, s.cfg.FollowerBackoffMax, s.emptyStreak)
		}
	}
	// An answer from another broker is stale (routing moved since): ignored.
}

// onLeaderAnswer handles the leader's preferred read replica. The leader is
// authoritative: its -1 means "come back", a name is a candidate.
func (s *Selector) onLeaderAnswer(ev Event, now time.Time, d *Decision) {
	x := ev.Preferred
	renewal := x >= 0 && x == s.leased
	if s.cfg.Rack == "" || x < 0 || x == s.leader {
		s.refusals = 0
		s.unknown = -1
		if x < 0 && s.clientLease(d, now) {
			return // the leader names none: the client's choice applies
		}
		if s.cur != s.leader {
			s.route(d, s.leader, ReasonLeaderPreferred, now)
		}
		return
	}
	refuse := func(reason Reason, until time.Time) {
		s.refusals++
		s.route(d, s.leader, reason, now)
		s.held, s.heldUntil, s.heldReason = x, until, reason
		if ev.Empty {
			// The leader answers at once with nothing while it names a
			// replica; back off in case the fetcher cannot omit the rack.
			d.Backoff = routeBackoffStep(s.cfg.FollowerBackoffMin, s.cfg.FollowerBackoffMax, s.refusals)
		}
	}
	// Since Kafka 3.4 the leader names only in-sync replicas: for a
	// replica metadata had shown out of the ISR since it failed, this is
	// the news that it is back, which ends its cooldown (a broker-level
	// one waits for its probe still).
	s.cooldown.observeISR(x, s.tp(), true, now)
	if !s.inSync(x) {
		// Our metadata lags the leader's view: refresh it, once per hold
		// (1 s five times, then doubling up to 10 s).
		if !(s.held == x && s.heldReason == ReasonUnknownReplica && now.Before(s.heldUntil)) {
			d.RefreshMetadata = true
			if s.unknown != x {
				s.unknown, s.unknownHolds = x, 0
			}
			s.unknownHolds++
		}
		refuse(ReasonUnknownReplica, now.Add(unknownReplicaHold(s.unknownHolds)))
		return
	}
	if until, cooling := s.cooldown.coolingUntil(x, s.tp(), now); cooling {
		refuse(ReasonCoolingDown, until)
		return
	}
	if until, lagging := s.lagHeld(x, now); lagging {
		refuse(ReasonFollowerLagging, until)
		return
	}
	lease := x != s.cur && !renewal
	if lease {
		if ok, until := s.budgetLeft(now); !ok {
			refuse(ReasonFlapDamped, until)
			return
		}
		s.pruneSwitches(now)
		s.switches = append(s.switches, now)
	}
	s.refusals = 0
	s.held = -1
	s.unknown = -1
	s.route(d, x, ReasonPreferred, now)
	s.pinnedAt = now // set (or set again) by the leader
}

func (s *Selector) onFailure(ev Event, now time.Time, d *Decision) {
	if ev.Kind == EventFetchError && ev.Failure.Canceled {
		return // the fetcher gave up, the broker did not fail
	}
	if ev.Broker == s.leader {
		// The leader cools down only when a stand-in takes over
		// (leaderpath.go): otherwise there is nowhere else to go.
		if ev.Kind == EventFetchError && ev.Failure.OutOfRange {
			return // the Reader resets its offset; not a routing matter
		}
		d.Reason = ReasonLeaderError
		d.Backoff = s.leaderFailed()
		d.RefreshMetadata = ev.Kind == EventDialFailed || ev.Failure.Refresh != RefreshNo
		s.leaderDown = ev.Kind == EventDialFailed || ev.Failure.Scope == ScopeBroker
		if ev.Broker == s.cur && unreachable(ev) && s.leaveLeader(d, now, true) {
			s.leaderErrors = 0
		}
		return
	}
	if ev.Broker < 0 || ev.Broker != s.cur {
		return // a stale report: routing already moved
	}
	if s.lagMissing(ev, d) {
		return // not replicated there yet: wait for it
	}
	scope := ev.Failure.Scope
	if ev.Kind == EventDialFailed {
		scope = ScopeBroker
	}
	if scope == ScopeStaleClient {
		s.staleErrors++
		if ev.Failure.ReplicaAhead {
			s.fencedErrors++
		}
		if s.staleErrors-s.fencedErrors <= routeMaxStaleErrors || ev.Failure.ReplicaAhead {
			// Fresh metadata tells whether the replica is still in the
			// ISR (stay, with the new epoch) or not (go to the leader).
			d.Reason = ReasonStaleClient
			d.RefreshMetadata = true
			d.Backoff = routeBackoffStep(s.cfg.FollowerBackoffMin, s.cfg.FollowerBackoffMax, s.staleErrors)
			return
		}
		scope = ScopePartition // it keeps saying so with fresh metadata
	}
	tp := wholeBroker
	if scope == ScopePartition {
		tp = s.tp()
	}
	s.cooldown.fail(ev.Broker, tp, now, s.cfg.Cooldown)
	if s.away {
		// The leader cannot be reached: the next stand-in, if any
		// (awayCheck), else the leader.
		s.awayCheck(now, d)
		d.RefreshMetadata = ev.Kind == EventFetchError && ev.Failure.Refresh == RefreshYes
		return
	}
	s.route(d, s.leader, ReasonFollowerFailed, now)
	d.RefreshMetadata = ev.Kind == EventFetchError && ev.Failure.Refresh == RefreshYes
}

// routeMaxStaleErrors bounds the stale-client errors a follower may answer
// in a row, each after a metadata refresh, before it counts as failed.
const routeMaxStaleErrors = 3

// leaderFailed counts one more consecutive leader failure and returns the
// backoff it earns.
func (s *Selector) leaderFailed() time.Duration {
	s.leaderErrors++
	return routeBackoffStep(s.cfg.LeaderBackoffMin, s.cfg.LeaderBackoffMax, s.leaderErrors)
}

// inOwnRack reports whether broker b is in the reader's rack, per the
// latest metadata.
func (s *Selector) inOwnRack(b int) bool {
	return s.cfg.Rack != "" && replicaRack(s.part, Replica{ID: b}) == s.cfg.Rack
}

// inSync reports whether broker b is a replica fit to read from per the
// latest metadata: in the ISR, with a host, and not offline.
func (s *Selector) inSync(b int) bool { return InSync(&s.part, b) }

// unknownReplicaHold is the n-th hold (from 1) of a preferred replica
// unknown to metadata.
func unknownReplicaHold(n int) time.Duration {
	if n <= routeUnknownShortHolds {
		return routeUnknownReplicaHoldMin
	}
	return routeBackoffStep(2*routeUnknownReplicaHoldMin, routeUnknownReplicaHold, n-routeUnknownShortHolds)
}

// routeBackoffStep returns min doubled n-1 times, bounded by max (n ≥ 1).
func routeBackoffStep(min, max time.Duration, n int) time.Duration {
	d := min
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	return d
}
