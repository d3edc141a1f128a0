package lore

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/agg"
	"github.com/loredb/lore/catalog"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/sql"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/stats/profile"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

// analyzeForm is what an ANALYZE statement asked for.
type analyzeForm struct {
	sketches bool     // read every column once for the sketches
	distinct []string // columns to count exactly
}

// parseAnalyzeOptions checks ANALYZE's WITH (…) against the table's columns; every
// mistake is reported before any work runs.
func parseAnalyzeOptions(st *sql.Analyze, schema *arrow.Schema) (analyzeForm, error) {
	var form analyzeForm
	var distinctAll, hasDistinct, hasColumns bool
	seen := map[string]bool{}
	for _, o := range st.Options {
		key := strings.ToLower(o.Key)
		if seen[key] {
			return form, errs.At(errs.Analysis, o.KeyPos, "ANALYZE option %q given twice", key)
		}
		seen[key] = true
		switch key {
		case "sketches", "distinct":
			if o.Value.Kind != sql.ValueBool {
				return form, errs.At(errs.Analysis, o.Value.Pos, "ANALYZE option %s takes true or false", key)
			}
			if key == "sketches" {
				form.sketches = o.Value.Bool
			} else {
				hasDistinct, distinctAll = true, o.Value.Bool
			}
		case "columns":
			hasColumns = true
			if o.Value.Kind != sql.ValueArray || len(o.Value.Array) == 0 {
				return form, errs.At(errs.Analysis, o.Value.Pos, "ANALYZE option columns takes ARRAY['column', …]")
			}
			for _, v := range o.Value.Array {
				if v.Kind != sql.ValueString {
					return form, errs.At(errs.Analysis, v.Pos, "ANALYZE option columns takes column names as strings")
				}
				i := source.FieldIndex(schema, v.Str)
				if i < 0 {
					return form, errs.At(errs.Analysis, v.Pos, "table %s has no column %q", st.Name, v.Str)
				}
				name := schema.Field(i).Name
				if !slices.Contains(form.distinct, name) {
					form.distinct = append(form.distinct, name)
				}
			}
		default:
			return form, errs.At(errs.Analysis, o.KeyPos, "unknown ANALYZE option %q (known: sketches, distinct, columns)", o.Key)
		}
	}
	if hasDistinct && hasColumns {
		return form, errs.At(errs.Analysis, st.Start, "ANALYZE takes distinct or columns, not both")
	}
	if distinctAll {
		for _, f := range schema.Fields() {
			if distinctCountable(f.Type) {
				form.distinct = append(form.distinct, f.Name)
			}
		}
	}
	for _, name := range form.distinct {
		if f := schema.Field(source.FieldIndex(schema, name)); !distinctCountable(f.Type) {
			return form, errs.At(errs.Analysis, st.Start, "cannot count the distinct values of %q: type %s", name, types.Name(f.Type))
		}
	}
	return form, nil
}

// distinctCountable reports whether COUNT(DISTINCT) accepts the type.
func distinctCountable(dt arrow.DataType) bool {
	_, err := agg.ResultType(agg.Spec{Name: "count_distinct", ArgType: dt})
	return err == nil
}

// analyzeHook, when set (by tests), runs after ANALYZE's work and before it checks
// that the source did not move.
var analyzeHook func(table string)

// analyze runs ANALYZE (SPEC §4).
//
// Its query record has one scan: the files considered and the footers opened.
func (e *Engine) analyze(ctx context.Context, st *sql.Analyze, s *settingsValues, qr *Record) (*Result, error) {
	start := time.Now()
	t, err := e.catalog.Table(ctx, st.Name)
	if err != nil {
		return nil, atStatement(err, st.Start)
	}
	l, store, err := e.resolveTable(ctx, t, source.AsOf{})
	if err != nil {
		return nil, err
	}
	form, err := parseAnalyzeOptions(st, l.Schema)
	if err != nil {
		return nil, err
	}
	before, err := l.Version()
	if err != nil {
		return nil, err
	}
	prev, err := e.statistics(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	if prev != nil && (!prev.SourceVersion.Same(before) || prev.TableID != t.ID) {
		prev = nil // a record at another version carries nothing over
	}
	var counters source.Counters
	defer func() {
		qr.Scans = append(qr.Scans, ScanRecord{Table: t.Name, Location: t.Location, Snapshot: counters.Snapshot()})
	}()
	var full fullReader
	var fullRead types.Value = types.NullOf(types.String)
	switch {
	case form.sketches && e.onBeam(s.Execution, l.Bytes()):
		limit := e.opts.MemoryLimit
		if s.MemoryLimit > 0 {
			limit = s.MemoryLimit
		}
		full = func(ctx context.Context, l *source.Listing, rec *stats.Record) error {
			d, err := e.beamFullRead(ctx, t, l, rec, before, limit)
			if d != nil {
				qr.Execution.Distributed = d
				fullRead = types.StringValue(d.describe())
			}
			return err
		}
	case form.sketches:
		full = e.localFullRead(store, t)
		fullRead = types.StringValue("local")
	}
	rec, err := e.learn(ctx, store, t, l, before, full, form.distinct, prev, &counters)
	if err != nil {
		return nil, err
	}
	if analyzeHook != nil {
		analyzeHook(t.Name)
	}
	if err := e.checkUnmoved(ctx, t, before); err != nil {
		return nil, err
	}
	if err := e.putStatistics(ctx, t, rec); err != nil {
		return nil, err
	}
	fields := []arrow.Field{
		{Name: "table", Type: types.String}, {Name: "row_count", Type: types.Int64},
		{Name: "distinct_columns", Type: types.Int64}, {Name: "full_read", Type: types.String},
		{Name: "source_version", Type: types.String}, {Name: "elapsed_ms", Type: types.Float64},
	}
	elapsed := float64(time.Since(start).Microseconds()) / 1000
	row := []types.Value{
		types.StringValue(t.Name), types.IntValue(rec.Rows), types.IntValue(int64(len(form.distinct))),
		fullRead, types.StringValue(rec.SourceVersion.Label()), types.FloatValue(elapsed),
	}
	return valuesResult(fields, [][]types.Value{row}), nil
}

// fullReader upgrades rec, the footers' record of listing l, to depth full: one read
// of every column for sketches, exact bounds and zone sums.
type fullReader func(ctx context.Context, l *source.Listing, rec *stats.Record) error

// learn builds the record of table t at version v of listing l, read through store
// (the table's, as resolveTable gave it): the metadata (see metadataRecord), then,
// when full is not nil, full's read of every column, then exact distinct counts of
// the columns named. prev, a record at the
// same version or nil, contributes what stays true: a full read's results when this
// one is metadata-only, and exact counts not taken again. counters, when not nil,
// count the files considered and the footers opened.
func (e *Engine) learn(ctx context.Context, store storage.Store, t catalog.Table, l *source.Listing, v source.Version, full fullReader, distinct []string, prev *stats.Record, counters *source.Counters) (*stats.Record, error) {
	rec, opened, err := e.metadataRecord(ctx, store, l, v, full != nil)
	if err != nil {
		return nil, err
	}
	if counters != nil {
		counters.FilesConsidered.Add(int64(len(l.Files)))
		counters.FilesOpened.Add(int64(opened))
	}
	rec.TableID = t.ID
	switch {
	case full != nil:
		if err := full(ctx, l, rec); err != nil {
			return nil, err
		}
	case prev != nil && prev.Depth == stats.DepthFull:
		// prev is shared with running statements: copy what this one may change
		// (its detail loaded first, or the copy would have none).
		if err := prev.LoadDetail(); err != nil {
			return nil, err
		}
		carried := *prev
		carried.Columns = slices.Clone(prev.Columns)
		carried.ComputedAtMS = rec.ComputedAtMS
		rec = &carried
	}
	if prev != nil {
		keepExactCounts(rec, prev)
	}
	if len(distinct) > 0 {
		if err := e.countDistinct(ctx, t, rec, distinct); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// metadataRecord builds the metadata-depth record of listing l at version v. A Delta
// table whose every add action carries its statistics is learnt from the log alone,
// without opening a footer (SPEC §4): for a table of many files on object storage that
// is the difference between one log replay and a read per file. Any other table, and a
// Delta table before a full read (which opens every file anyway and needs the row
// groups as zones), is learnt from the footers. Iceberg keeps the footers too: its
// manifests' bounds need not be values of the data. opened is the number of footers
// used.
func (e *Engine) metadataRecord(ctx context.Context, store storage.Store, l *source.Listing, v source.Version, full bool) (rec *stats.Record, opened int, err error) {
	if !full && l.Lake != nil && l.Lake.Kind == source.KindDelta && stats.LakeStatsComplete(l) {
		rec, err = stats.FromLakeStats(l, v, time.Now())
		return rec, 0, err
	}
	footers, err := l.Footers(ctx, store)
	if err != nil {
		return nil, 0, err
	}
	rec, err = stats.FromFooters(l, footers, v, time.Now())
	return rec, len(footers), err
}

// localFullRead is the full read of table t in this process, through store: every
// column once, row groups in parallel, under the engine's memory limit.
func (e *Engine) localFullRead(store storage.Store, t catalog.Table) fullReader {
	return func(ctx context.Context, l *source.Listing, rec *stats.Record) error {
		opts := profile.Options{Threads: e.opts.Threads, MemoryLimit: e.opts.MemoryLimit}
		if e.opts.Progress != nil {
			var mu sync.Mutex
			what := "ANALYZE " + t.Name
			opts.Progress = func(done, total int64) {
				mu.Lock()
				defer mu.Unlock()
				e.opts.Progress(what, done, total)
			}
		}
		return profile.Full(ctx, store, l, rec, opts)
	}
}

// keepExactCounts carries exact distinct counts of an earlier record at the same
// version into rec, for the columns this ANALYZE does not count again.
func keepExactCounts(rec, prev *stats.Record) {
	for i := range rec.Columns {
		if rec.Columns[i].DistinctExact != nil {
			continue
		}
		if p := prev.Column(rec.Columns[i].Name); p != nil && p.DataType == rec.Columns[i].DataType {
			rec.Columns[i].DistinctExact = p.DistinctExact
		}
	}
}

// checkUnmoved fails with SOURCE_CHANGED when the table's source is no longer at
// version before.
func (e *Engine) checkUnmoved(ctx context.Context, t catalog.Table, before source.Version) error {
	l, _, err := e.resolveTable(ctx, t, source.AsOf{})
	if err != nil {
		return errs.New(errs.SourceChanged, "the source of %s changed during ANALYZE (%v); the previous statistics stay", t.Name, err)
	}
	after, err := l.Version()
	if err != nil || !after.Same(before) {
		return errs.New(errs.SourceChanged, "the source of %s changed during ANALYZE (from %s); the previous statistics stay", t.Name, before.Label())
	}
	return nil
}

// countDistinct counts the distinct values of cols exactly, through the engine's own
// statement path, at most four columns at a time.
func (e *Engine) countDistinct(ctx context.Context, t catalog.Table, rec *stats.Record, cols []string) error {
	const parallel = 4
	type result struct {
		col string
		n   int64
		err error
	}
	results := make(chan result, len(cols))
	sem := make(chan struct{}, parallel)
	for _, c := range cols {
		count := errs.Safe(func() error {
			text := "SELECT count(DISTINCT " + types.QuoteIdent(c) + ") FROM " + types.QuoteIdent(t.Name)
			res, err := e.Query(context.WithValue(ctx, noRefreshKey{}, true), text, map[string]string{"use_statistics": "false", "result_cache": "false"})
			if err != nil {
				return err
			}
			n, err := singleInt(res)
			results <- result{c, n, err}
			return nil
		})
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := count(); err != nil {
				results <- result{c, 0, err}
			}
		}()
	}
	var first error
	for range cols {
		r := <-results
		if r.err != nil {
			if first == nil {
				first = r.err
			}
			continue
		}
		if col := rec.Column(r.col); col != nil {
			n := r.n
			col.DistinctExact = &n
		}
	}
	return first
}

// singleInt reads a one-row, one-column BIGINT result.
func singleInt(res *Result) (int64, error) {
	for _, b := range res.Batches {
		if b.NumRows() > 0 && b.NumCols() == 1 {
			v := types.ValueAt(b.Column(0), 0)
			if !v.Null {
				return v.I, nil
			}
		}
	}
	return 0, errs.New(errs.Internal, "BUG: COUNT(DISTINCT) gave no row")
}

// showStats runs SHOW STATS FOR t: the record alone, never the data (SPEC §4).
func (e *Engine) showStats(ctx context.Context, st *sql.ShowStats) (*Result, error) {
	t, err := e.catalog.Table(ctx, st.Name)
	if err != nil {
		return nil, atStatement(err, st.Start)
	}
	rec, err := e.statistics(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, errs.At(errs.StatisticsUnavailable, st.Start, "no statistics for %s; run ANALYZE %s", st.Name, st.Name)
	}
	stale := true
	if l, _, err := e.resolveTable(ctx, t, source.AsOf{}); err == nil {
		if v, err := l.Version(); err == nil {
			stale = !rec.SourceVersion.Same(v)
		}
	}
	fields := []arrow.Field{
		{Name: "column_name", Type: types.String}, {Name: "data_type", Type: types.String},
		{Name: "data_size", Type: types.Float64}, {Name: "nulls_fraction", Type: types.Float64},
		{Name: "distinct_values_count", Type: types.Float64},
		{Name: "low_value", Type: types.String}, {Name: "high_value", Type: types.String},
		{Name: "row_count", Type: types.Float64},
		{Name: "analyzed_at", Type: types.TimestampTZ}, {Name: "source_version", Type: types.String},
		{Name: "stale", Type: types.Boolean},
	}
	common := []types.Value{
		{Type: types.TimestampTZ, I: rec.ComputedAtMS * 1000},
		types.StringValue(rec.SourceVersion.Label()),
		types.BoolValue(stale),
	}
	nullF := types.NullOf(types.Float64)
	nullS := types.NullOf(types.String)
	var rows [][]types.Value
	for _, c := range rec.Columns {
		nulls := nullF
		if c.NullCount != nil && rec.Rows > 0 {
			nulls = types.FloatValue(float64(*c.NullCount) / float64(rec.Rows))
		} else if c.NullCount != nil {
			nulls = types.FloatValue(0)
		}
		lo, hi := boundText(c.DataType, c.Min), boundText(c.DataType, c.Max)
		row := []types.Value{
			types.StringValue(c.Name), types.StringValue(c.DataType), types.FloatValue(float64(c.Bytes)),
			nulls, distinctValues(c), lo, hi, nullF,
		}
		rows = append(rows, append(row, common...))
	}
	summary := []types.Value{nullS, nullS, types.FloatValue(float64(rec.Bytes)), nullF, nullF, nullS, nullS,
		types.FloatValue(float64(rec.Rows))}
	rows = append(rows, append(summary, common...))
	return valuesResult(fields, rows), nil
}

// distinctValues is a column's distinct count: exact if on record, else the sketch's
// estimate, else NULL.
func distinctValues(c stats.Column) types.Value {
	if c.DistinctExact != nil {
		return types.FloatValue(float64(*c.DistinctExact))
	}
	if c.Distinct != nil {
		h := stats.NewHLL()
		if err := h.UnmarshalBinary(c.Distinct); err == nil {
			return types.FloatValue(math.Round(h.Estimate()))
		}
	}
	return types.NullOf(types.Float64)
}

// boundText renders a stored bound in the column's SQL text form, or NULL.
func boundText(dataType string, b []byte) types.Value {
	if b == nil {
		return types.NullOf(types.String)
	}
	dt, err := types.Parse(dataType)
	if err != nil {
		return types.NullOf(types.String)
	}
	codec, ok := stats.CodecFor(dt)
	if !ok {
		return types.NullOf(types.String)
	}
	v, err := codec.Decode(b)
	if err != nil {
		return types.NullOf(types.String)
	}
	return types.StringValue(v.String())
}

// atStatement places an error without a position at the statement's start.
func atStatement(err error, pos int) error {
	if errs.PositionOf(err) != errs.NoPosition {
		return err
	}
	return errs.At(errs.CodeOf(err), pos, "%s", err.Error())
}
