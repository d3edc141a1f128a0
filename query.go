package lore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/plan/rules"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/sql"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/types"
)

// runQuery binds, optimizes and runs a SELECT (or explains it). A SELECT that runs
// streams its result into sink and returns a nil Result; an EXPLAIN, a dry run and a
// cache hit return theirs whole.
func (e *Engine) runQuery(ctx context.Context, q *sql.Query, s *settingsValues, rec *Record, sink ResultSink) (*Result, error) {
	defer q.CheckUnchanged()
	view := newCatalogView(e)
	var nowUsed bool
	node, err := plan.Bind(ctx, view, q.Select, plan.BindOptions{Paths: q.Paths, Approximate: s.Approximate, Dialect: q.Dialect, IgnoreNulls: q.IgnoreNulls, TryCasts: q.TryCasts, TimeTravel: q.TimeTravel, NowUsed: &nowUsed, NoColumnsCall: q.NoColumnsCall})
	if err != nil {
		return nil, err
	}
	if err := e.checkUnread(ctx, view.boundLatest()); err != nil {
		return nil, err
	}
	// The tables are bound and their versions pinned: a result kept for exactly
	// these versions answers without running.
	key := ""
	if s.ResultCache && !q.Explain && !nowUsed {
		key = e.results.key(rec.SQL, rec.Settings, view.tables, view.paths)
	}
	if hit := e.results.get(key); hit != nil {
		rec.Execution = Execution{Mode: "cache", CachedFrom: hit.from, Approximate: hit.approximate}
		return &Result{Schema: hit.schema, Batches: hit.batches}, nil
	}
	labels := approximations(node)
	node, ans, err := rules.AnswerFromStatistics(node, s.UseStatistics)
	if err != nil {
		return nil, err
	}
	for _, l := range labels {
		if ans != nil && ans.ExactDistinct[l.call] {
			l.Sketch, l.Error = "exact count", 0
		}
		rec.Execution.Approximate = append(rec.Execution.Approximate, l.Approximation)
	}
	describeAnswer(&rec.Execution, ans)
	if ans == nil || !ans.Answered {
		var zones *rules.Zones
		if node, zones, err = rules.PlanZones(node, s.UseStatistics); err != nil {
			return nil, err
		}
		describeZones(&rec.Execution, zones)
	}
	node = rules.Optimize(node)
	if s.MemoryLimit > e.opts.MemoryLimit {
		return nil, errs.New(errs.InvalidSetting, "memory_limit %d bytes is above the engine's memory limit of %d bytes: a statement may lower it, not raise it",
			s.MemoryLimit, e.opts.MemoryLimit)
	}
	budget := e.budget.Child(s.MemoryLimit)
	defer budget.Close()
	env := &exec.Env{Budget: budget, Threads: e.opts.Threads, Store: e.store, IgnoreStatistics: !s.UseStatistics,
		LateMaterialisation: s.LateMaterialisation, Spill: e.spill.Statement()}
	defer func() {
		rec.Execution.SpilledBytes, rec.Execution.SpillFiles = env.Spill.Bytes.Load(), env.Spill.Files.Load()
		env.Spill.Close()
	}()
	if p := progressOf(ctx); p != nil {
		env.OnScan = p.addScan
	}
	if s.DryRun {
		return e.dryRun(ctx, env, node, rec)
	}
	if q.Explain && !q.Analyze {
		return explainResult(plan.Explain(node, estimates(node))), nil
	}
	if rec.Execution.Mode != "context" {
		// The statement reads data: it waits its turn. An answer from statistics
		// reads none and goes straight on.
		actx, release, err := e.admitted(ctx, rec)
		if err != nil {
			return nil, err
		}
		defer release()
		ctx = actx
	}
	var stop func()
	ctx, env.RowLimit, stop = s.Limits.rowBreaker(ctx)
	defer stop()
	if s.Execution == "beam" || e.beamAuto(s.Execution) {
		release := func() {}
		defer func() { release() }()
		if err := e.distribute(ctx, env, node, s, &rec.Execution, &release); err != nil {
			return nil, guarded(ctx, err)
		}
	}
	if q.Explain {
		return e.explainAnalyze(ctx, env, node, rec)
	}
	env.MaxResultRows, env.MaxResultBytes = s.Limits.MaxResultRows, s.Limits.MaxResultBytes
	env.KeepResult = keepsBatches(sink)
	// The result streams to sink; a copy is kept for the cache while it stays small
	// enough for the cache to take.
	copied := &cacheCopy{sink: sink, max: e.results.accepts()}
	if !env.KeepResult {
		copied.budget = budget
	}
	out := ResultSink(copied)
	if key == "" {
		out = sink
	}
	if err := out.Schema(plan.Schema(node)); err != nil {
		return nil, err
	}
	err = exec.Stream(ctx, env, node, out.Batch)
	rec.Scans = scanRecords(env)
	if err != nil {
		return nil, guarded(ctx, err)
	}
	if key != "" {
		e.results.put(key, copied.result(), rec.ID, rec.Execution.Approximate)
	}
	return nil, nil
}

// explainAnalyze runs node and explains it with what its scans read.
func (e *Engine) explainAnalyze(ctx context.Context, env *exec.Env, node plan.Node, rec *Record) (*Result, error) {
	start := time.Now()
	recs, err := exec.Run(ctx, env, node)
	rec.Scans = scanRecords(env)
	if err != nil {
		return nil, guarded(ctx, err)
	}
	ann := estimates(node)
	for _, sc := range env.Scans {
		c := sc.Counters.Snapshot()
		ann[sc.Node] += fmt.Sprintf(" files_pruned_by_partition=%d files_opened=%d row_groups: considered=%d pruned=%d answered=%d read=%d rows_scanned=%d compressed_bytes_read=%d",
			c.FilesPrunedByPartition, c.FilesOpened, c.RowGroupsConsidered, c.RowGroupsPruned, c.RowGroupsAnswered, c.RowGroupsRead, c.RowsScanned, c.CompressedBytesRead)
		ann[sc.Node] += lowerLayers(c)
	}
	text := plan.Explain(node, ann)
	text += fmt.Sprintf("\nexecution: %.3f ms, %d rows", float64(time.Since(start).Microseconds())/1000, countRows(recs))
	return explainResult(text), nil
}

// lowerLayers is what the bloom filters, the page index and the row filter of a scan
// did (SPEC §8), for EXPLAIN ANALYZE: only the layers that did something are named.
func lowerLayers(c source.Snapshot) string {
	var b strings.Builder
	if c.BloomFiltersRead > 0 {
		fmt.Fprintf(&b, " bloom: read=%d bytes=%d pruned=%d", c.BloomFiltersRead, c.BloomFilterBytesRead, c.RowGroupsPrunedByBloom)
	}
	if c.PagesSkipped > 0 || c.CompressedBytesSelected != c.CompressedBytesRead {
		fmt.Fprintf(&b, " pages_skipped=%d compressed_bytes_selected=%d", c.PagesSkipped, c.CompressedBytesSelected)
	}
	if c.RowFilterRowsExamined > 0 {
		fmt.Fprintf(&b, " row_filter: examined=%d admitted=%d", c.RowFilterRowsExamined, c.RowFilterRowsAdmitted)
	}
	if c.RowGroupsFilterProved > 0 {
		fmt.Fprintf(&b, " filter_proved=%d", c.RowGroupsFilterProved)
	}
	return b.String()
}

// estimates annotates the plan's scans, filters, joins and aggregates with their
// estimated rows, the figures that chose join order and sides.
func estimates(n plan.Node) map[plan.Node]string {
	ann := map[plan.Node]string{}
	plan.WalkNodes(n, func(n plan.Node) {
		switch n.(type) {
		case *plan.Scan, *plan.Filter, *plan.Join, *plan.Aggregate:
			ann[n] = fmt.Sprintf("est_rows=%.0f", rules.Estimate(n))
		}
	})
	return ann
}

func countRows(recs []arrow.Record) int64 {
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	return n
}

func explainResult(text string) *Result {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	rows := make([][]types.Value, len(lines))
	for i, l := range lines {
		rows[i] = []types.Value{types.StringValue(l)}
	}
	return valuesResult([]arrow.Field{{Name: "plan", Type: types.String}}, rows)
}

// label is the approximation label of one aggregate call.
type label struct {
	call *plan.AggCall
	Approximation
}

// approximations labels every estimate a plan computes (SPEC §7): the sketch and its
// stated error, whether the estimate is computed over rows or read from statistics.
func approximations(n plan.Node) []label {
	var out []label
	plan.WalkNodes(n, func(n plan.Node) {
		if a, ok := n.(*plan.Aggregate); ok {
			cols := a.Input.Columns()
			name := func(i int) string { return cols[i].Name }
			for i := range a.Aggs {
				c := &a.Aggs[i]
				fn := strings.ToUpper(c.Func)
				if c.Written != "" {
					fn = strings.ToUpper(c.Written)
				}
				switch c.Func {
				case "approx_count_distinct":
					out = append(out, label{c, Approximation{Function: fn, Argument: plan.Render(c.Arg, name),
						Sketch: stats.HLLName, Error: stats.HLLRelativeError, ErrorKind: "relative_standard_error"}})
				case "approx_percentile":
					out = append(out, label{c, Approximation{Function: fn, Argument: plan.Render(c.Arg, name),
						Sketch: stats.KLLName, Error: stats.KLLRankError, ErrorKind: "rank_error"}})
				}
			}
		}
	})
	return out
}

// describeAnswer records how statistics took part in a statement (SPEC §7): the mode,
// the detail, and both source versions when a record answered or would have.
func describeAnswer(x *Execution, ans *rules.Answer) {
	if ans == nil {
		return
	}
	label := ans.Ref.Stats.SourceVersion.Label()
	detail := "statistics at " + label
	if len(ans.Sketches) > 0 {
		detail += " (" + strings.Join(ans.Sketches, ", ") + ")"
	}
	recordVersions(x, ans.Ref)
	if ans.Answered {
		x.Mode, x.Detail = "context", detail
		return
	}
	x.Detail = "read " + ans.Ref.Name + "; statistics bypassed"
}

// describeZones records what the zone planner did: with no zone left to read the
// statement was answered from statistics.
func describeZones(x *Execution, z *rules.Zones) {
	if z == nil {
		return
	}
	label := z.Ref.Stats.SourceVersion.Label()
	unit := z.Ref.Stats.ZoneUnit()
	recordVersions(x, z.Ref)
	total := z.None + z.Answered + z.Read
	if z.Bypassed {
		x.Detail = fmt.Sprintf("read %d %s that statistics at %s would have answered or skipped; statistics bypassed", z.None+z.Answered, unit, label)
		return
	}
	if z.Read == 0 {
		x.Mode = "context"
		x.Detail = fmt.Sprintf("statistics at %s (%d %s: %d answered, %d skipped)", label, total, unit, z.Answered, z.None)
		return
	}
	x.Detail = fmt.Sprintf("read %d of %d %s; %d answered and %d skipped by statistics at %s", z.Read, total, unit, z.Answered, z.None, label)
}

// recordVersions records the version of the statistics that took part and the
// version the statement is pinned to.
func recordVersions(x *Execution, ref *plan.TableRef) {
	x.SourceVersion = versionJSON(ref.Stats.SourceVersion)
	x.CurrentSourceVersion = versionJSON(ref.Version)
}

func versionJSON(v source.Version) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("BUG: cannot encode a source version: %v", err))
	}
	return b
}
