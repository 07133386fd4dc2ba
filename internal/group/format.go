package group

import (
	"fmt"
	"sort"
	"strings"
)

// formatOffsets formats topic → partition → offset for a log line.
func formatOffsets(offsets map[string]map[int]int64) string {
	var parts []string
	for topic, ps := range offsets {
		for p, o := range ps {
			parts = append(parts, fmt.Sprintf("%s/%d:%d", topic, p, o))
		}
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}

// formatAssignments formats a generation's assignments for a log line.
func formatAssignments(as map[string][]Assignment) string {
	var parts []string
	for topic, ps := range as {
		for _, p := range ps {
			parts = append(parts, fmt.Sprintf("%s/%d@%d", topic, p.ID, p.Offset))
		}
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}
