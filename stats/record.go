package stats

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

// DocumentVersion is the version of the statistics object's JSON document
// (docs/format/statistics.md). A document of another version is refused, never guessed
// at, with two exceptions: version 1 is version 2 without zones of whole files, and
// version 2 is version 3 with its detail inline; both are read. Builds that know only
// version 1 refuse version 2, whose zones they would take for row groups; builds that
// know only version 2 refuse version 3, whose head alone they would take for a record
// without zones.
//
// Version 3 stores a record in two parts (MarshalParts): the head — every table-level
// fact, the columns' partials and sketches — and the detail — the per-file list and
// the zones — so that an answer from the table-level partials decodes the head only,
// whatever the number of files. Marshal writes both parts as one document, as
// version 2 did.
const DocumentVersion = 3

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
	// PerFile and Zones are the detail: on a record read from its head alone
	// (UnmarshalHead) they are empty until LoadDetail. A head has both null.
	PerFile         []File `json:"per_file"`
	PerFileComplete bool   `json:"per_file_complete"`
	Zones           []Zone `json:"zones"`

	// detail, when set, reads PerFile and Zones on first need.
	detail *lazyDetail
}

// lazyDetail is the detail of a record read from its head: loaded once, by whichever
// statement needs it first, and shared by every statement holding the record.
type lazyDetail struct {
	once    sync.Once
	load    func() ([]byte, error)
	perFile []File
	zones   []Zone
	err     error
}

// WholeFile is the RowGroup of a zone that is a whole file.
const WholeFile = -1

// ZoneUnit names what the record's zones are, for messages: "row groups", "files",
// or "zones" when it has both kinds.
func (r *Record) ZoneUnit() string {
	files, groups := false, false
	if r.LoadDetail() != nil {
		return "zones"
	}
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
	// DistinctFloor is the most distinct values the files' writers stated for any
	// one zone (Parquet's distinct_count): the column has at least as many. It judges
	// equalities when neither of the above is on record, and never answers.
	DistinctFloor *int64 `json:"distinct_floor,omitempty"`
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

// Marshal encodes the record as one JSON document, the detail inline.
func (r *Record) Marshal() ([]byte, error) {
	if err := r.checkWritable(); err != nil {
		return nil, err
	}
	return json.Marshal(r)
}

// MarshalParts encodes the record as it is stored: its head (the document with
// per_file and zones null) and its detail ({"per_file": …, "zones": …}).
func (r *Record) MarshalParts() (head, detail []byte, err error) {
	if err := r.checkWritable(); err != nil {
		return nil, nil, err
	}
	h := *r
	h.PerFile, h.Zones, h.detail = nil, nil, nil
	if head, err = json.Marshal(&h); err != nil {
		return nil, nil, err
	}
	if detail, err = json.Marshal(recordDetail{PerFile: r.PerFile, Zones: r.Zones}); err != nil {
		return nil, nil, err
	}
	return head, detail, nil
}

// checkWritable loads the detail of a record read from its head, so that what is
// written is the whole record, and refuses a record of another version.
func (r *Record) checkWritable() error {
	if r.DocumentVersion != DocumentVersion {
		return errs.New(errs.Internal, "BUG: statistics document version %d", r.DocumentVersion)
	}
	return r.LoadDetail()
}

// recordDetail is the detail document of a version 3 record.
type recordDetail struct {
	PerFile []File `json:"per_file"`
	Zones   []Zone `json:"zones"`
}

// Unmarshal decodes a statistics document with its detail inline (Marshal, or a
// version 1 or 2 document), refusing versions this build does not know.
func Unmarshal(doc []byte) (*Record, error) {
	return UnmarshalHead(doc, nil)
}

// UnmarshalHead decodes a record's head, refusing versions this build does not know.
// A version 1 or 2 document holds its detail inline and is decoded whole. A version
// 3 head is decoded alone; when detail is not nil, LoadDetail calls it (once) for the
// detail document that MarshalParts wrote beside the head. A head without detail
// read with a nil detail function is a whole document (Marshal) and is decoded
// whole.
func UnmarshalHead(doc []byte, detail func() ([]byte, error)) (*Record, error) {
	version, err := documentVersion(doc)
	if err != nil {
		return nil, err
	}
	switch version {
	case 1, 2:
		detail = nil // inline
	case DocumentVersion:
	default:
		return nil, corruptRecord("document version %d is not %d", version, DocumentVersion)
	}
	r := &Record{}
	if err := json.Unmarshal(doc, r); err != nil {
		return nil, corruptRecord("%v", err)
	}
	r.DocumentVersion = DocumentVersion
	if detail != nil {
		if len(r.PerFile) > 0 || len(r.Zones) > 0 {
			return nil, corruptRecord("a head holds its detail as well")
		}
		r.detail = &lazyDetail{load: detail}
		return r, nil
	}
	if err := r.checkDetail(version); err != nil {
		return nil, err
	}
	return r, nil
}

// versionPrefix starts every document Marshal and MarshalParts write: the version
// is the first field of Record.
const versionPrefix = `{"document_version":`

// documentVersion reads a document's version without decoding the rest: from the
// prefix every document Lore writes starts with, or else (a document written by
// hand, reformatted) by decoding the one field — which scans the whole document, a
// cost that grows with its sketches.
func documentVersion(doc []byte) (int, error) {
	if rest, ok := bytes.CutPrefix(doc, []byte(versionPrefix)); ok {
		end := bytes.IndexAny(rest, ",}")
		if v, err := strconv.Atoi(string(rest[:max(end, 0)])); end > 0 && err == nil {
			return v, nil
		}
	}
	var head struct {
		DocumentVersion int `json:"document_version"`
	}
	if err := json.Unmarshal(doc, &head); err != nil {
		return 0, corruptRecord("%v", err)
	}
	return head.DocumentVersion, nil
}

// LoadDetail makes PerFile and Zones of a record read by UnmarshalHead available; it
// does nothing for any other record. Call it before reading either field, and before
// copying the record (a copy made before has them empty for good). It is safe for
// concurrent use. An error (a detail that cannot be read or disagrees with the head)
// leaves both fields empty: the caller must then use neither, as if the record knew
// nothing finer than the table.
func (r *Record) LoadDetail() error {
	l := r.detail
	if l == nil {
		return nil
	}
	l.once.Do(func() {
		l.perFile, l.zones, l.err = r.decodeDetail(l.load)
		if l.err == nil {
			r.PerFile, r.Zones = l.perFile, l.zones
		}
	})
	if l.err == nil && r.PerFile == nil && r.Zones == nil && (len(l.perFile) > 0 || len(l.zones) > 0) {
		return errs.New(errs.Internal, "BUG: a statistics record was copied before its detail was loaded")
	}
	return l.err
}

// decodeDetail reads and checks the detail of a version 3 record.
func (r *Record) decodeDetail(load func() ([]byte, error)) ([]File, []Zone, error) {
	doc, err := load()
	if err != nil {
		return nil, nil, err
	}
	var d recordDetail
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, nil, corruptRecord("detail: %v", err)
	}
	// Checked on a copy: the record's own fields are set only once the detail is
	// known to agree with the head.
	c := Record{Files: r.Files, Columns: r.Columns, PerFile: d.PerFile, Zones: d.Zones}
	if err := c.checkDetail(DocumentVersion); err != nil {
		return nil, nil, err
	}
	return d.PerFile, d.Zones, nil
}

// checkDetail refuses a detail that disagrees with the head: a per-file list of
// another length than the file count, or a file or zone with another number of
// columns. version is the document's (zones of whole files came with version 2).
func (r *Record) checkDetail(version int) error {
	for _, z := range r.Zones {
		if z.RowGroup < WholeFile || (z.RowGroup == WholeFile && version == 1) {
			return corruptRecord("a zone of file %d has row group %d", z.File, z.RowGroup)
		}
	}
	if len(r.PerFile) > 0 && len(r.PerFile) != r.Files {
		return corruptRecord("%d files listed of %d", len(r.PerFile), r.Files)
	}
	for _, f := range r.PerFile {
		if len(f.Columns) != len(r.Columns) {
			return corruptRecord("file %q has %d columns of %d", f.Path, len(f.Columns), len(r.Columns))
		}
	}
	for _, z := range r.Zones {
		if len(z.Columns) != len(r.Columns) {
			return corruptRecord("a zone has %d columns of %d", len(z.Columns), len(r.Columns))
		}
	}
	return nil
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
	if r.LoadDetail() != nil || !r.PerFileComplete || len(r.PerFile) == 0 {
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
