package source

import (
	"context"
	"errors"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

// Listing is a resolved table: the files a statement reads, their partition values and
// one schema. Resolve makes one of a Parquet location: a file, a glob (`*`, `?`, `**`,
// `[...]`), or a directory listed recursively, whose Hive `key=value` directory segments
// become partition columns, typed like DuckDB: BIGINT if every value is an integer, DATE
// if every value is a YYYY-MM-DD date, else VARCHAR; `key=` is ” and `key=NULL` (and
// `__HIVE_DEFAULT_PARTITION__`) is NULL. The readers of lake formats (source/delta,
// source/iceberg) make one of a table's snapshot: they fill Columns, Lake and what
// each file's metadata states, and the plan, the scan and the statistics read it alike.
type Listing struct {
	Location   string
	Format     string        // "parquet", "delta" or "iceberg"
	Files      []FileRef     // sorted by path
	Schema     *arrow.Schema // the table's columns: for a Parquet listing the files' columns by name (unionSchema), then the partition columns
	Partitions []string      // partition column names, in Schema order
	Single     bool          // the location names one file exactly (not a glob or directory)
	// Columns says, for a lake table, how its files name each column of Schema; nil
	// for a Parquet listing, whose files name them as the schema does, unless
	// SetSchema renamed one.
	Columns []ColumnSource
	// Lake is the lake table's version; nil for a Parquet listing.
	Lake *Lake

	rows   *listingRows   // a Parquet listing's rows, known when it was resolved
	digest *listingDigest // a Parquet listing's version, digested when it was resolved
}

// listingDigest is a Parquet listing's version, for the files of the listing it was
// resolved as (a listing of some of them digests its own).
type listingDigest struct {
	v     Version
	of    *FileRef
	count int
}

// listingRows is the rows of a Parquet listing's files, counted from their footers or
// known from ListingFacts, for the files of the listing it was resolved as (a listing
// of some of them counts its own).
type listingRows struct {
	n     int64
	of    *FileRef
	count int
}

// FileRef is one file of a listing with its partition values (indexed like Partitions).
type FileRef struct {
	Info            storage.ObjectInfo
	PartitionValues []types.Value
	// Meta is what the table's metadata states of the file before its footer is read
	// (a Delta add action's stats, an Iceberg manifest entry); nil when nothing.
	Meta *FileMeta
	// Group is what the table's metadata states of a set of files this one belongs
	// to (an Iceberg manifest's partition summaries), shared by them: when it rules
	// a filter out, none of them is looked at. nil when nothing.
	Group *FileMeta
	// Deleted are the file's deleted rows by position (a deletion vector, position
	// deletes); nil when none is. DeletesID names them: the same file with other
	// deletes is another file to a statistics record.
	Deleted   Deletes
	DeletesID string
	// Fill are values of columns the file lacks, by Schema field index, that the
	// table's metadata states for the whole file (an Iceberg identity partition's value
	// kept in the manifest alone); a column the file lacks that is not here reads as
	// Missing.
	Fill map[int]types.Value
	// Equality are the equality deletes that apply to the file: its rows matching one
	// of their tuples are left out. A file with any has no row count before it is read
	// (Listing.Rows).
	Equality []*EqualityDelete
}

// Marker is the file's change marker (ChangeMarker), with the identity of its
// deletes when it has any.
func (f FileRef) Marker() (string, error) {
	m, err := ChangeMarker(f.Info)
	if err != nil || f.DeletesID == "" {
		return m, err
	}
	return m + "\x00d:" + f.DeletesID, nil
}

// FileMeta is what a lake table's metadata says of one data file.
type FileMeta struct {
	Rows int64 // rows in the file before deletes, -1 when not stated
	// Columns are per Schema field bounds and null counts typed like the table's
	// column, for skipping the file before its footer is read; HasMinMax and
	// HasNullCount say what is known. nil when nothing is. Only in ScanSpec.Known may
	// it be shorter than the schema: the fields past its end are unknown.
	Columns []parquet.ColumnStats
}

// Deletes are the deleted row positions of one data file (0-based within the file).
type Deletes interface {
	Len() int64
	// CountIn is how many deleted positions fall in [first, first+n).
	CountIn(first, n int64) int64
	// Live appends to dst the offsets i in [0, n) whose row first+i is not deleted;
	// nil when none of those rows is.
	Live(first int64, n int, dst []int32) []int32
}

// ColumnSource says how a lake table's data files name one of its columns.
type ColumnSource struct {
	// FieldID, when positive, is the Parquet field id of the column in files that
	// carry field ids (Iceberg; Delta column mapping in id mode).
	FieldID int32
	// Names are the column's names in files (without field ids), the first a file has
	// winning: a Delta physical name, an Iceberg name mapping. Empty: the column's
	// own name, matched as a Parquet listing matches it.
	Names []string
	// Unmapped is set when files without field ids do not hold the column under any
	// name: an Iceberg table's name mapping exists and does not list it.
	Unmapped bool
	// Default is the value of the column in a file that lacks it (an Iceberg
	// initial-default); when HasDefault is false the column reads as NULL there. A
	// struct's only default that is not NULL is a struct whose fields read as their
	// own defaults (Iceberg's initial-default {}): Default is then a non-NULL value
	// of the struct type, carrying no fields.
	Default    types.Value
	HasDefault bool
	// Children say how files name the fields inside a nested column, as the column's
	// own source says how they name it: one per field of a struct, in the table's
	// order; the element of a list; the key and the value of a map. A file whose
	// nested fields carry field ids is matched by them, else by Names; a field the
	// file lacks reads as its Default. nil when the table states nothing of them:
	// a file's struct is then matched by position when it has as many fields as the
	// table's, else by name.
	Children []ColumnSource
}

// Lake identifies the version of a lake table a listing was made from.
type Lake struct {
	Kind       string // KindDelta or KindIceberg
	Version    int64  // the Delta table version; the Iceberg sequence number
	SnapshotID int64  // the Iceberg snapshot id
	// Identity is what besides the files pins the version: the log entry or metadata
	// file that defines it, with its change marker.
	Identity []byte
	// Metadata is, for Iceberg, the metadata file the version was read from.
	Metadata string

	// The version, digested once for the files it was first asked for: a snapshot
	// is shared by every statement that finds the table unchanged.
	once    sync.Once
	version Version
	files   *FileRef
	count   int

	// The live rows, counted once for the files they were first asked for.
	mu        sync.Mutex
	rows      int64
	rowsKnown bool
	rowsOf    *FileRef
	rowsCount int
}

// Bytes is the size of the listing's data files.
func (l *Listing) Bytes() int64 {
	var n int64
	for i := range l.Files {
		n += l.Files[i].Info.Size
	}
	return n
}

// Partition is the index in Partitions of schema field i, or -1 for a column the
// files hold.
func (l *Listing) Partition(i int) int {
	if len(l.Partitions) == 0 || i < 0 || i >= l.Schema.NumFields() {
		return -1
	}
	return slices.Index(l.Partitions, l.Schema.Field(i).Name)
}

// Missing is the value column i reads as in a file that lacks it: NULL, or the
// column's default in a lake table that states one.
func (l *Listing) Missing(i int) types.Value {
	if i < len(l.Columns) && l.Columns[i].HasDefault {
		return l.Columns[i].Default
	}
	return types.NullOf(l.Schema.Field(i).Type)
}

// missingArray is n rows of column i in file f, which lacks it (MissingIn); a struct
// whose default is its fields' defaults is built from them.
func (l *Listing) missingArray(f FileRef, i, n int) arrow.Array {
	if _, ok := f.Fill[i]; !ok && i < len(l.Columns) && l.Columns[i].nestedDefaults() {
		return missingArray(l.Schema.Field(i).Type, &l.Columns[i], n)
	}
	return constant(l.MissingIn(f, i), n)
}

// MissingIn is the value column i reads as in file f when f lacks it: the value the
// metadata states for the file (Fill), else Missing.
func (l *Listing) MissingIn(f FileRef, i int) types.Value {
	if v, ok := f.Fill[i]; ok {
		return v
	}
	return l.Missing(i)
}

// Resolve lists location and reads every file's footer (several at a time, through
// the footer cache) for the schema: the union of the files' columns by name
// (unionSchema), then the partition columns. A location that matches no file is an
// errs.SourceUnavailable error; files whose columns cannot be read as one table are
// errs.CorruptSource.
func Resolve(ctx context.Context, store storage.Store, location string) (*Listing, error) {
	return ResolveWith(ctx, store, location, nil)
}

// ResolveWith is Resolve taking the listing's schema and rows from facts when facts
// holds them for the listing's version, and keeping them there when it reads them:
// a listing seen before is resolved from its listing alone, no footer read.
func ResolveWith(ctx context.Context, store storage.Store, location string, facts ListingFacts) (*Listing, error) {
	infos, base, err := listLocation(ctx, store, location)
	if err != nil {
		return nil, err
	}
	if len(infos) == 0 {
		return nil, errs.New(errs.SourceUnavailable, "no Parquet files at %q: %w", location, fs.ErrNotExist)
	}
	l := &Listing{Location: location, Format: "parquet", Files: make([]FileRef, len(infos))}
	l.Single = len(infos) == 1 && !hasMeta(location) && storage.Clean(infos[0].Path) == storage.Clean(strings.TrimSuffix(location, "/"))
	if err := l.partition(infos, base); err != nil {
		return nil, err
	}
	key := ""
	if v, err := l.Version(); err == nil {
		l.digest = &listingDigest{v: v, of: &l.Files[0], count: len(l.Files)}
		if facts != nil {
			key = factsKey(location, v)
		}
	}
	fields, rows, known := []arrow.Field(nil), int64(0), false
	if key != "" {
		fields, rows, known = facts.Facts(key)
	}
	if !known {
		footers, err := l.Footers(ctx, store)
		if err != nil {
			return nil, err
		}
		if fields, err = l.unionSchema(footers); err != nil {
			return nil, err
		}
		for _, f := range footers {
			rows += f.NumRows()
		}
		if key != "" {
			facts.Keep(key, fields, rows)
		}
	}
	l.rows = &listingRows{n: rows, of: &l.Files[0], count: len(l.Files)}
	for i, p := range l.Partitions {
		fields = append(fields, arrow.Field{Name: p, Type: l.Files[0].PartitionValues[i].Type, Nullable: true})
	}
	l.SetSchema(fields)
	return l, nil
}

// SetSchema gives the listing its schema, the table's columns fields in order, once
// Columns are set: every reader of a format makes its schema here.
// Lore binds names without regard to case, so columns whose names are equal but for
// case would make all but the first unreachable: as DuckDB does, the later ones are
// renamed by appending _1, _2, … (the first suffix that makes a name no other column
// has, in any case). Files still name a renamed column as before: its ColumnSource
// keeps the original name (or the names and field id it had), and a partition
// column already in Partitions is renamed there too.
func (l *Listing) SetSchema(fields []arrow.Field) {
	taken := make(map[string]bool, len(fields))
	for _, f := range fields {
		taken[strings.ToLower(f.Name)] = true
	}
	seen := make(map[string]bool, len(fields))
	var out []arrow.Field
	for i, f := range fields {
		low := strings.ToLower(f.Name)
		if !seen[low] {
			seen[low] = true
			continue
		}
		if out == nil {
			out = slices.Clone(fields)
		}
		name := f.Name
		for k := 1; ; k++ {
			name = f.Name + "_" + strconv.Itoa(k)
			if !taken[strings.ToLower(name)] {
				break
			}
		}
		taken[strings.ToLower(name)] = true
		out[i].Name = name
		if len(l.Columns) < len(fields) {
			l.Columns = append(l.Columns, make([]ColumnSource, len(fields)-len(l.Columns))...)
		}
		if len(l.Columns[i].Names) == 0 {
			l.Columns[i].Names = []string{f.Name}
		}
		if k := slices.Index(l.Partitions, f.Name); k >= 0 && i >= len(fields)-len(l.Partitions) {
			l.Partitions[k] = name
		}
	}
	if out != nil {
		fields = out
	}
	l.Schema = arrow.NewSchema(fields, nil)
}

// fileName is the name files give column i when they carry no field ids.
func (l *Listing) fileName(i int) string {
	if i < len(l.Columns) && len(l.Columns[i].Names) > 0 {
		return l.Columns[i].Names[0]
	}
	return l.Schema.Field(i).Name
}

// unionSchema is the table's file columns: the files' columns by name, as DuckDB's
// union_by_name reads them. Columns come in the order they are first seen, files in
// path order; names match exactly, else without regard to case. A column some file
// lacks is nullable, and reads as NULL in that file's rows. A column whose type
// differs between files takes a type that holds both (Widen); two types that none
// holds are an errs.CorruptSource error naming the column, both files and both types,
// which every statement over the files reports alike, ANALYZE included. A column that
// is also a partition key takes the partition's value, as in DuckDB.
func (l *Listing) unionSchema(footers []*parquet.File) ([]arrow.Field, error) {
	var fields []arrow.Field
	var from []int // for each field, the file its type was last changed by
	for fi, footer := range footers {
		fsch := footer.Schema()
		for _, f := range fsch.Fields() {
			if slices.ContainsFunc(l.Partitions, func(p string) bool { return strings.EqualFold(p, f.Name) }) {
				continue
			}
			j := fieldIndex(fields, f.Name)
			if j >= 0 && fields[j].Name != f.Name && len(fsch.FieldIndices(fields[j].Name)) > 0 {
				j = -1 // the file has both spellings: two columns
			}
			if j < 0 {
				f.Nullable = f.Nullable || fi > 0 // earlier files lack it
				fields = append(fields, f)
				from = append(from, fi)
				continue
			}
			if !arrow.TypeEqual(fields[j].Type, f.Type) {
				w, ok := Widen(fields[j].Type, f.Type)
				if !ok {
					return nil, errs.New(errs.CorruptSource,
						"schema drift in %q that cannot be read as one type: column %q is %s in %q and %s in %q",
						l.Location, fields[j].Name, types.Name(fields[j].Type), l.Files[from[j]].Info.Path,
						types.Name(f.Type), l.Files[fi].Info.Path)
				}
				if !arrow.TypeEqual(w, fields[j].Type) {
					from[j] = fi
				}
				fields[j].Type = w
			}
			fields[j].Nullable = fields[j].Nullable || f.Nullable
		}
		isField := func(name string) bool {
			return slices.ContainsFunc(fields, func(f arrow.Field) bool { return f.Name == name })
		}
		for j := range fields {
			if !fields[j].Nullable && fileColumn(fsch, fields[j].Name, isField) < 0 {
				fields[j].Nullable = true // this file lacks it
			}
		}
	}
	return fields, nil
}

// fieldIndex is FieldIndex over a list of fields.
func fieldIndex(fields []arrow.Field, name string) int {
	if i := slices.IndexFunc(fields, func(f arrow.Field) bool { return f.Name == name }); i >= 0 {
		return i
	}
	return slices.IndexFunc(fields, func(f arrow.Field) bool { return strings.EqualFold(f.Name, name) })
}

// listLocation finds the Parquet files of location and the directory their partition paths are
// relative to.
func listLocation(ctx context.Context, store storage.Store, location string) ([]storage.ObjectInfo, string, error) {
	loc, pattern := storage.GlobBase(location)
	if pattern != nil {
		base := loc
		all, err := listOrNone(ctx, store, base)
		if err != nil {
			return nil, "", err
		}
		var out []storage.ObjectInfo
		for _, o := range all {
			rel, ok := relative(base, o.Path)
			if !ok {
				continue
			}
			if hidden(rel) || !match(pattern, strings.Split(rel, "/")) {
				continue
			}
			out = append(out, o)
		}
		return out, base, nil
	}
	all, err := listOrNone(ctx, store, loc)
	if err != nil {
		return nil, "", err
	}
	if len(all) == 1 && storage.Clean(all[0].Path) == storage.Clean(loc) {
		return all, storage.Dir(loc), nil // a single file, named exactly
	}
	dir := storage.Clean(loc)
	out := make([]storage.ObjectInfo, 0, len(all))
	for _, o := range all {
		rel, ok := relative(dir, o.Path)
		if !ok {
			continue
		}
		if hidden(rel) || !parquetName(rel[strings.LastIndexByte(rel, '/')+1:]) {
			continue
		}
		out = append(out, o)
	}
	return out, dir, nil
}

func listOrNone(ctx context.Context, store storage.Store, dir string) ([]storage.ObjectInfo, error) {
	all, err := store.List(ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return all, err
}

func relative(base, p string) (string, bool) {
	if base == "." {
		return strings.TrimPrefix(p, "./"), !strings.HasPrefix(p, "/")
	}
	base = strings.TrimSuffix(base, "/")
	if len(p) <= len(base) || p[len(base)] != '/' || p[:len(base)] != base {
		return "", false
	}
	return p[len(base)+1:], true
}

func hasMeta(s string) bool { return storage.HasGlob(s) }

// hidden reports a relative path with a segment that starts with '.' or '_'
// (checkpoints, _SUCCESS markers, work directories of writers in progress).
func hidden(rel string) bool {
	for seg := range strings.SplitSeq(rel, "/") {
		if strings.HasPrefix(seg, ".") || strings.HasPrefix(seg, "_") {
			return true
		}
	}
	return false
}

// parquetName reports whether a file in a listed directory is taken as Parquet: a
// .parquet (.parq, .pq) name, or a name without an extension as some writers produce.
// Side files (CSV copies, checksums, JSON) are left out.
func parquetName(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return ext == "" || ext == ".parquet" || ext == ".parq" || ext == ".pq"
}

// match matches path segments against pattern segments; `**` matches any number of
// directories (none included).
func match(pattern, parts []string) bool {
	if len(pattern) == 0 {
		return len(parts) == 0
	}
	if pattern[0] == "**" {
		if match(pattern[1:], parts) {
			return true
		}
		return len(parts) > 0 && match(pattern, parts[1:])
	}
	if len(parts) == 0 {
		return false
	}
	ok, err := path.Match(pattern[0], parts[0])
	return err == nil && ok && match(pattern[1:], parts[1:])
}

// partition fills l.Files from infos and derives the partition columns from their
// directories below base.
func (l *Listing) partition(infos []storage.ObjectInfo, base string) error {
	type kv struct{ key, val string }
	paths := make([][]kv, len(infos))
	for i, o := range infos {
		rel, _ := relative(base, o.Path)
		slash := strings.LastIndexByte(rel, '/')
		if slash < 0 {
			continue // a file at the base: no partition
		}
		for d := range strings.SplitSeq(rel[:slash], "/") {
			k, v, ok := strings.Cut(d, "=")
			if !ok || k == "" || slices.ContainsFunc(paths[i], func(e kv) bool { return e.key == k }) {
				continue // the first segment of a key wins
			}
			if u, err := url.PathUnescape(v); err == nil {
				v = u
			}
			paths[i] = append(paths[i], kv{k, v})
		}
	}
	for _, p := range paths[0] {
		l.Partitions = append(l.Partitions, p.key)
	}
	// Every file must have the same keys, in any order (a file's keys are distinct).
	for i, p := range paths {
		if len(p) == len(l.Partitions) && !slices.ContainsFunc(p, func(e kv) bool { return !slices.Contains(l.Partitions, e.key) }) {
			continue
		}
		keys := make([]string, len(p))
		for j, e := range p {
			keys[j] = e.key
		}
		return errs.New(errs.Analysis, "Hive partition mismatch in %q: %q has keys %v, %q has %v",
			l.Location, infos[0].Path, slices.Sorted(slices.Values(l.Partitions)), infos[i].Path, slices.Sorted(slices.Values(keys)))
	}
	raw := make([][]string, len(l.Partitions)) // raw[key][file]; "\x00" marks NULL
	for k, key := range l.Partitions {
		raw[k] = make([]string, len(infos))
		for i, p := range paths {
			for _, e := range p {
				if e.key == key {
					raw[k][i] = e.val
				}
			}
		}
	}
	for i, o := range infos {
		l.Files[i] = FileRef{Info: o, PartitionValues: make([]types.Value, len(l.Partitions))}
	}
	for k := range l.Partitions {
		dt := partitionType(raw[k])
		for i, s := range raw[k] {
			l.Files[i].PartitionValues[k] = partitionValue(s, dt)
		}
	}
	return nil
}

func isNullPartition(s string) bool { return s == "NULL" || s == "__HIVE_DEFAULT_PARTITION__" }

// partitionType types a key's values: BIGINT if every non-NULL value is an integer,
// DATE if every one is a date, VARCHAR otherwise (and when all are NULL).
func partitionType(vals []string) arrow.DataType {
	ints, dates, some := true, true, false
	for _, s := range vals {
		if isNullPartition(s) {
			continue
		}
		some = true
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			ints = false
		}
		if _, ok := parseDate(s); !ok {
			dates = false
		}
	}
	switch {
	case !some:
		return types.String
	case ints:
		return types.Int64
	case dates:
		return types.Date
	}
	return types.String
}

func partitionValue(s string, dt arrow.DataType) types.Value {
	if isNullPartition(s) {
		return types.NullOf(dt)
	}
	switch dt.ID() {
	case arrow.INT64:
		n, _ := strconv.ParseInt(s, 10, 64)
		return types.IntValue(n)
	case arrow.DATE32:
		d, _ := parseDate(s)
		return types.DateValue(d)
	}
	return types.StringValue(s)
}

// parseDate reads a YYYY-MM-DD date as days since the epoch.
func parseDate(s string) (int32, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return 0, false
	}
	return int32(t.Unix() / 86400), true
}
