package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/agg"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/plan"
)

// Partial runs aggregate a over its input and returns its groups unfinished: the
// group keys (one array per group expression, nil when a groups nothing) and each
// aggregate's state over those groups, in key order. It is a distributed
// statement's worker's part: the coordinator merges the states of every worker
// (agg.Accumulator.Merge) and finishes them. Grouping sets are left to the
// coordinator: the states are those of the finest grouping. A worker's aggregate
// never spills; its budget bounds the groups it holds.
func Partial(ctx context.Context, env *Env, a *plan.Aggregate) (keys []arrow.Array, accs []agg.Accumulator, err error) {
	if a.Seeds != nil {
		return nil, nil, errs.New(errs.Internal, "BUG: a worker's aggregate with seeds")
	}
	bd := &builder{env: env}
	defer bd.releaseShared()
	op, err := bd.buildAggregate(a)
	if err != nil {
		return nil, nil, err
	}
	h := op.(*hashAggregate)
	defer h.Close()
	h.keep = true
	if err := h.compute(ctx); err != nil {
		return nil, nil, err
	}
	final := h.kept
	if final.keys != nil {
		keys = final.keys.Keys()
		for _, acc := range final.accs {
			acc.Resize(final.keys.Len())
		}
	}
	return keys, final.accs, nil
}

// Zones are the zones a scan reads, planned for other processes to read (PlanZones).
type Zones struct {
	// IDs are the zones, as file and row group.
	IDs []plan.ZoneID
	// Bytes is the compressed size of the column chunks reading them fetches.
	Bytes int64
	st    *ScanStats
}

// PlanZones plans the zones scan reads under env: its listing's row groups that
// pruning leaves (the files' partition values and footers, the statistics record,
// the zone planner's decision). It reads footers, never data, and records nothing
// in env until the zones are claimed.
func PlanZones(ctx context.Context, env *Env, scan *plan.Scan) (*Zones, error) {
	if len(scan.Deferred) > 0 {
		return nil, errs.New(errs.Internal, "BUG: the zones of a scan with deferred predicates")
	}
	names, _ := scanColumns(scan)
	z := &Zones{st: &ScanStats{Node: scan}}
	sp, err := planScan(ctx, env, scan, names, scan.Filters, &z.st.Counters)
	if err != nil {
		return nil, err
	}
	z.IDs = make([]plan.ZoneID, 0, len(sp.Morsels))
	for _, m := range sp.Morsels {
		id := plan.ZoneID{File: m.File, RowGroup: m.RowGroup}
		if n := len(z.IDs); n == 0 || z.IDs[n-1] != id {
			z.IDs = append(z.IDs, id)
			z.Bytes += sp.ChunkBytes(m)
		}
	}
	return z, nil
}

// Claim records z's scan in env as read elsewhere: its planning counters join
// env.Scans, its zones counted as read.
func (z *Zones) Claim(env *Env) {
	z.st.Counters.RowGroupsRead.Add(int64(len(z.IDs)))
	env.Scans = append(env.Scans, z.st)
}
