package lore

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"

	"github.com/loredb/lore/internal/aftergc"
)

// collectorPacing is the process's garbage-collector policy once an engine has set
// it (Options.GCPercent, Options.GCHeadroom): a target of percent while the live
// heap is small, and beyond that a heap that may grow at most headroom bytes past
// the live heap before the next collection, never at a target below floor. Scans
// allocate batch after batch over a small live heap, where a high target saves
// collections; a statement that holds much (a join's build side, an aggregate's
// groups) would at that target let the heap grow to five times what it holds
// before collecting. The target follows the live heap each collection leaves.
type collectorPacing struct {
	percent, floor int
	headroom       uint64

	sample  []metrics.Sample
	last    atomic.Int64 // the target set last
	stopped atomic.Bool  // no more adjustments (tests)
}

// pacingFloor is the lowest target the pacing sets: past it, a large live heap
// would be marked again for every little allocation. At 35 a live heap of 130 MiB
// (TPC-H Q18's 1.5M groups) peaks at about 175 MiB rather than 195 at 50 or 260 at
// 100. Little of what a statement holds has pointers to mark (value buffers, hash
// slots), and page buffers outlive collections (parquet's page pool): TPC-H Q09,
// Q10, Q13 and Q18 together collect half as often again as at 50, for 1–2 % more
// CPU time. At 25 the collections cost about 5 %.
const pacingFloor = 35

var pacingOnce sync.Once

// pace starts the policy, once per process: after every collection (a finalizer
// re-armed each cycle) it sets the target for the live heap that collection left.
func pace(percent int, headroom uint64) {
	pacingOnce.Do(func() {
		newPacing(percent, headroom).arm()
	})
}

func newPacing(percent int, headroom uint64) *collectorPacing {
	p := &collectorPacing{percent: percent, floor: min(pacingFloor, percent), headroom: headroom,
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	p.last.Store(int64(percent))
	return p
}

// arm adjusts the target after every collection until the pacing is stopped.
func (p *collectorPacing) arm() {
	aftergc.Each(func() bool {
		if p.stopped.Load() {
			return false
		}
		p.adjust()
		return true
	})
}

// adjust sets the target for the live heap now.
func (p *collectorPacing) adjust() {
	metrics.Read(p.sample)
	if p.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if t := p.target(p.sample[0].Value.Uint64()); int64(t) != p.last.Load() {
		debug.SetGCPercent(t)
		p.last.Store(int64(t))
	}
}

// target is the collector's target for a live heap of live bytes.
func (p *collectorPacing) target(live uint64) int {
	if live == 0 || uint64(p.percent)*live/100 <= p.headroom {
		return p.percent
	}
	return max(p.floor, int(p.headroom*100/live))
}
