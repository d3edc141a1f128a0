package plan

import "testing"

func TestZoneSkipString(t *testing.T) {
	z := &ZoneSkip{}
	for i := 0; i < 97; i++ {
		z.Count(ZoneBoundsExclude)
	}
	z.Count(ZonePartitionExcludes)
	z.Count(ZoneAllMatch)
	z.Count(ZoneStraddles)
	want := "considered=100 skipped=98 (bounds exclude 97, partition excludes 1) answered=1 (all rows match) read=1 (straddles)"
	if got := z.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if s, a, r := z.Outcomes(); s != 98 || a != 1 || r != 1 {
		t.Errorf("outcomes %d %d %d", s, a, r)
	}
	if got := (&ZoneSkip{}).String(); got != "considered=0" {
		t.Errorf("no zone: %s", got)
	}
	if got := (&ZoneSkip{Stale: true}).String(); got != "record stale, the files' footers prune" {
		t.Errorf("stale: %s", got)
	}
	for r := ZoneReason(0); r < NumZoneReasons; r++ {
		if r.String() == "" || r.Outcome() == "" {
			t.Errorf("reason %d has no label", r)
		}
	}
}
