package plan

import (
	"fmt"
	"strings"
)

// ZoneReason is why the zone planner skipped, answered or read one zone.
type ZoneReason uint8

// The reasons, grouped by what they lead to (ZoneReason.Outcome).
const (
	// Skipped: no row of the zone can satisfy the filter.
	ZoneEmpty             ZoneReason = iota // the zone has no row
	ZoneBoundsExclude                       // its bounds and null counts exclude the filter
	ZonePartitionExcludes                   // its file's partition values alone exclude it
	// Answered from the zone's partials.
	ZoneAllMatch // the filter holds for every row, and every aggregate took the partials
	// Read.
	ZoneStraddles       // the statistics cannot tell which rows match
	ZoneBoundsInexact   // every row matches, but MIN or MAX has only bounds, not values
	ZonePartialsMissing // every row matches, but a partial is not on record (null count, sum)
	ZoneAggregateNeeds  // an aggregate keeps no partial a zone can hold (COUNT(DISTINCT), an expression)
	ZoneBypassed        // use_statistics = false
	NumZoneReasons
)

var zoneReasonNames = [NumZoneReasons]string{
	"empty", "bounds exclude", "partition excludes",
	"all rows match",
	"straddles", "bounds inexact", "partials missing", "aggregate needs rows", "statistics bypassed",
}

// String is the reason's short label, as EXPLAIN shows it.
func (r ZoneReason) String() string {
	if r < NumZoneReasons {
		return zoneReasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}

// Outcome is what the reason leads to: "skipped", "answered" or "read".
func (r ZoneReason) Outcome() string {
	switch {
	case r <= ZonePartitionExcludes:
		return "skipped"
	case r == ZoneAllMatch:
		return "answered"
	}
	return "read"
}

// Count records one zone done for reason r.
func (z *ZoneSkip) Count(r ZoneReason) {
	z.Considered++
	z.Reasons[r]++
}

// Outcomes are the zones skipped, answered and read, by their reasons.
func (z *ZoneSkip) Outcomes() (skipped, answered, read int) {
	for r, n := range z.Reasons {
		switch ZoneReason(r).Outcome() {
		case "skipped":
			skipped += n
		case "answered":
			answered += n
		default:
			read += n
		}
	}
	return skipped, answered, read
}

// String renders the decision as EXPLAIN shows it:
//
//	considered=30 skipped=14 (bounds exclude) answered=15 (all rows match) read=1 (straddles)
//
// An outcome of several reasons lists each with its count; outcomes of no zone are
// left out.
func (z *ZoneSkip) String() string {
	if z.Stale {
		return "record stale, the files' footers prune"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "considered=%d", z.Considered)
	for _, outcome := range []string{"skipped", "answered", "read"} {
		total := 0
		var parts []string
		for r, n := range z.Reasons {
			if n > 0 && ZoneReason(r).Outcome() == outcome {
				total += n
				parts = append(parts, fmt.Sprintf("%s %d", ZoneReason(r), n))
			}
		}
		if total == 0 {
			continue
		}
		if len(parts) == 1 {
			// One reason: its count is the outcome's.
			parts[0] = parts[0][:strings.LastIndexByte(parts[0], ' ')]
		}
		fmt.Fprintf(&b, " %s=%d (%s)", outcome, total, strings.Join(parts, ", "))
	}
	return b.String()
}
