package kafka

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The IDs are metric label values and stats keys: dashboards and alerts
// are written against them, so this list only ever grows.
func TestRerouteReasonIDs(t *testing.T) {
	want := map[RerouteReason]string{
		ReroutePreferredReplica: "preferred_replica",
		RerouteTTL:              "preference_expired",
		RerouteFollowerFailed:   "follower_failed",
		RerouteFollowerGone:     "follower_left_isr",
		RerouteUnknownReplica:   "unknown_replica",
		RerouteLeaderChanged:    "leader_changed",
		RerouteLeaderPreferred:  "leader_no_preference",
		RerouteCoolingDown:      "replica_cooling_down",
		RerouteFlapDamped:       "flap_damped",
		RerouteLeaderError:      "leader_failed",
		RerouteStaleClient:      "stale_metadata",
		RerouteClientChoice:     "client_selected",
		RerouteFollowerLagging:  "follower_lagging",
	}
	require.Len(t, RerouteReasons(), len(want))
	for _, r := range RerouteReasons() {
		assert.Equal(t, want[r], string(r))
	}
}

// Every reason has a unique ID of [a-z_]+ and a unique sentence of its own
// for the logs.
func TestRerouteReasonIDAndSentence(t *testing.T) {
	id := regexp.MustCompile(`^[a-z_]+$`)
	ids, sentences := map[RerouteReason]bool{}, map[string]bool{}
	for _, r := range RerouteReasons() {
		assert.Regexp(t, id, string(r))
		assert.False(t, ids[r], "ID %q used twice", r)
		ids[r] = true
		s := r.Sentence()
		assert.NotEqual(t, string(r), s, "reason %q has no sentence", r)
		assert.NotRegexp(t, id, s, "reason %q: its sentence looks like an ID", r)
		assert.False(t, sentences[s], "sentence %q used twice", s)
		sentences[s] = true
	}
	assert.Len(t, rerouteSentences, len(RerouteReasons()), "a sentence for a reason RerouteReasons does not list")
	assert.Equal(t, "preferred replica not in metadata or ISR", RerouteUnknownReplica.Sentence())
	assert.Equal(t, "some_new_reason", RerouteReason("some_new_reason").Sentence(), "an unknown reason shows its ID")
}
