package stats

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

// DocumentVersion is the version of the statistics object's JSON document
// (docs/format/statistics.md). A document of another version is refused, never guessed
// at, with one exception: version 1 is version 2 without zones of whole files, and is
// read as such. Builds that know only version 1 refuse version 2, whose zones they
// would take for row groups.
const DocumentVersion = 2

// Depths of a record: what ANALYZE read to make it.
const (
	DepthMetadata = "metadata" // footers only
	DepthFull     = "full"     // every column read once for the sketches
)

// PerFileLimit is the most files a record lists one by one; a table with more keeps
// an empty list with PerFileComplete false.
const PerFileLimit = 10_000

// Record is the statistics object of one table (SPEC §3): what ANALYZE learnt of the
// table at one source version. Bounds are codec bytes (CodecFor of the column's type).
// A record is immutable once stored; a refresh writes a new one.
type Record struct {
	DocumentVersion   int            `json:"document_version"`
	TableID           int64          `json:"table_id"`
	SourceVersion     source.Version `json:"source_version"`
	ComputedAtMS      int64          `json:"computed_at_ms"`
	Depth             string         `json:"depth"`
	Format            string         `json:"format"`
	Location          string         `json:"location"`
	Rows              int64          `json:"rows"`
	Bytes             int64          `json:"bytes"`
	Files             int            `json:"files"`
	RowGroups         int            `json:"row_groups"`         // of the footers read; 0 for files known from lake statistics alone
	UncompressedBytes int64          `json:"uncompressed_bytes"` // as the footers read state; lake statistics state none
	LastModifiedMS    int64          `json:"last_modified_ms"`
	PartitionColumns  []string       `json:"partition_columns"`
	Columns           []Column       `json:"columns"`
	PerFile           []File         `json:"per_file"`
	PerFileComplete   bool           `json:"per_file_complete"`
	Zones             []Zone         `json:"zones"`
}

// WholeFile is the RowGroup of a zone that is a whole file.
const WholeFile = -1

// ZoneUnit names what the record's zones are, for messages: "row groups", "files",
// or "zones" when it has both kinds.
func (r *Record) ZoneUnit() string {
	files, groups := false, false
	for _, z := range r.Zones {
		if z.RowGroup == WholeFile {
			files = true
		} else {
			groups = true
		}
	}
	switch {
	case files && groups:
		return "zones"
	case files:
		return "files"
	}
	return "row groups"
}

// Column is what the record knows of one column over the whole table.
type Column struct {
	Name     string `json:"name"`
	DataType string `json:"data_type"` // types.Name of the column's type
	// NullCount is nil when not recorded (never 0 for "unknown").
	NullCount *int64 `json:"null_count,omitempty"`
	// Min and Max are nil when the column has no bounds (no order, no statistics, or
	// no non-null value); BoundsExact says both are values that occur in the column,
	// not just bounds on them (a truncated string bound is not exact).
	Min         []byte `json:"min"`
	Max         []byte `json:"max"`
	BoundsExact bool   `json:"bounds_exact"`
	// HasNaN says a floating column holds NaN, which is never a bound.
	HasNaN bool  `json:"has_nan,omitempty"`
	Bytes  int64 `json:"bytes"` // compressed bytes of the column's chunks (0 when only lake statistics were read)
	// Distinct is an HLL sketch (docs/format/sketches.md), after a full read.
	Distinct []byte `json:"distinct,omitempty"`
	// DistinctExact is COUNT(DISTINCT col), after ANALYZE … distinct or columns.
	DistinctExact *int64 `json:"distinct_exact,omitempty"`
	// Quantiles is a KLL sketch, after a full read, for numeric and temporal columns.
	Quantiles []byte `json:"quantiles,omitempty"`
}

// Partials are the column's facts that a zone column also has: null count, bounds,
// exactness and NaN.
func (c *Column) Partials() ZoneColumn {
	return ZoneColumn{NullCount: c.NullCount, Min: c.Min, Max: c.Max, BoundsExact: c.BoundsExact, HasNaN: c.HasNaN}
}

// SetPartials sets the column's null count, bounds, exactness and NaN from z.
func (c *Column) SetPartials(z ZoneColumn) {
	c.NullCount, c.Min, c.Max, c.BoundsExact, c.HasNaN = z.NullCount, z.Min, z.Max, z.BoundsExact, z.HasNaN
}

// File is one data file of the record.
type File struct {
	Path           string `json:"path"`
	Rows           int64  `json:"rows"`
	Bytes          int64  `json:"bytes"`
	LastModifiedMS int64  `json:"last_modified_ms"`
	// Marker is the file's change marker (source.ChangeMarker), hex-encoded: a file
	// with the same path, size and marker is the same file.
	Marker  string       `json:"marker"`
	Columns []ZoneColumn `json:"columns"` // indexed like Record.Columns
}

// Zone is one row group, or one whole file: the finest set of rows with stored
// partials (DESIGN §3). A record built from footers has a zone per row group; one
// built from a lake's per-file statistics (FromLakeStats) knows nothing finer than the
// file and has one zone per file, whose RowGroup is WholeFile. A folded record may
// have both kinds, but never both for one file. A consumer that settles row group g of
// file f from the record looks for the zone {f, g}, then for {f, WholeFile}.
type Zone struct {
	File     int          `json:"file"`      // index into the listing's files, in path order
	RowGroup int          `json:"row_group"` // WholeFile for a zone of a whole file
	Rows     int64        `json:"rows"`
	Columns  []ZoneColumn `json:"columns"` // indexed like Record.Columns
}

// ZoneColumn is one column's partials over a zone (a file or a row group).
type ZoneColumn struct {
	NullCount   *int64 `json:"null_count,omitempty"`
	Min         []byte `json:"min"`
	Max         []byte `json:"max"`
	BoundsExact bool   `json:"bounds_exact"`
	HasNaN      bool   `json:"has_nan,omitempty"`
	// Sum is the exact sum of the zone's non-null values as decimal text, recorded by
	// a full read of a numeric column ("" = not recorded).
	Sum string `json:"sum,omitempty"`
}

// Column returns the record's column named name (exact match first, then ignoring
// case), or nil.
func (r *Record) Column(name string) *Column {
	if i := r.ColumnIndex(name); i >= 0 {
		return &r.Columns[i]
	}
	return nil
}

// ColumnIndex is the position of the record's column named name (exact match first,
// then ignoring case), or -1.
func (r *Record) ColumnIndex(name string) int {
	for i := range r.Columns {
		if r.Columns[i].Name == name {
			return i
		}
	}
	for i := range r.Columns {
		if strings.EqualFold(r.Columns[i].Name, name) {
			return i
		}
	}
	return -1
}

// Current is the one rule deciding whether a record may answer a statement (SPEC §4,
// the staleness rule): its source version must be the version the statement is
// pinned to, and its row count the source's exact row count. Every answer from
// statistics asks this function; a record that is not current still costs.
func Current(r *Record, pinned source.Version, exactRows int64) bool {
	return r != nil && r.SourceVersion.Same(pinned) && exactRows >= 0 && r.Rows == exactRows
}

// Marshal encodes the record as its JSON document.
func (r *Record) Marshal() ([]byte, error) {
	if r.DocumentVersion != DocumentVersion {
		return nil, errs.New(errs.Internal, "BUG: statistics document version %d", r.DocumentVersion)
	}
	return json.Marshal(r)
}

// Unmarshal decodes a statistics document, refusing versions this build does not know.
func Unmarshal(doc []byte) (*Record, error) {
	var head struct {
		DocumentVersion int `json:"document_version"`
	}
	if err := json.Unmarshal(doc, &head); err != nil {
		return nil, corruptRecord("%v", err)
	}
	if head.DocumentVersion != DocumentVersion && head.DocumentVersion != 1 {
		return nil, corruptRecord("document version %d is not %d", head.DocumentVersion, DocumentVersion)
	}
	r := &Record{}
	if err := json.Unmarshal(doc, r); err != nil {
		return nil, corruptRecord("%v", err)
	}
	for _, z := range r.Zones {
		if z.RowGroup < WholeFile || (z.RowGroup == WholeFile && head.DocumentVersion == 1) {
			return nil, corruptRecord("a zone of file %d has row group %d", z.File, z.RowGroup)
		}
	}
	r.DocumentVersion = DocumentVersion
	if len(r.PerFile) > 0 && len(r.PerFile) != r.Files {
		return nil, corruptRecord("%d files listed of %d", len(r.PerFile), r.Files)
	}
	for _, f := range r.PerFile {
		if len(f.Columns) != len(r.Columns) {
			return nil, corruptRecord("file %q has %d columns of %d", f.Path, len(f.Columns), len(r.Columns))
		}
	}
	for _, z := range r.Zones {
		if len(z.Columns) != len(r.Columns) {
			return nil, corruptRecord("a zone has %d columns of %d", len(z.Columns), len(r.Columns))
		}
	}
	return r, nil
}

func corruptRecord(format string, args ...any) error {
	return errs.New(errs.Internal, "statistics record is unreadable: %s", fmt.Sprintf(format, args...))
}

// The sketches as query records name them.
const (
	HLLName = "hyperloglog p=12"
	KLLName = "kll k=200"
)

// FileMetas are the record's per-file facts as a scan's file metadata, so that a scan
// skips the files whose recorded bounds rule its filters out before it reads their
// footers (SPEC §12: the record's per-file bounds, then the footers). There is one
// per file of l, whose version the record must describe (the caller asks Current);
// columns names the columns whose bounds are wanted (a scan's filter columns), every
// other column is left unknown. nil when the record does not list l's files one by
// one. A floating column gives no bounds unless a full read found no NaN in it.
func (r *Record) FileMetas(l *source.Listing, columns []string) []*source.FileMeta {
	if !r.listsFilesOf(l) {
		return nil
	}
	return r.fileMetas(l, columns, func(k int) int { return k })
}

// UnchangedFileMetas is FileMetas for a record that may not describe l's version
// (stale): a file of l that the record lists with the same path, size and change
// marker is the file the record measured, and keeps its recorded bounds; any other
// file (added or rewritten since) has a nil entry, and is read as if nothing were
// known of it. nil when the record does not list its files one by one, or no file
// is unchanged.
func (r *Record) UnchangedFileMetas(l *source.Listing, columns []string) []*source.FileMeta {
	if !r.PerFileComplete || len(r.PerFile) == 0 {
		return nil
	}
	byPath := make(map[string]int, len(r.PerFile))
	for k, pf := range r.PerFile {
		byPath[pf.Path] = k
	}
	match := make([]int, len(l.Files))
	same := 0
	for i, ref := range l.Files {
		match[i] = -1
		k, ok := byPath[ref.Info.Path]
		if !ok || r.PerFile[k].Bytes != ref.Info.Size {
			continue
		}
		m, err := source.ChangeMarker(ref.Info)
		if err != nil || r.PerFile[k].Marker != hex.EncodeToString([]byte(m)) {
			continue
		}
		match[i] = k
		same++
	}
	if same == 0 {
		return nil
	}
	return r.fileMetas(l, columns, func(i int) int { return match[i] })
}

// fileMetas builds the file metadata of l's files from the record's per-file entries:
// file i of l is entry at(i) of PerFile, or unknown when at(i) is negative.
func (r *Record) fileMetas(l *source.Listing, columns []string, at func(i int) int) []*source.FileMeta {
	type wanted struct {
		field, col int
		codec      Codec
	}
	var ws []wanted
	for _, name := range columns {
		i := l.Schema.FieldIndices(name)
		if len(i) != 1 || l.Partition(i[0]) >= 0 {
			continue
		}
		j := r.ColumnIndex(name)
		codec, ok := CodecFor(l.Schema.Field(i[0]).Type)
		if j < 0 || !ok || r.Columns[j].DataType != types.Name(l.Schema.Field(i[0]).Type) {
			continue
		}
		ws = append(ws, wanted{i[0], j, codec})
	}
	// Columns reach only as far as the last wanted column, and every file's come
	// from one allocation: a table of 10,000 files is planned many times a second.
	width := 0
	for _, w := range ws {
		width = max(width, w.field+1)
	}
	n := 0
	for i := range l.Files {
		if at(i) >= 0 {
			n++
		}
	}
	metas := make([]source.FileMeta, n)
	cols := make([]parquet.ColumnStats, width*n)
	out := make([]*source.FileMeta, len(l.Files))
	for i := range l.Files {
		k := at(i)
		if k < 0 {
			continue
		}
		pf := r.PerFile[k]
		m := &metas[0]
		metas = metas[1:]
		m.Rows = pf.Rows
		if width > 0 {
			m.Columns = cols[:width:width]
			cols = cols[width:]
		}
		for _, w := range ws {
			if w.col >= len(pf.Columns) {
				continue
			}
			zc, cs := pf.Columns[w.col], &m.Columns[w.field]
			if zc.NullCount != nil {
				cs.HasNullCount, cs.NullCount = true, *zc.NullCount
			}
			if zc.Min == nil || zc.Max == nil || types.IsFloat(w.codec.Type()) && (r.Depth != DepthFull || zc.HasNaN) {
				continue
			}
			lo, err1 := w.codec.Decode(zc.Min)
			hi, err2 := w.codec.Decode(zc.Max)
			if err1 == nil && err2 == nil {
				cs.HasMinMax, cs.Min, cs.Max, cs.MinExact, cs.MaxExact = true, lo, hi, zc.BoundsExact, zc.BoundsExact
			}
		}
		out[i] = m
	}
	return out
}
