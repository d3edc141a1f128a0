package lore

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/catalog"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/source/iceberg"
	"github.com/loredb/lore/sql"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/storage/s3"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// The keys CREATE TABLE … WITH accepts.
var createKeys = []string{"bloom", "clustered_by", "format", "iceberg_namespace", "location",
	"s3_allow_http", "s3_endpoint", "s3_path_style", "s3_region"}

// storageOption reads one of the s3_* keys of CREATE TABLE … WITH into o, and
// reports whether key is one.
func storageOption(o *catalog.StorageOptions, opt sql.Option) (bool, error) {
	str := func(dst *string) error {
		if opt.Value.Kind != sql.ValueString || strings.TrimSpace(opt.Value.Str) == "" {
			return errs.At(errs.Analysis, opt.Value.Pos, "%s must be a non-empty string", opt.Key)
		}
		*dst = strings.TrimSpace(opt.Value.Str)
		return nil
	}
	flag := func(dst **bool) error {
		if opt.Value.Kind != sql.ValueBool {
			return errs.At(errs.Analysis, opt.Value.Pos, "%s must be true or false", opt.Key)
		}
		b := opt.Value.Bool
		*dst = &b
		return nil
	}
	switch opt.Key {
	case "s3_endpoint":
		return true, str(&o.S3Endpoint)
	case "s3_region":
		return true, str(&o.S3Region)
	case "s3_allow_http":
		return true, flag(&o.S3AllowHTTP)
	case "s3_path_style":
		return true, flag(&o.S3PathStyle)
	}
	return false, nil
}

// secretKey reports an option that would carry a credential, which a table
// definition never stores: it is kept in the catalog and shown by SHOW CREATE TABLE.
func secretKey(key string) bool {
	for _, w := range []string{"key", "secret", "token", "password", "credential", "session"} {
		if strings.Contains(key, w) {
			return true
		}
	}
	return false
}

func (e *Engine) createTable(ctx context.Context, st *sql.CreateTable) (*Result, error) {
	def := catalog.Table{Name: st.Name, Format: "parquet"}
	namespace := ""
	seen := map[string]bool{}
	for _, o := range st.Options {
		if seen[o.Key] {
			return nil, errs.At(errs.Analysis, o.KeyPos, "option %q given twice", o.Key)
		}
		seen[o.Key] = true
		switch o.Key {
		case "location":
			if o.Value.Kind != sql.ValueString || o.Value.Str == "" {
				return nil, errs.At(errs.Analysis, o.Value.Pos, "location must be a non-empty string")
			}
			def.Location = o.Value.Str
		case "format":
			if o.Value.Kind != sql.ValueString && o.Value.Kind != sql.ValueIdent {
				return nil, errs.At(errs.Analysis, o.Value.Pos, "format must be 'parquet', 'delta' or 'iceberg'")
			}
			def.Format = strings.ToLower(o.Value.Str)
		case "iceberg_namespace":
			if o.Value.Kind != sql.ValueString && o.Value.Kind != sql.ValueIdent {
				return nil, errs.At(errs.Analysis, o.Value.Pos, "iceberg_namespace must be a string such as 'default' or 'a.b'")
			}
			if err := catalog.ValidateIcebergNamespace(o.Value.Str); err != nil {
				return nil, errs.At(errs.Analysis, o.Value.Pos, "iceberg_namespace: %v", err)
			}
			namespace = o.Value.Str
		case "clustered_by", "bloom":
			cols, err := stringArray(o)
			if err != nil {
				return nil, err
			}
			if o.Key == "bloom" {
				def.Bloom = cols
			} else {
				def.ClusteredBy = cols
			}
		default:
			if ok, err := storageOption(&def.Storage, o); ok || err != nil {
				if err != nil {
					return nil, err
				}
				continue
			}
			if secretKey(o.Key) {
				return nil, errs.At(errs.Analysis, o.KeyPos,
					"option %q: a table never stores credentials; S3 credentials come from the standard chain (environment, shared files, instance role) of the process reading the table", o.Key)
			}
			return nil, errs.At(errs.Analysis, o.KeyPos, "unknown option %q (known: %s)", o.Key, strings.Join(createKeys, ", "))
		}
	}
	if def.Location == "" {
		return nil, errs.At(errs.Analysis, st.Start, "CREATE TABLE %s needs WITH (location = '…')", st.Name)
	}
	ref, inCatalog, err := catalog.ParseIcebergLocation(def.Location)
	if err != nil {
		return nil, errs.At(errs.Analysis, st.Start, "%v", err)
	}
	if inCatalog && !seen["format"] {
		def.Format = "iceberg" // a catalog location names an Iceberg table
	}
	if namespace != "" && (def.Format != "iceberg" || inCatalog) {
		return nil, errs.At(errs.Analysis, st.Start,
			"iceberg_namespace applies to an Iceberg table registered by path, which Lore's catalog then records for other engines")
	}
	switch def.Format {
	case "parquet", "delta", "iceberg":
	default:
		return nil, errs.At(errs.Analysis, st.Start, "unknown format %q (known: parquet, delta, iceberg)", def.Format)
	}
	if st.IfNotExists {
		if _, err := e.catalog.Table(ctx, st.Name); err == nil {
			return emptyResult(), nil
		}
	}
	switch {
	case inCatalog && def.Format != "iceberg":
		return nil, errs.At(errs.Analysis, st.Start, "location %q names an Iceberg catalog's table: its format is 'iceberg'", def.Location)
	case inCatalog && ref.File != "":
		file, err := absoluteLocation(ref.File)
		if err != nil {
			return nil, errs.At(errs.Analysis, st.Start, "cannot resolve catalog file %q: %v", ref.File, err)
		}
		ref.File = file
		def.Location = ref.String()
	case !inCatalog:
		loc, err := absoluteLocation(def.Location)
		if err != nil {
			return nil, errs.At(errs.Analysis, st.Start, "cannot resolve location %q: %v", def.Location, err)
		}
		def.Location = loc
	}
	if !def.Storage.IsZero() && !slices.Contains(s3.Schemes, storage.Scheme(def.Location)) {
		return nil, errs.At(errs.Analysis, st.Start, "the s3_* options apply to a location in S3 (s3://bucket/…), not to %q", def.Location)
	}
	l, store, err := e.resolveTable(ctx, def, source.AsOf{})
	if err != nil {
		return nil, err
	}
	def.Columns = tableColumns(l)
	if def.Format == "iceberg" && !inCatalog {
		// A table registered by path is recorded in Lore's Iceberg SQL catalog, so
		// that other engines pointed at catalog.db find it.
		md, err := iceberg.MetadataFile(ctx, store, def.Location)
		if err != nil {
			return nil, err
		}
		if namespace == "" {
			namespace = catalog.DefaultIcebergNamespace
		}
		def.Iceberg = &catalog.IcebergEntry{Namespace: namespace, MetadataLocation: md}
	}
	if _, _, err := e.catalog.CreateTable(ctx, def, st.IfNotExists); err != nil {
		return nil, err
	}
	return emptyResult(), nil
}

// absoluteLocation resolves a relative local location (a path or a glob) against
// the current directory, once, when the table is created: a table's files must not
// depend on the directory each later statement happens to run in. A URL (scheme://)
// and an absolute path are kept as they are.
func absoluteLocation(loc string) (string, error) {
	if strings.Contains(loc, "://") || filepath.IsAbs(loc) {
		return loc, nil
	}
	abs, err := filepath.Abs(loc)
	if err != nil {
		return "", err
	}
	if strings.HasSuffix(loc, "/") && !strings.HasSuffix(abs, "/") {
		abs += "/" // a location written as a directory stays one
	}
	return abs, nil
}

func stringArray(o sql.Option) ([]string, error) {
	if o.Value.Kind != sql.ValueArray {
		return nil, errs.At(errs.Analysis, o.Value.Pos, "%s must be ARRAY['column', …]", o.Key)
	}
	out := make([]string, 0, len(o.Value.Array))
	for _, v := range o.Value.Array {
		if v.Kind != sql.ValueString && v.Kind != sql.ValueIdent {
			return nil, errs.At(errs.Analysis, v.Pos, "%s must list column names as strings", o.Key)
		}
		out = append(out, v.Str)
	}
	return out, nil
}

func (e *Engine) dropTable(ctx context.Context, st *sql.DropTable) (*Result, error) {
	if _, err := e.catalog.DropTable(ctx, st.Name, st.IfExists); err != nil {
		return nil, err
	}
	return emptyResult(), nil
}

func (e *Engine) alterTable(ctx context.Context, st *sql.AlterTable) (*Result, error) {
	var err error
	switch {
	case st.ClusteredBy != nil:
		err = e.catalog.SetClusteredBy(ctx, st.Name, *st.ClusteredBy)
	case st.Bloom != nil:
		err = e.catalog.SetBloom(ctx, st.Name, *st.Bloom)
	default:
		err = errs.At(errs.Analysis, st.Start, "ALTER TABLE needs SET CLUSTERED BY (…) or SET BLOOM (…)")
	}
	if err != nil {
		return nil, err
	}
	return emptyResult(), nil
}

func (e *Engine) showTables(ctx context.Context) (*Result, error) {
	ts, err := e.catalog.Tables(ctx)
	if err != nil {
		return nil, err
	}
	rows := make([][]types.Value, len(ts))
	for i, t := range ts {
		rows[i] = []types.Value{types.StringValue(t.Name)}
	}
	return valuesResult([]arrow.Field{{Name: "name", Type: types.String}}, rows), nil
}

// describe shows the columns a statement over the table reads now: those of its
// current source (as SELECT * reads it), not the ones stored when the table was
// created, which a file replaced or a commit since may have changed.
func (e *Engine) describe(ctx context.Context, st *sql.Describe) (*Result, error) {
	t, err := e.catalog.Table(ctx, st.Name)
	if err != nil {
		return nil, err
	}
	l, _, err := e.resolveTable(ctx, t, source.AsOf{})
	if err != nil {
		return nil, err
	}
	cols := tableColumns(l)
	rows := make([][]types.Value, len(cols))
	for i, c := range cols {
		rows[i] = []types.Value{types.StringValue(c.Name), types.StringValue(c.Type), types.BoolValue(c.Partition)}
	}
	return valuesResult([]arrow.Field{
		{Name: "column_name", Type: types.String},
		{Name: "column_type", Type: types.String},
		{Name: "partition", Type: types.Boolean},
	}, rows), nil
}

func (e *Engine) showCreateTable(ctx context.Context, st *sql.ShowCreateTable) (*Result, error) {
	t, err := e.catalog.Table(ctx, st.Name)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s WITH (location = %s, format = %s", types.QuoteIdent(t.Name), types.QuoteString(t.Location), types.QuoteString(t.Format))
	list := func(key string, cols []string) {
		if len(cols) == 0 {
			return
		}
		q := make([]string, len(cols))
		for i, c := range cols {
			q[i] = types.QuoteString(c)
		}
		fmt.Fprintf(&b, ", %s = ARRAY[%s]", key, strings.Join(q, ", "))
	}
	list("clustered_by", t.ClusteredBy)
	list("bloom", t.Bloom)
	o := t.Storage
	if o.S3Endpoint != "" {
		fmt.Fprintf(&b, ", s3_endpoint = %s", types.QuoteString(o.S3Endpoint))
	}
	if o.S3Region != "" {
		fmt.Fprintf(&b, ", s3_region = %s", types.QuoteString(o.S3Region))
	}
	if o.S3AllowHTTP != nil {
		fmt.Fprintf(&b, ", s3_allow_http = %t", *o.S3AllowHTTP)
	}
	if o.S3PathStyle != nil {
		fmt.Fprintf(&b, ", s3_path_style = %t", *o.S3PathStyle)
	}
	b.WriteString(")")
	return valuesResult([]arrow.Field{{Name: "create_statement", Type: types.String}},
		[][]types.Value{{types.StringValue(b.String())}}), nil
}

func emptyResult() *Result { return &Result{Schema: arrow.NewSchema(nil, nil)} }

// valuesResult builds a small result from boxed values.
func valuesResult(fields []arrow.Field, rows [][]types.Value) *Result {
	for i := range fields {
		fields[i].Nullable = true
	}
	schema := arrow.NewSchema(fields, nil)
	cols := make([]arrow.Array, len(fields))
	for j, f := range fields {
		vals := make([]types.Value, len(rows))
		for i, r := range rows {
			vals[i] = r[j]
		}
		cols[j] = vector.FromValues(f.Type, vals)
	}
	res := &Result{Schema: schema}
	if len(rows) > 0 {
		res.Batches = []arrow.Record{array.NewRecord(schema, cols, int64(len(rows)))}
	}
	return res
}

// lakeNumber is the version of a lake table of that kind: the Delta version or the
// Iceberg snapshot id; NULL for other sources.
func lakeNumber(l *source.Listing, kind string) types.Value {
	switch {
	case l.Lake == nil || l.Lake.Kind != kind:
		return types.NullOf(types.Int64)
	case kind == source.KindDelta:
		return types.IntValue(l.Lake.Version)
	}
	return types.IntValue(l.Lake.SnapshotID)
}

// describeDetail reads the table's metadata afresh (no statistics are on record yet):
// its files, their sizes, and the row count from the footers.
func (e *Engine) describeDetail(ctx context.Context, st *sql.DescribeDetail) (*Result, error) {
	t, err := e.catalog.Table(ctx, st.Name)
	if err != nil {
		return nil, err
	}
	l, store, err := e.resolveTable(ctx, t, source.AsOf{})
	if err != nil {
		return nil, errs.At(errs.DescribeFailed, st.Start, "cannot read the source of %s: %s", st.Name, err.Error())
	}
	version, err := l.Version()
	if err != nil {
		return nil, errs.At(errs.DescribeFailed, st.Start, "cannot version the source of %s: %s", st.Name, err.Error())
	}
	rec, err := e.statistics(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	analyzedAt := types.NullOf(types.TimestampTZ)
	var rows, size, lastModified int64 // lastModified in µs
	if rec != nil && rec.SourceVersion.Same(version) {
		// The record describes exactly these files: no footer is read.
		rows, size, lastModified = rec.Rows, rec.Bytes, rec.LastModifiedMS*1000
		analyzedAt = types.Value{Type: types.TimestampTZ, I: rec.ComputedAtMS * 1000}
	} else {
		if rows, err = l.Rows(ctx, store); err != nil {
			return nil, errs.At(errs.DescribeFailed, st.Start, "cannot read the footers of %s: %s", st.Name, err.Error())
		}
		size = l.Bytes()
		for _, f := range l.Files {
			lastModified = max(lastModified, f.Info.ModTime.UnixMilli()*1000) // ms, as records keep it
		}
	}
	// Equality deletes leave the count unknown until the rows are read.
	rowCount := types.IntValue(rows)
	if rows < 0 || slices.ContainsFunc(l.Files, func(f source.FileRef) bool { return len(f.Equality) > 0 }) {
		rowCount = types.NullOf(types.Int64)
	}
	list := func(xs []string) types.Value {
		return types.StringValue("[" + strings.Join(xs, ", ") + "]")
	}
	fields := []arrow.Field{
		{Name: "format", Type: types.String}, {Name: "location", Type: types.String},
		{Name: "created_at", Type: types.TimestampTZ}, {Name: "last_modified", Type: types.TimestampTZ},
		{Name: "num_files", Type: types.Int64}, {Name: "size_in_bytes", Type: types.Int64},
		{Name: "row_count", Type: types.Int64}, {Name: "delta_version", Type: types.Int64},
		{Name: "iceberg_snapshot_id", Type: types.Int64}, {Name: "partition_columns", Type: types.String},
		{Name: "clustered_by", Type: types.String}, {Name: "analyzed_at", Type: types.TimestampTZ},
		{Name: "source_version", Type: types.String},
		// After SPEC §4's columns, so that readers by position keep theirs.
		{Name: "bloom", Type: types.String},
	}
	row := []types.Value{
		types.StringValue(t.Format), types.StringValue(t.Location),
		types.NullOf(types.TimestampTZ), {Type: types.TimestampTZ, I: lastModified},
		types.IntValue(int64(len(l.Files))), types.IntValue(size),
		rowCount, lakeNumber(l, source.KindDelta),
		lakeNumber(l, source.KindIceberg), list(l.Partitions),
		list(t.ClusteredBy), analyzedAt,
		types.StringValue(version.Label()), list(t.Bloom),
	}
	return valuesResult(fields, [][]types.Value{row}), nil
}
