package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

// lakeWriters write the lake table of a format (dst) over one table's Parquet files
// (src).
var lakeWriters = map[string]func(ctx context.Context, src, dst string) error{
	"delta":   writeDeltaTable,
	"iceberg": writeIcebergTable,
}

// writeLakeTables makes each table of a Parquet data set a lake table of format
// under out/<table>/, over src/<table>/'s files.
func writeLakeTables(ctx context.Context, format, src, out string, tables []string) error {
	write, ok := lakeWriters[format]
	if !ok {
		return fmt.Errorf("unknown lake format %q", format)
	}
	for _, t := range tables {
		if err := write(ctx, filepath.Join(src, t), filepath.Join(out, t)); err != nil {
			return fmt.Errorf("table %s: %w", t, err)
		}
	}
	return nil
}

// writeDeltaTable makes a Delta table under dst of the Parquet files under src: a
// link to each and a log of one commit adding them all, with the row count, bounds
// and null counts of each file taken from its footer (as a Delta writer states them).
func writeDeltaTable(ctx context.Context, src, dst string) error {
	files, err := parquetFiles(src)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no Parquet files under %q", src)
	}
	if err := os.MkdirAll(filepath.Join(dst, "_delta_log"), 0o755); err != nil {
		return err
	}
	var schema *arrow.Schema
	var adds []string
	for i, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("part-%05d.parquet", i)
		if err := os.Symlink(abs, filepath.Join(dst, name)); err != nil {
			return err
		}
		st, err := os.Stat(abs)
		if err != nil {
			return err
		}
		fs, stats, err := footerStats(ctx, abs)
		if err != nil {
			return err
		}
		if schema == nil {
			schema = fs
		} else if !schema.Equal(fs) {
			return fmt.Errorf("%s has schema %s, and the files before it %s", f, fs, schema)
		}
		add, err := json.Marshal(map[string]any{"add": map[string]any{
			"path": name, "partitionValues": map[string]string{}, "size": st.Size(),
			"modificationTime": st.ModTime().UnixMilli(), "dataChange": true, "stats": stats,
		}})
		if err != nil {
			return err
		}
		adds = append(adds, string(add))
	}
	fields := make([]map[string]any, schema.NumFields())
	for i, f := range schema.Fields() {
		dt, err := deltaTypeName(f.Type)
		if err != nil {
			return fmt.Errorf("column %s: %w", f.Name, err)
		}
		fields[i] = map[string]any{"name": f.Name, "type": dt, "nullable": f.Nullable, "metadata": map[string]any{}}
	}
	schemaString, err := json.Marshal(map[string]any{"type": "struct", "fields": fields})
	if err != nil {
		return err
	}
	protocol := map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}
	if strings.Contains(string(schemaString), `"timestamp_ntz"`) {
		// Timestamps without a time zone are a table feature.
		features := []string{"timestampNtz"}
		protocol = map[string]any{"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": features, "writerFeatures": features}
	}
	var lines []string
	for _, a := range []map[string]any{
		{"commitInfo": map[string]any{"timestamp": 1_700_000_000_000, "operation": "WRITE"}},
		{"protocol": protocol},
		{"metaData": map[string]any{"id": filepath.Base(dst), "format": map[string]any{"provider": "parquet", "options": map[string]string{}},
			"schemaString": string(schemaString), "partitionColumns": []string{}, "configuration": map[string]string{}, "createdTime": 1_700_000_000_000}},
	} {
		b, err := json.Marshal(a)
		if err != nil {
			return err
		}
		lines = append(lines, string(b))
	}
	lines = append(lines, adds...)
	return os.WriteFile(filepath.Join(dst, "_delta_log", "00000000000000000000.json"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// footerStats reads a Parquet file's footer: its schema as Lore reads it, and the
// Delta stats JSON of the file (numRecords, and per column the least minimum and
// greatest maximum of its row groups and their summed null counts, where every row
// group states them).
func footerStats(ctx context.Context, path string) (*arrow.Schema, string, error) {
	r, err := storage.Local{}.Open(ctx, path)
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	f, err := parquet.Open(ctx, r, path)
	if err != nil {
		return nil, "", err
	}
	schema := f.Schema()
	mins, maxs, nulls := map[string]json.RawMessage{}, map[string]json.RawMessage{}, map[string]int64{}
	for c, fld := range schema.Fields() {
		var lo, hi types.Value
		bounded, counted := f.NumRowGroups() > 0, f.NumRowGroups() > 0
		var n int64
		for g := range f.NumRowGroups() {
			cs := f.RowGroup(g).Columns[c]
			if !cs.HasNullCount {
				counted = false
			}
			n += cs.NullCount
			if !cs.HasMinMax {
				bounded = false
				continue
			}
			if g == 0 || types.Compare(cs.Min, lo) < 0 {
				lo = cs.Min
			}
			if g == 0 || types.Compare(cs.Max, hi) > 0 {
				hi = cs.Max
			}
		}
		if counted {
			nulls[fld.Name] = n
		}
		if !bounded {
			continue
		}
		jlo, okLo := statValue(lo)
		jhi, okHi := statValue(hi)
		if okLo && okHi {
			mins[fld.Name], maxs[fld.Name] = jlo, jhi
		}
	}
	b, err := json.Marshal(map[string]any{"numRecords": f.NumRows(), "minValues": mins, "maxValues": maxs, "nullCount": nulls})
	return schema, string(b), err
}

// statValue is a bound as Delta's stats JSON writes it: numbers as numbers, dates,
// timestamps and strings as text.
func statValue(v types.Value) (json.RawMessage, bool) {
	if v.Null {
		return nil, false
	}
	switch {
	case types.IsInteger(v.Type), v.Type.ID() == arrow.DECIMAL128:
		return json.RawMessage(v.String()), true
	case types.IsFloat(v.Type):
		if math.IsNaN(v.F) || math.IsInf(v.F, 0) {
			return nil, false
		}
		return json.RawMessage(v.String()), true
	case types.IsString(v.Type), v.Type.ID() == arrow.DATE32, v.Type.ID() == arrow.TIMESTAMP:
		b, err := json.Marshal(v.String())
		return b, err == nil
	}
	return nil, false
}

// deltaTypeName is the Delta schema type of an Arrow type of the benchmark files.
func deltaTypeName(dt arrow.DataType) (string, error) {
	switch t := dt.(type) {
	case *arrow.Int64Type:
		return "long", nil
	case *arrow.Int32Type:
		return "integer", nil
	case *arrow.Int16Type:
		return "short", nil
	case *arrow.Int8Type:
		return "byte", nil
	case *arrow.Float64Type:
		return "double", nil
	case *arrow.Float32Type:
		return "float", nil
	case *arrow.BooleanType:
		return "boolean", nil
	case *arrow.StringType, *arrow.LargeStringType:
		return "string", nil
	case *arrow.Date32Type:
		return "date", nil
	case *arrow.Decimal128Type:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale), nil
	case *arrow.TimestampType:
		if t.TimeZone == "" {
			return "timestamp_ntz", nil
		}
		return "timestamp", nil
	}
	return "", fmt.Errorf("no Delta type for %s", dt)
}

// FormatResult is one query on Lore over two formats of the same data: Parquet and
// a lake format.
type FormatResult struct {
	Name    string  `json:"name"`
	Parquet Run     `json:"parquet"`
	Lake    Run     `json:"lake"`            // Delta or Iceberg
	Ratio   float64 `json:"ratio,omitempty"` // Lake / Parquet
	Equal   *bool   `json:"equal"`
	Diff    string  `json:"diff,omitempty"`
}

// CompareFormats runs every query of s through Lore twice over the same files: the
// tables defined as Parquet directories and as the lake tables (lake is "delta" or
// "iceberg") beside them (Table.Lake, Table.LakeDir). Per query, one warm-up
// of each (their results compared), then rounds alternating between the two; the
// medians, lake/Parquet and the geometric mean are written to w.
func CompareFormats(ctx context.Context, cfg Config, s *Suite, lake string, w io.Writer) ([]FormatResult, float64, error) {
	if lake != "delta" && lake != "iceberg" {
		return nil, 0, fmt.Errorf("unknown lake format %q", lake)
	}
	title := map[string]string{"delta": "Delta", "iceberg": "Iceberg"}[lake]
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	var engines [2]*loreEngine
	for i, format := range []string{"parquet", lake} {
		home, err := os.MkdirTemp("", "lore-bench-home-")
		if err != nil {
			return nil, 0, err
		}
		defer os.RemoveAll(home)
		tables := make([]Table, len(s.Tables))
		for k, t := range s.Tables {
			tables[k] = t
			switch {
			case format == "parquet":
				tables[k].Lake, tables[k].LakeDir = "", ""
			case t.Lake != format:
				return nil, 0, fmt.Errorf("table %s has no %s directory", t.Name, title)
			}
		}
		e, err := openLore(ctx, home, cfg.Threads, cfg.LoreSettings, tables)
		if err != nil {
			return nil, 0, err
		}
		defer e.close()
		engines[i] = e
	}
	var out []FormatResult
	for _, q := range s.Queries {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		fmt.Fprintf(progress, "%s/%s ...", s.Name, q.Name)
		r := FormatResult{Name: q.Name}
		pRows, pErr := timedRun(ctx, cfg, engines[0], q.SQL, true, true, &r.Parquet)
		lRows, lErr := timedRun(ctx, cfg, engines[1], q.SQL, true, true, &r.Lake)
		r.Parquet.TimesMS, r.Lake.TimesMS = nil, nil
		if pErr == nil && lErr == nil {
			eq, diff := compareResults(pRows, lRows, q.Order, 0)
			r.Equal, r.Diff = &eq, diff
		}
		for range cfg.Rounds {
			if r.Parquet.OK() {
				timedRun(ctx, cfg, engines[0], q.SQL, false, true, &r.Parquet)
			}
			if r.Lake.OK() {
				timedRun(ctx, cfg, engines[1], q.SQL, false, true, &r.Lake)
			}
		}
		for _, run := range []*Run{&r.Parquet, &r.Lake} {
			if run.OK() {
				run.MedianMS = median(run.TimesMS)
			}
		}
		if r.Parquet.OK() && r.Lake.OK() && r.Parquet.MedianMS > 0 {
			r.Ratio = r.Lake.MedianMS / r.Parquet.MedianMS
		}
		fmt.Fprintf(progress, " parquet %s, %s %s\n", fmtRun(&r.Parquet), lake, fmtRun(&r.Lake))
		out = append(out, r)
	}
	var logSum float64
	n := 0
	head := []string{"query", "lore parquet ms", "lore " + lake + " ms", lake + "/parquet", "equal", "rows"}
	var body [][]string
	for _, r := range out {
		ratio, eq, rows := "-", "-", "-"
		if r.Ratio > 0 {
			ratio = ratioText(r.Ratio)
			logSum += math.Log(r.Ratio)
			n++
		}
		if r.Equal != nil {
			eq = map[bool]string{true: "yes", false: "NO"}[*r.Equal]
		}
		if r.Parquet.OK() {
			rows = fmt.Sprint(r.Parquet.Rows)
		}
		body = append(body, []string{r.Name, msText(&r.Parquet), msText(&r.Lake), ratio, eq, rows})
	}
	d := s.Data
	fmt.Fprintf(w, "\nsuite %s, Lore on Parquet against Lore on %s: %s, %d files, %s (%s)\n\n", s.Name, title, d.Description, d.Files, bytesText(d.Bytes), d.Dir)
	writeAligned(w, head, body)
	geo := 0.0
	if n > 0 {
		geo = math.Exp(logSum / float64(n))
		fmt.Fprintf(w, "\ngeometric mean of %s/parquet over %d queries: %s\n", lake, n, ratioText(geo))
	}
	for _, r := range out {
		if r.Diff != "" {
			fmt.Fprintf(w, "%s: %s\n", r.Name, r.Diff)
		}
	}
	return out, geo, nil
}
