package dist

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec"
	"github.com/loredb/lore/internal/wire"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// A distributed OPTIMIZE sorts the rows of one directory's files on many workers
// and writes them in the layout. The coordinator hands the workers a sort (a
// SortSpec) and the zones of the files it rewrites; then
//
//  1. every zone's clustering key is sampled (SampleZone);
//  2. the samples, gathered, choose the keys that cut the rows into ranges of
//     about equal rows (Splitters);
//  3. every zone is read, sorted and cut at those keys (RouteZone), and the runner
//     gathers each range's pieces on one worker;
//  4. which sorts them and writes them into the staging directory (WriteRange).
//
// Every key of a range is at most every key of the next, so the files of range 0,
// then 1, …, each range's in the order written, hold the rows in clustering order:
// the coordinator publishes them in that order.

// A SortSpec is the sort of a distributed OPTIMIZE.
type SortSpec struct {
	// Columns are the columns written, by name, in order: the table's columns its
	// files hold (its partition columns are in the directory's path). Keys are the
	// indexes in Columns of the clustering columns, sorted by in turn, ascending
	// with NULLs first.
	Columns []string
	Keys    []int
	// Ranges is how many ranges the rows are cut into, each sorted and written by
	// one worker; Samples how many keys each zone gives to choose the cuts.
	Ranges, Samples int
	// Stage is the directory the files are written into, Layout how (its
	// ClusteredBy names the key columns).
	Stage  string
	Layout parquet.LayoutOptions
}

// The byte form of a sort:
//
//	"LSO" sortVersion   four bytes
//	columns             uvarint count, then each name, length-prefixed
//	keys                uvarint count, then each index (uvarint)
//	ranges, samples     uvarints
//	stage               length-prefixed
//	layout              row_group_rows, row_group_bytes, file_bytes (uvarints);
//	                    clustered_by, bloom (counts, then names); created_by;
//	                    key_value (uvarint count, then key and value, by key)
const sortVersion = 1

var sortForm = wire.Form{Magic: [3]byte{'L', 'S', 'O'}, Version: sortVersion, What: "a sort"}

// maxRanges bounds the ranges and samples a sort may ask for.
const maxRanges = 1 << 20

// MarshalBinary returns the sort's byte form.
func (s *SortSpec) MarshalBinary() ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	w := sortForm.Writer()
	names := func(ns []string) {
		w.Uvarint(uint64(len(ns)))
		for _, n := range ns {
			w.Bytes([]byte(n))
		}
	}
	names(s.Columns)
	w.Uvarint(uint64(len(s.Keys)))
	for _, k := range s.Keys {
		w.Uvarint(uint64(k))
	}
	w.Uvarint(uint64(s.Ranges))
	w.Uvarint(uint64(s.Samples))
	w.Bytes([]byte(s.Stage))
	l := s.Layout
	w.Uvarint(uint64(max(0, l.RowGroupRows)))
	w.Uvarint(uint64(max(0, l.RowGroupBytes)))
	w.Uvarint(uint64(max(0, l.FileBytes)))
	names(l.ClusteredBy)
	names(l.Bloom)
	w.Bytes([]byte(l.CreatedBy))
	keys := make([]string, 0, len(l.KeyValue))
	for k := range l.KeyValue {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	w.Uvarint(uint64(len(keys)))
	for _, k := range keys {
		w.Bytes([]byte(k))
		w.Bytes([]byte(l.KeyValue[k]))
	}
	return w.B, nil
}

// UnmarshalSortSpec reads a sort's byte form; bytes that are not one are
// CORRUPT_SOURCE.
func UnmarshalSortSpec(b []byte) (*SortSpec, error) {
	r, err := sortForm.Reader(b)
	if err != nil {
		return nil, err
	}
	names := func() []string {
		out := make([]string, r.Count(1))
		for i := range out {
			out[i] = string(r.Bytes())
		}
		return out
	}
	s := &SortSpec{Columns: names()}
	s.Keys = make([]int, r.Count(1))
	for i := range s.Keys {
		s.Keys[i] = int(min(r.Uvarint(), maxRanges))
	}
	s.Ranges, s.Samples = int(min(r.Uvarint(), maxRanges+1)), int(min(r.Uvarint(), maxRanges+1))
	s.Stage = string(r.Bytes())
	s.Layout.RowGroupRows = int64(min(r.Uvarint(), 1<<62))
	s.Layout.RowGroupBytes = int64(min(r.Uvarint(), 1<<62))
	s.Layout.FileBytes = int64(min(r.Uvarint(), 1<<62))
	s.Layout.ClusteredBy = names()
	s.Layout.Bloom = names()
	s.Layout.CreatedBy = string(r.Bytes())
	if n := r.Count(2); n > 0 {
		s.Layout.KeyValue = make(map[string]string, n)
		for range n {
			k := string(r.Bytes())
			s.Layout.KeyValue[k] = string(r.Bytes())
		}
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	if err := s.check(); err != nil {
		return nil, errs.New(errs.CorruptSource, "%v", err)
	}
	return s, nil
}

// check reports a sort no worker could run.
func (s *SortSpec) check() error {
	switch {
	case len(s.Columns) == 0 || len(s.Keys) == 0:
		return errs.New(errs.Internal, "a sort of no columns, or by none")
	case s.Ranges < 1 || s.Ranges > maxRanges || s.Samples < 1 || s.Samples > maxRanges:
		return errs.New(errs.Internal, "a sort into %d ranges with %d samples a zone", s.Ranges, s.Samples)
	case s.Stage == "":
		return errs.New(errs.Internal, "a sort with nowhere to write")
	case len(s.Layout.ClusteredBy) != len(s.Keys):
		return errs.New(errs.Internal, "a sort by %d keys clustered by %d columns", len(s.Keys), len(s.Layout.ClusteredBy))
	}
	for i, k := range s.Keys {
		if k >= len(s.Columns) || s.Columns[k] != s.Layout.ClusteredBy[i] {
			return errs.New(errs.Internal, "a sort's key %d is not its clustering column %q", i, s.Layout.ClusteredBy[i])
		}
	}
	return nil
}

// readZone reads the columns cols (indexes into the sort's Columns) of the zone z
// describes, held to its version as ReadZone holds it — sorted by the keys when
// sorted is set, which must then all be among cols — and hands each record to each.
// The records have the columns' names and types.
func (s *SortSpec) readZone(ctx context.Context, z *source.ZoneRef, cols []int, sorted bool, memoryLimit int64, each func(arrow.Record) error) error {
	return readChecked(ctx, z, func(l *source.Listing, store storage.Store, fi int) error {
		fields := l.Schema.Fields()
		scan := &plan.Scan{
			Ref:      &plan.TableRef{Location: z.Table.Location, Listing: l, Rows: -1, Version: z.Table.Version, Store: store},
			Cols:     make([]plan.Column, len(fields)),
			Required: make([]bool, len(fields)),
			Zones:    &plan.ZoneSkip{Only: map[plan.ZoneID]bool{{File: fi, RowGroup: z.RowGroup}: true}},
		}
		for i, f := range fields {
			scan.Cols[i] = plan.Column{Name: f.Name, Type: f.Type}
		}
		project := &plan.Project{Input: scan}
		for _, c := range cols {
			name := s.Columns[c]
			i := source.FieldIndex(l.Schema, name)
			if i < 0 || l.Partition(i) >= 0 {
				return errs.New(errs.SourceChanged, "the files of %q have no column %q", z.Table.Location, name)
			}
			scan.Required[i] = true
			project.Exprs = append(project.Exprs, &plan.ColRef{Idx: i, T: fields[i].Type, Name: name})
			project.Cols = append(project.Cols, plan.Column{Name: name, Type: fields[i].Type})
		}
		var node plan.Node = project
		if sorted {
			node = &plan.Sort{Input: project, Keys: s.sortKeys(project.Cols, cols)}
		}
		env := &exec.Env{Threads: runtime.GOMAXPROCS(0), Store: store}
		if memoryLimit > 0 {
			env.Budget = exec.NewBudget(memoryLimit)
		}
		return exec.Stream(ctx, env, node, each)
	})
}

// sortKeys are the sort's keys over the columns cols (indexes into Columns) of a
// node of columns out.
func (s *SortSpec) sortKeys(out []plan.Column, cols []int) []plan.SortKey {
	keys := make([]plan.SortKey, len(s.Keys))
	for i, k := range s.Keys {
		j := slices.Index(cols, k)
		keys[i] = plan.SortKey{E: &plan.ColRef{Idx: j, T: out[j].Type, Name: out[j].Name}, NullsFirst: true}
	}
	return keys
}

// guarded runs f, a panic in it its INTERNAL error.
func guarded(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errs.FromPanic(r, debug.Stack())
		}
	}()
	return f()
}

// SampleZone draws the sort's Samples keys from the zone z describes (all of them
// when it has fewer rows), evenly spaced over its rows, and returns them as an Arrow
// IPC stream of the key columns.
func SampleZone(ctx context.Context, spec *SortSpec, z *source.ZoneRef, memoryLimit int64) ([]byte, error) {
	var out []byte
	err := guarded(func() error {
		var recs []arrow.Record
		var schema *arrow.Schema
		err := spec.readZone(ctx, z, spec.Keys, false, memoryLimit, func(r arrow.Record) error {
			schema = r.Schema()
			recs = append(recs, r)
			return nil
		})
		if err != nil {
			return err
		}
		if schema == nil {
			// No row: the keys' schema alone, from no record.
			out, err = ipcStream(keySchema(spec, nil))
			return err
		}
		cols, n, err := concatRecords(schema, recs)
		if err != nil {
			return err
		}
		out, err = takeRows(schema, cols, evenly(n, spec.Samples))
		return err
	})
	return out, err
}

// keySchema is the schema of a sort's key columns as sampled, their types those of
// fields (nil: NULL columns, for a zone of no rows).
func keySchema(spec *SortSpec, fields []arrow.Field) *arrow.Schema {
	if fields != nil {
		return arrow.NewSchema(fields, nil)
	}
	out := make([]arrow.Field, len(spec.Keys))
	for i, k := range spec.Keys {
		out[i] = arrow.Field{Name: spec.Columns[k], Type: arrow.Null, Nullable: true}
	}
	return arrow.NewSchema(out, nil)
}

// evenly picks k of n row positions, evenly spaced (all n when k ≥ n).
func evenly(n, k int) []int32 {
	if k >= n {
		k = n
	}
	out := make([]int32, k)
	for i := range out {
		out[i] = int32((int64(2*i+1) * int64(n)) / int64(2*k))
	}
	return out
}

// concatRecords is recs, of schema schema, as one array per column and their rows.
func concatRecords(schema *arrow.Schema, recs []arrow.Record) ([]arrow.Array, int, error) {
	cols := make([]arrow.Array, schema.NumFields())
	n := 0
	for _, r := range recs {
		n += int(r.NumRows())
	}
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		if len(parts) == 1 {
			cols[i] = parts[0]
			continue
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, 0, errs.New(errs.Internal, "gathering column %q: %w", schema.Field(i).Name, err)
		}
		cols[i] = c
	}
	return cols, n, nil
}

// Splitters reads every zone's sample (SampleZone's streams) and returns the keys
// that cut them into the sort's Ranges ranges of about equal rows — at most
// Ranges-1 keys, ascending, as an Arrow IPC stream of the key columns. A range
// holds the rows whose key is above the cut before it and at most the cut after
// it.
func Splitters(spec *SortSpec, samples [][]byte) ([]byte, error) {
	var out []byte
	err := guarded(func() error {
		var recs []arrow.Record
		var fields []arrow.Field
		for _, b := range samples {
			rs, err := readStream(b, len(spec.Keys), "a sample")
			if err != nil {
				return err
			}
			for _, r := range rs {
				if r.NumRows() == 0 {
					continue
				}
				if fields == nil {
					fields = r.Schema().Fields()
				} else if !r.Schema().Equal(arrow.NewSchema(fields, nil)) {
					return errs.New(errs.CorruptSource, "samples of two schemas: %s and %s", r.Schema(), arrow.NewSchema(fields, nil))
				}
				recs = append(recs, r)
			}
		}
		schema := keySchema(spec, fields)
		if len(recs) == 0 {
			var err error
			out, err = ipcStream(schema)
			return err
		}
		cols, n, err := concatRecords(schema, recs)
		if err != nil {
			return err
		}
		keys := rowKeys(cols, n)
		order := make([]int32, n)
		for i := range order {
			order[i] = int32(i)
		}
		sort.SliceStable(order, func(a, b int) bool { return parquet.CompareKeys(keys[order[a]], keys[order[b]]) < 0 })
		var cuts []int32
		for i := 1; i < spec.Ranges; i++ {
			cuts = append(cuts, order[min(n-1, i*n/spec.Ranges)])
		}
		out, err = takeRows(schema, cols, cuts)
		return err
	})
	return out, err
}

// takeRows is the rows rows of cols, of schema schema, as an Arrow IPC stream.
func takeRows(schema *arrow.Schema, cols []arrow.Array, rows []int32) ([]byte, error) {
	picked := make([]arrow.Array, len(cols))
	for i, c := range cols {
		picked[i] = vector.Take(c, rows)
	}
	return ipcStream(schema, array.NewRecord(schema, picked, int64(len(rows))))
}

// rowKeys is the key of every row of cols.
func rowKeys(cols []arrow.Array, n int) [][]types.Value {
	keys := make([][]types.Value, n)
	for r := range keys {
		keys[r] = make([]types.Value, len(cols))
		for i, c := range cols {
			keys[r][i] = types.ValueAt(c, r)
		}
	}
	return keys
}

// readStream reads the records of the IPC stream b, each of cols columns (any
// number when cols < 0); what is not one is CORRUPT_SOURCE.
func readStream(b []byte, cols int, what string) ([]arrow.Record, error) {
	rd, err := newIPCReader(b)
	if err != nil {
		return nil, errs.New(errs.CorruptSource, "%s cannot be read: %w", what, err)
	}
	defer rd.Release()
	if cols >= 0 && rd.Schema().NumFields() != cols {
		return nil, errs.New(errs.CorruptSource, "%s has %d columns, not %d", what, rd.Schema().NumFields(), cols)
	}
	var out []arrow.Record
	for rd.Next() {
		r := rd.Record()
		for i, c := range r.Columns() {
			if err := touchValues(c); err != nil {
				return nil, errs.New(errs.CorruptSource, "%s: column %d cannot be read: %v", what, i, err)
			}
		}
		r.Retain()
		out = append(out, r)
	}
	if err := rd.Err(); err != nil {
		return nil, errs.New(errs.CorruptSource, "%s cannot be read: %w", what, err)
	}
	return out, nil
}

// A RangePiece is the rows of one zone that fall in one range, sorted, as an Arrow
// IPC stream of the sort's columns.
type RangePiece struct {
	Range int
	Rows  []byte
}

// RouteZone reads the zone z describes, sorts its rows and cuts them at splitters
// (Splitters' stream): it returns a piece for every range that holds some of them,
// in range order.
func RouteZone(ctx context.Context, spec *SortSpec, z *source.ZoneRef, splitters []byte, memoryLimit int64) ([]RangePiece, error) {
	var out []RangePiece
	err := guarded(func() error {
		cuts, err := readCuts(spec, splitters)
		if err != nil {
			return err
		}
		all := make([]int, len(spec.Columns))
		for i := range all {
			all[i] = i
		}
		var schema *arrow.Schema
		pieces := map[int][]arrow.Record{}
		r := 0 // the range of the rows at hand: they come in key order
		keyCols := make([]arrow.Array, len(spec.Keys))
		key := make([]types.Value, len(spec.Keys))
		err = spec.readZone(ctx, z, all, true, memoryLimit, func(rec arrow.Record) error {
			schema = rec.Schema()
			for i, k := range spec.Keys {
				keyCols[i] = rec.Column(k)
			}
			n := int(rec.NumRows())
			from := 0
			for from < n {
				to := n
				if r < len(cuts) {
					// The first row past this range's cut.
					to = from + sort.Search(n-from, func(j int) bool {
						for i, c := range keyCols {
							key[i] = types.ValueAt(c, from+j)
						}
						return parquet.CompareKeys(key, cuts[r]) > 0
					})
				}
				if to > from {
					pieces[r] = append(pieces[r], rec.NewSlice(int64(from), int64(to)))
				}
				if to < n {
					r++
				}
				from = to
			}
			return nil
		})
		if err != nil {
			return err
		}
		ranges := make([]int, 0, len(pieces))
		for k := range pieces {
			ranges = append(ranges, k)
		}
		slices.Sort(ranges)
		for _, k := range ranges {
			b, err := ipcStream(schema, pieces[k]...)
			if err != nil {
				return errs.New(errs.Internal, "writing the rows of range %d: %w", k, err)
			}
			out = append(out, RangePiece{Range: k, Rows: b})
		}
		return nil
	})
	return out, err
}

// readCuts reads Splitters' stream: the cut keys, ascending.
func readCuts(spec *SortSpec, splitters []byte) ([][]types.Value, error) {
	recs, err := readStream(splitters, len(spec.Keys), "the splitters")
	if err != nil {
		return nil, err
	}
	var cuts [][]types.Value
	for _, r := range recs {
		cuts = append(cuts, rowKeys(r.Columns(), int(r.NumRows()))...)
	}
	if len(cuts) >= spec.Ranges {
		return nil, errs.New(errs.CorruptSource, "%d splitters for %d ranges", len(cuts), spec.Ranges)
	}
	return cuts, nil
}

// RangeFileName is the name in the staging directory of file n (from 1) of range r.
func RangeFileName(r, n int) string { return fmt.Sprintf("r%07d-%05d.parquet", r, n) }

// WriteRange sorts the rows of range r — its pieces (RouteZone's), handed over one
// at a time by next (nil after the last) — and writes them into the sort's staging
// directory as its layout says, in files named RangeFileName(r, 1), (r, 2), …; it
// returns the files written. memoryLimit bounds what the sort holds (0: no limit);
// past it the sort spills under the system's temporary directory.
func WriteRange(ctx context.Context, spec *SortSpec, r int, next func() ([]byte, bool), memoryLimit int64) ([]parquet.WrittenFile, error) {
	var out []parquet.WrittenFile
	err := guarded(func() error {
		var pending []arrow.Record
		var schema *arrow.Schema
		// The first piece gives the schema every other must have.
		pull := func() error {
			for len(pending) == 0 {
				b, ok := next()
				if !ok {
					return nil
				}
				recs, err := readStream(b, len(spec.Columns), "a range's rows")
				if err != nil {
					return err
				}
				for _, rec := range recs {
					if schema == nil {
						schema = rec.Schema()
					} else if !rec.Schema().Equal(schema) {
						return errs.New(errs.CorruptSource, "a range's rows of two schemas: %s and %s", rec.Schema(), schema)
					}
					pending = append(pending, rec)
				}
			}
			return nil
		}
		if err := pull(); err != nil || schema == nil {
			return err
		}
		for i, f := range schema.Fields() {
			if f.Name != spec.Columns[i] {
				return errs.New(errs.CorruptSource, "a range's column %d is %q, not %q", i, f.Name, spec.Columns[i])
			}
		}
		in := &plan.Batches{Cols: make([]plan.Column, schema.NumFields()), Next: func(context.Context) (arrow.Record, error) {
			if err := pull(); err != nil || len(pending) == 0 {
				return nil, err
			}
			rec := pending[0]
			pending = pending[1:]
			return rec, nil
		}}
		all := make([]int, len(spec.Columns))
		for i, f := range schema.Fields() {
			in.Cols[i] = plan.Column{Name: f.Name, Type: f.Type}
			all[i] = i
		}
		node := &plan.Sort{Input: in, Keys: spec.sortKeys(in.Cols, all)}
		tmp, err := os.MkdirTemp("", "lore-sort-")
		if err != nil {
			return errs.New(errs.Internal, "cannot make a directory to spill into: %w", err)
		}
		defer os.RemoveAll(tmp)
		env := &exec.Env{Threads: runtime.GOMAXPROCS(0), SortBatchRows: parquet.LayoutPageRows,
			Spill: exec.NewSpillSpace(tmp, workerSpillLimit).Statement()}
		defer env.Spill.Close()
		if memoryLimit > 0 {
			env.Budget = exec.NewBudget(memoryLimit)
		}
		n := 0
		w, err := parquet.NewLayoutWriter(plan.Schema(node), func() string {
			n++
			return filepath.Join(spec.Stage, RangeFileName(r, n))
		}, spec.Layout)
		if err != nil {
			return err
		}
		if err := exec.Stream(ctx, env, node, w.Write); err != nil {
			w.Abort()
			return err
		}
		out, err = w.Close()
		return err
	})
	return out, err
}

// workerSpillLimit bounds what a worker's sort spills.
const workerSpillLimit = 256 << 30
