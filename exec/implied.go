package exec

import (
	"sync"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/plan/rules"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

// impliedPlans reads the morsels whose row group statistics prove some conjuncts of
// the pipeline's lead filter true on every row (ts >= '2024-03-20' on a row group
// whose least ts is later): those conjuncts are not run on them, and a column that
// only they read, when the pipeline knows the columns read after the filter, is not
// decoded. On data clustered by the filtered column, every row group but the ones at
// the range's edges is read so. The judgement is the zone classifier's
// (rules.Classify) over the row group's footer statistics.
type impliedPlans struct {
	p         *pipeline
	pos       []int
	n         int
	conjuncts []plan.Expr
	// needed are the scan columns read after the lead filter; nil when unknown.
	needed map[int]bool
	mu     sync.Mutex
	plans  map[uint64]impliedPlan
}

// impliedPlan is the reading of the morsels whose proved conjuncts are one set: late
// with the row filter, or whole (every column it needs decoded first). The stages
// after batch are the pipeline's but the lead filter, whose conjuncts left batch
// runs.
type impliedPlan struct {
	late, whole readPlan
	ok          bool
}

// init readies the plans for a run of p over columns pos of n read.
func (ip *impliedPlans) init(p *pipeline, pos []int, n int) {
	*ip = impliedPlans{p: p, pos: pos, n: n}
	if p.lead == nil {
		return
	}
	ip.conjuncts = plan.Conjuncts(p.lead)
	if len(ip.conjuncts) > 64 {
		ip.conjuncts = nil // a set of proved conjuncts is a word's bits
		return
	}
	switch {
	case p.projected:
		ip.needed = p.after
	case p.consumed != nil:
		ip.needed = map[int]bool{}
		for c := range p.after {
			ip.needed[c] = true
		}
		for c := range p.consumed {
			ip.needed[c] = true
		}
	}
	ip.plans = map[uint64]impliedPlan{}
}

// plan returns how to read morsel m when its statistics prove conjuncts of the lead
// filter; ok is false when they prove none, or when proving them saves nothing.
func (ip *impliedPlans) plan(sp *source.ScanPlan, m source.Morsel) (rp readPlan, stages []stage, ok bool) {
	if len(ip.conjuncts) == 0 {
		return readPlan{}, nil, false
	}
	p := ip.p
	rows := sp.GroupRows(m)
	facts := func(col int) (rules.ColumnFacts, bool) {
		if col < 0 || col >= len(p.scan.Cols) || col >= p.scan.Ref.Listing.Schema.NumFields() {
			return rules.ColumnFacts{}, false
		}
		cs, ok := sp.Stats(m, p.scan.Ref.Listing.Schema.Field(col).Name)
		if !ok {
			return rules.ColumnFacts{}, false
		}
		f := rules.ColumnFacts{Rows: rows, Nulls: -1, MayHaveNaN: types.IsFloat(p.scan.Cols[col].Type)}
		if cs.HasNullCount {
			f.Nulls = cs.NullCount
		}
		if cs.HasMinMax {
			f.Min, f.Max, f.Bounded = cs.Min, cs.Max, true
		}
		return f, true
	}
	var skip uint64
	for i, cj := range ip.conjuncts {
		if rules.Classify(p.scan, cj, facts) == rules.All {
			skip |= 1 << i
		}
	}
	if skip == 0 {
		return readPlan{}, nil, false
	}
	ip.mu.Lock()
	pl, made := ip.plans[skip]
	if !made {
		pl = ip.make(skip)
		ip.plans[skip] = pl
	}
	ip.mu.Unlock()
	if !pl.ok {
		return readPlan{}, nil, false
	}
	if pl.whole.early == nil || p.rowFilter(sp, m, pl.late.early) {
		return pl.late, p.stages[1:], true
	}
	return pl.whole, p.stages[1:], true
}

// make builds the plan of the morsels whose proved conjuncts are skip.
func (ip *impliedPlans) make(skip uint64) impliedPlan {
	p := ip.p
	all := skip == 1<<len(ip.conjuncts)-1 // at 64 conjuncts, the shift gives 0 and all is ^0
	if ip.needed == nil {
		if !all {
			return impliedPlan{} // every column is read anyway: the usual plans serve
		}
		// Every conjunct holds: the morsel is read whole, without the filter.
		return impliedPlan{ok: true}
	}
	late := p.readPlan(ip.pos, ip.n, skip, ip.needed)
	whole := readPlan{early: make([]bool, ip.n), waves: make([][]int, len(late.steps)), steps: late.steps, rest: []int{}}
	for k, e := range late.early {
		whole.early[k] = e
	}
	for _, k := range late.rest {
		whole.early[k] = true
	}
	for _, wave := range late.waves {
		for _, c := range wave {
			whole.early[ip.pos[c]] = true
		}
	}
	return impliedPlan{late: late, whole: whole, ok: true}
}
