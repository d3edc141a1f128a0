package lore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/catalog"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec"
	"github.com/loredb/lore/internal/publish"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/plan/rules"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/sql"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

// optimizeForm is what an OPTIMIZE statement's WITH (…) asked for.
type optimizeForm struct {
	rowGroupRows, rowGroupBytes, fileBytes int64
}

// parseOptimizeOptions checks OPTIMIZE's WITH (…): positive integers only.
func parseOptimizeOptions(st *sql.Optimize) (optimizeForm, error) {
	var form optimizeForm
	seen := map[string]bool{}
	for _, o := range st.Options {
		key := strings.ToLower(o.Key)
		if seen[key] {
			return form, errs.At(errs.OptimizeInvalid, o.KeyPos, "OPTIMIZE option %q given twice", key)
		}
		seen[key] = true
		var dst *int64
		switch key {
		case "row_group_rows":
			dst = &form.rowGroupRows
		case "row_group_bytes":
			dst = &form.rowGroupBytes
		case "file_bytes":
			dst = &form.fileBytes
		default:
			return form, errs.At(errs.OptimizeInvalid, o.KeyPos,
				"unknown OPTIMIZE option %q (known: row_group_rows, row_group_bytes, file_bytes)", o.Key)
		}
		if o.Value.Kind != sql.ValueInt || o.Value.Int <= 0 {
			return form, errs.At(errs.OptimizeInvalid, o.Value.Pos, "OPTIMIZE option %s takes a positive integer", key)
		}
		*dst = o.Value.Int
	}
	return form, nil
}

// optimizeResult adds up one OPTIMIZE's rewrites.
type optimizeResult struct {
	filesReplaced, filesWritten, rows, rowGroups, bytesBefore, bytesAfter int64
	recovered                                                             bool
	// progress, when set, is told the rows written so far.
	progress func(done int64)
}

// optimizeHook, when set (by tests), is called after each batch OPTIMIZE writes.
var optimizeHook func()

// optimize runs OPTIMIZE (SPEC §8 "The layout").
func (e *Engine) optimize(ctx context.Context, st *sql.Optimize, s *settingsValues, qr *Record) (*Result, error) {
	form, err := parseOptimizeOptions(st)
	if err != nil {
		return nil, err
	}
	t, err := e.catalog.Table(ctx, st.Name)
	if err != nil {
		return nil, atStatement(err, st.Start)
	}
	dir, err := e.optimizable(t, st.Start)
	if err != nil {
		return nil, err
	}
	lock, err := publish.Acquire(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	var res optimizeResult
	if _, err = publish.Recover(dir); err != nil {
		return nil, err
	}
	// Kept on disk by whichever process recovered, until an OPTIMIZE succeeds.
	res.recovered = publish.Recovered(dir)
	l, store, err := e.resolveTable(ctx, t, source.AsOf{})
	if err != nil {
		return nil, err
	}
	for _, name := range t.ClusteredBy {
		if i := source.FieldIndex(l.Schema, name); i < 0 {
			return nil, errs.At(errs.OptimizeInvalid, st.Start, "clustered_by names %q, which table %s no longer has", name, t.Name)
		} else if l.Partition(i) >= 0 {
			return nil, errs.At(errs.OptimizeInvalid, st.Start,
				"table %s is clustered by partition column %q, whose values are in paths, not files; ALTER TABLE %s SET CLUSTERED BY (…) a file column",
				t.Name, name, types.QuoteIdent(t.Name))
		}
	}
	files, err := e.optimizeSelection(ctx, st, t, l, store)
	if err != nil {
		return nil, err
	}
	if s.MemoryLimit > e.opts.MemoryLimit {
		return nil, errs.New(errs.InvalidSetting, "memory_limit %d bytes is above the engine's memory limit of %d bytes: a statement may lower it, not raise it",
			s.MemoryLimit, e.opts.MemoryLimit)
	}
	budget := e.budget.Child(s.MemoryLimit)
	defer budget.Close()
	// The sort spills past the budget, so a table larger than memory is rewritten.
	env := &exec.Env{Budget: budget, Threads: e.opts.Threads, Store: store, IgnoreStatistics: true, Spill: e.spill.Statement(),
		SortBatchRows: parquet.LayoutPageRows}
	defer func() {
		qr.Execution.SpilledBytes, qr.Execution.SpillFiles = env.Spill.Bytes.Load(), env.Spill.Files.Load()
		env.Spill.Close()
	}()
	if p := progressOf(ctx); p != nil {
		env.OnScan = p.addScan
	}
	defer func() { qr.Scans = scanRecords(env) }()
	opts := parquet.LayoutOptions{
		RowGroupRows: form.rowGroupRows, RowGroupBytes: form.rowGroupBytes, FileBytes: form.fileBytes,
		ClusteredBy: t.ClusteredBy, Bloom: t.Bloom, CreatedBy: "lore " + loreVersion(),
	}
	selected := fileGroup{files: files}.listing(l)
	if e.opts.Progress != nil {
		total, _ := selected.Rows(ctx, store)
		what := "optimize " + t.Name
		res.progress = func(done int64) { e.opts.Progress(what, min(done, total), max(total, done)) }
	}
	var onBeam *Distributed
	var version source.Version
	if e.onBeam(s.Execution, selected.Bytes()) {
		if version, err = l.Version(); err != nil {
			return nil, err
		}
		onBeam = &Distributed{}
		defer func() { qr.Execution.Distributed = onBeam }()
	}
	memoryLimit := e.opts.MemoryLimit
	if s.MemoryLimit > 0 {
		memoryLimit = s.MemoryLimit
	}
	for gi, group := range byDirectory(dir, l, files) {
		if onBeam != nil {
			cur := l
			if gi > 0 {
				// The directories rewritten so far changed the table's version;
				// workers read the next one's files at the version it is at now.
				if cur, group, err = e.relist(ctx, t, l, group); err != nil {
					return nil, err
				}
				if version, err = cur.Version(); err != nil {
					return nil, err
				}
			}
			err = e.rewriteOnBeam(ctx, t, dir, cur, version, store, group, opts, memoryLimit, &res, onBeam)
		} else {
			err = e.rewrite(ctx, env, t, dir, l, group, opts, &res)
		}
		if err != nil {
			return nil, err
		}
	}
	if res.recovered {
		if err := publish.ClearRecovered(dir); err != nil {
			// The next OPTIMIZE reports it again; this one's rewrite stands.
			e.opts.Logger.Warn("cannot clear the recovered mark", "location", dir, "err", err)
		}
	}
	fields := []arrow.Field{
		{Name: "table", Type: types.String}, {Name: "files_replaced", Type: types.Int64},
		{Name: "files_written", Type: types.Int64}, {Name: "rows", Type: types.Int64},
		{Name: "row_groups", Type: types.Int64}, {Name: "bytes_before", Type: types.Int64},
		{Name: "bytes_after", Type: types.Int64}, {Name: "clustered_by", Type: types.String},
		{Name: "recovered", Type: types.Boolean},
	}
	row := []types.Value{
		types.StringValue(t.Name), types.IntValue(res.filesReplaced), types.IntValue(res.filesWritten),
		types.IntValue(res.rows), types.IntValue(res.rowGroups), types.IntValue(res.bytesBefore),
		types.IntValue(res.bytesAfter), types.StringValue(strings.Join(t.ClusteredBy, ", ")),
		types.BoolValue(res.recovered),
	}
	return valuesResult(fields, [][]types.Value{row}), nil
}

// optimizable checks that t is a table OPTIMIZE rewrites — a Parquet directory on
// local disk with clustering columns — and returns its directory.
func (e *Engine) optimizable(t catalog.Table, pos int) (string, error) {
	if t.Format != "parquet" {
		return "", errs.At(errs.OptimizeUnsupported, pos,
			"OPTIMIZE rewrites Parquet tables; %s is a %s table, whose files its own log or metadata owns", t.Name, t.Format)
	}
	if len(t.ClusteredBy) == 0 {
		return "", errs.At(errs.OptimizeInvalid, pos,
			"table %s has no clustering columns to sort by; set them with ALTER TABLE %s SET CLUSTERED BY (column, …)",
			t.Name, types.QuoteIdent(t.Name))
	}
	if storage.Scheme(t.Location) != "" || storage.HasGlob(t.Location) {
		return "", errs.At(errs.OptimizeUnsupported, pos,
			"OPTIMIZE rewrites a directory on local disk; %s is at %q", t.Name, t.Location)
	}
	fi, err := os.Stat(t.Location)
	if err != nil {
		return "", errs.New(errs.SourceUnavailable, "cannot read %s's location %q: %w", t.Name, t.Location, err)
	}
	if !fi.IsDir() {
		return "", errs.At(errs.OptimizeUnsupported, pos,
			"OPTIMIZE rewrites a directory of files; %s's location %q is one file", t.Name, t.Location)
	}
	return t.Location, nil
}

// optimizeSelection is the indexes of the files of l that OPTIMIZE rewrites: all of
// them, or with WHERE those that may hold a matching row — by partition values, then
// by footer statistics.
func (e *Engine) optimizeSelection(ctx context.Context, st *sql.Optimize, t catalog.Table, l *source.Listing, store storage.Store) ([]int, error) {
	all := make([]int, len(l.Files))
	for i := range all {
		all[i] = i
	}
	if st.WhereExpr == nil {
		return all, nil
	}
	prefix := "SELECT * FROM " + types.QuoteIdent(t.Name) + " WHERE "
	filters, err := e.pushedFilters(ctx, prefix+st.Where, l, store)
	if err != nil {
		if p := errs.PositionOf(err); p != errs.NoPosition {
			return nil, errs.At(errs.CodeOf(err), p-len(prefix)+st.WhereStart, "%s", err.Error())
		}
		return nil, err
	}
	p, err := l.Plan(ctx, store, source.ScanSpec{Filters: filters}, nil)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, m := range p.Morsels {
		if len(out) == 0 || out[len(out)-1] != m.File {
			out = append(out, m.File)
		}
	}
	return out, nil
}

// pushedFilters binds query (a SELECT of the table l lists) and returns the pruning
// predicates the optimizer pushes into its scan.
func (e *Engine) pushedFilters(ctx context.Context, query string, l *source.Listing, store storage.Store) ([]source.Predicate, error) {
	node, err := bindOver(ctx, query, &plan.TableRef{Location: l.Location, Listing: l, Rows: -1, Store: store})
	if err != nil {
		return nil, err
	}
	var filters []source.Predicate
	var walk func(plan.Node)
	walk = func(n plan.Node) {
		if sc, ok := n.(*plan.Scan); ok {
			filters = append(filters, sc.Filters...)
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(node)
	return filters, nil
}

// bindOver parses, binds and optimizes query, with every table it names resolved to
// ref.
func bindOver(ctx context.Context, query string, ref *plan.TableRef) (plan.Node, error) {
	stmts, err := sql.Parse(query)
	if err != nil {
		return nil, err
	}
	q, ok := stmts[0].(*sql.Query)
	if len(stmts) != 1 || !ok || q.Explain {
		return nil, errs.New(errs.OptimizeInvalid, "OPTIMIZE's WHERE must be one predicate")
	}
	node, err := plan.Bind(ctx, fixedCatalog{ref}, q.Select, plan.BindOptions{Paths: q.Paths, Dialect: q.Dialect,
		IgnoreNulls: q.IgnoreNulls, TryCasts: q.TryCasts, TimeTravel: q.TimeTravel, NoColumnsCall: q.NoColumnsCall})
	if err != nil {
		return nil, err
	}
	return rules.Optimize(node), nil
}

// fixedCatalog resolves every table name to one table: OPTIMIZE reads a listing of
// the files it rewrites as that table.
type fixedCatalog struct{ ref *plan.TableRef }

func (c fixedCatalog) Table(context.Context, string, source.AsOf) (*plan.TableRef, error) {
	return c.ref, nil
}

func (c fixedCatalog) Path(_ context.Context, location, _ string, _ source.AsOf) (*plan.TableRef, error) {
	return nil, errs.New(errs.OptimizeInvalid, "OPTIMIZE's WHERE cannot read %q", location)
}

// fileGroup is the selected files of one directory, rewritten together into it.
type fileGroup struct {
	rel   string // the directory, relative to the location ("." for the location)
	files []int
}

// byDirectory groups the selected files by their directory: a Hive partition's files
// are rewritten into files of the same partition.
func byDirectory(location string, l *source.Listing, files []int) []fileGroup {
	var out []fileGroup
	at := map[string]int{}
	for _, i := range files {
		rel := relPath(location, l.Files[i].Info.Path)
		d := filepath.Dir(rel)
		k, ok := at[d]
		if !ok {
			k = len(out)
			at[d] = k
			out = append(out, fileGroup{rel: d})
		}
		out[k].files = append(out[k].files, i)
	}
	return out
}

// relPath is p relative to location, '/'-separated.
func relPath(location, p string) string {
	rel, err := filepath.Rel(location, p)
	if err != nil {
		abs1, _ := filepath.Abs(location)
		abs2, _ := filepath.Abs(p)
		rel, _ = filepath.Rel(abs1, abs2)
	}
	return filepath.ToSlash(rel)
}

// rewrite sorts the rows of one directory's selected files, writes them as the
// layout says into a staging directory, and publishes them in place of those files.
func (e *Engine) rewrite(ctx context.Context, env *exec.Env, t catalog.Table, location string, l *source.Listing, g fileGroup, opts parquet.LayoutOptions, res *optimizeResult) error {
	sub := g.listing(l)
	ref := &plan.TableRef{Name: t.Name, Location: location, Listing: sub, Rows: -1, Store: env.Store}
	ref.Rows, _ = sub.Rows(ctx, env.Store)
	node, err := bindOver(ctx, sortQuery(t, l), ref)
	if err != nil {
		return err
	}
	return stageRewrite(location, l, g, res, func(stage *publish.Stage) ([]parquet.WrittenFile, error) {
		n, done := 0, res.rows
		w, err := parquet.NewLayoutWriter(plan.Schema(node), func() string {
			n++
			return filepath.Join(stage.Dir, fmt.Sprintf("%05d.parquet", n))
		}, opts)
		if err != nil {
			return nil, err
		}
		err = writeSorted(ctx, env, node, func(rec arrow.Record) error {
			if err := w.Write(rec); err != nil {
				return err
			}
			if done += rec.NumRows(); res.progress != nil {
				res.progress(done)
			}
			if optimizeHook != nil {
				optimizeHook()
			}
			return nil
		})
		if err == nil {
			// A statement canceled after its last batch was handed over publishes nothing.
			err = ctx.Err()
		}
		if err != nil {
			w.Abort()
			return nil, guarded(ctx, err)
		}
		return w.Close()
	})
}

// listing is l with only g's files.
func (g fileGroup) listing(l *source.Listing) *source.Listing {
	sub := *l
	sub.Files = make([]source.FileRef, 0, len(g.files))
	for _, i := range g.files {
		sub.Files = append(sub.Files, l.Files[i])
	}
	return &sub
}

// stageRewrite has write write the rows of g's files — of listing l of location —
// into a staging directory of its own, in the files it returns, in order, and
// publishes them in place of g's files (the staging directory is discarded when
// write fails).
func stageRewrite(location string, l *source.Listing, g fileGroup, res *optimizeResult, write func(*publish.Stage) ([]parquet.WrittenFile, error)) error {
	id := fmt.Sprintf("%d-%s", time.Now().UnixNano(), newID()[:8])
	stage, err := publish.NewStage(location, id)
	if err != nil {
		return err
	}
	published := false
	defer func() {
		if !published {
			stage.Discard()
		}
	}()
	written, err := write(stage)
	if err != nil {
		return err
	}
	var m publish.Manifest
	var rows int64
	for i, f := range written {
		final := fmt.Sprintf("part-%s-%05d.parquet", id, i+1)
		if g.rel != "." {
			final = g.rel + "/" + final
		}
		m.Add = append(m.Add, publish.Move{Staged: filepath.Base(f.Path), Final: final})
		rows += f.Rows
	}
	for _, i := range g.files {
		m.Remove = append(m.Remove, relPath(location, l.Files[i].Info.Path))
	}
	if err := stage.Publish(m); err != nil {
		return err
	}
	published = true
	for _, i := range g.files {
		res.bytesBefore += l.Files[i].Info.Size
	}
	for _, f := range written {
		res.rowGroups += int64(f.RowGroups)
		res.bytesAfter += f.Bytes
	}
	res.rows += rows
	res.filesReplaced += int64(len(g.files))
	res.filesWritten += int64(len(written))
	return nil
}

// relist lists table t again and finds in it the files of g, of the earlier
// listing l: one of them gone is SOURCE_CHANGED.
func (e *Engine) relist(ctx context.Context, t catalog.Table, l *source.Listing, g fileGroup) (*source.Listing, fileGroup, error) {
	now, _, err := e.resolveTable(ctx, t, source.AsOf{})
	if err != nil {
		return nil, g, err
	}
	at := make(map[string]int, len(now.Files))
	for i, f := range now.Files {
		at[f.Info.Path] = i
	}
	files := make([]int, len(g.files))
	for k, i := range g.files {
		j, ok := at[l.Files[i].Info.Path]
		if !ok || now.Files[j].Info.Size != l.Files[i].Info.Size {
			return nil, g, errs.New(errs.SourceChanged, "%q changed while OPTIMIZE ran", l.Files[i].Info.Path)
		}
		files[k] = j
	}
	g.files = files
	return now, g, nil
}

// writeSorted runs node and hands its batches to write in another goroutine, so
// that the sort makes the next batch while the writer encodes this one (the sink of
// exec.Stream owns its records: they may be kept past its return). At most
// writeAhead batches wait between them. The first error of either ends both.
func writeSorted(ctx context.Context, env *exec.Env, node plan.Node, write func(arrow.Record) error) error {
	const writeAhead = 2
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	batches := make(chan arrow.Record, writeAhead)
	written := make(chan error, 1)
	go func() {
		var err error
		for rec := range batches {
			if err == nil {
				if err = errs.Safe(func() error { return write(rec) })(); err != nil {
					cancel(err)
				}
			}
		}
		written <- err
	}()
	err := exec.Stream(ctx, env, node, func(rec arrow.Record) error {
		select {
		case batches <- rec:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	close(batches)
	if werr := <-written; werr != nil {
		return werr
	}
	return err
}

// sortQuery reads a table's file columns (not its partition columns, whose values
// the directory holds) sorted by its clustering columns, ascending with NULLs first
// as the footer's sorting_columns state.
func sortQuery(t catalog.Table, l *source.Listing) string {
	var cols []string
	for i, f := range l.Schema.Fields() {
		if l.Partition(i) < 0 {
			cols = append(cols, types.QuoteIdent(f.Name))
		}
	}
	keys := make([]string, len(t.ClusteredBy))
	for i, k := range t.ClusteredBy {
		keys[i] = types.QuoteIdent(k) + " ASC NULLS FIRST"
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM " + types.QuoteIdent(t.Name) + " ORDER BY " + strings.Join(keys, ", ")
}

// recoverLocation finishes or rolls back an interrupted rewrite of a local directory
// before its listing is read, unless a rewrite holds the location now (it is not
// interrupted: its owner is at work).
func (e *Engine) recoverLocation(location string) error {
	if storage.Scheme(location) != "" || storage.HasGlob(location) || !publish.Pending(location) {
		return nil
	}
	lock, err := publish.TryAcquire(location)
	if err != nil || lock == nil {
		return err
	}
	defer lock.Release()
	done, err := publish.Recover(location)
	if done {
		e.opts.Logger.Warn("finished or rolled back an interrupted OPTIMIZE", "location", location)
	}
	return err
}

// loreVersion is the version of Lore built into the program, "devel" when unknown.
func loreVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if info.Main.Path == "github.com/loredb/lore" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	if i := slices.IndexFunc(info.Deps, func(m *debug.Module) bool { return m.Path == "github.com/loredb/lore" }); i >= 0 {
		return info.Deps[i].Version
	}
	return "devel"
}
