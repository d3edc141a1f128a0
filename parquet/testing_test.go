package parquet

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// dataDir finds the shared test data (../shared/data beside the repository) or skips.
func dataDir(t testing.TB) string { return shareddata.Dir(t) }

type fact struct {
	File     string   `json:"file"`
	Rows     *int64   `json:"rows"`
	FullRead string   `json:"full_read"`
	Facts    []string `json:"facts"`
}

// negative reports files that are malformed on purpose and must be refused.
func negative(name string) bool {
	if _, ok := soundBadData[name]; ok {
		return false
	}
	return strings.HasPrefix(name, "apache/bad_data/") || strings.HasPrefix(name, "duckdb/broken/")
}

// soundBadData are files kept with the malformed ones that hold well-defined data all
// the same, with why; they are read and checked like any other file.
var soundBadData = map[string]string{
	"apache/bad_data/ARROW-GH-43605.parquet": "a zero bit width for dictionary indexes is valid when the dictionary " +
		"has one entry; DuckDB reads the same 21186 zeros",
}

// limitations are files other readers handle that this reader refuses, with why. Each
// must fail cleanly with CORRUPT_SOURCE; one that starts working must leave this list.
var limitations = map[string]string{
	"apache/hadoop_lz4_compressed.parquet":             "LZ4 with Hadoop framing is not decoded by arrow-go",
	"apache/hadoop_lz4_compressed_larger.parquet":      "LZ4 with Hadoop framing is not decoded by arrow-go",
	"apache/non_hadoop_lz4_compressed.parquet":         "legacy LZ4 codec (raw block) is not decoded by arrow-go",
	"apache/datapage_v2_empty_datapage.snappy.parquet": "arrow-go decompresses a zero-byte DATA_PAGE_V2 body and fails",
	"apache/incorrect_map_schema.parquet":              "arrow-go refuses a MAP whose keys are optional",
	"apache/unknown-logical-type.parquet":              "arrow-go cannot map an unknown logical type (it panics; recovered)",
	"duckdb/uuid_v2.parquet":                           "arrow-go has no DELTA_BYTE_ARRAY decoder for FIXED_LEN_BYTE_ARRAY",
	"apache/int96_from_spark.parquet": "one INT96 value (Spark's 290000-12-31, stored with an overflowed day) lies " +
		"outside int64 microseconds; DuckDB wraps it to 226414 BC, Lore refuses it",
}

// footerOnly are files whose data is not read in tests, with why.
var footerOnly = map[string]string{
	"apache/large_string_map.brotli.parquet": "a string chunk expands to more than 2 GB",
}

// unreliableStats are files whose footer statistics are known to be wrong or not
// comparable with the data as read, with why.
var unreliableStats = map[string]string{
	"duckdb/corrupt_stats.parquet": "the writer stored wrong min/max on purpose",
}

func loadFacts(t *testing.T, root string) []fact {
	raw, err := os.ReadFile(filepath.Join(root, "parquet-testing", "facts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []fact
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

type colAgg struct {
	nonNull  int64
	min, max types.Value
	has      bool
}

// readAll opens a file and reads every row group fully, checking every value against
// the row group's statistics on the way.
func readAll(t *testing.T, path, name string, checkStats bool) (*File, []colAgg, int64, error) {
	ctx := context.Background()
	r, err := storage.Local{}.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := Open(ctx, r, name)
	if err != nil {
		return nil, nil, 0, err
	}
	nf := f.Schema().NumFields()
	aggs := make([]colAgg, nf)
	cols := make([]int, nf)
	for i := range cols {
		cols[i] = i
	}
	var total int64
	for g := 0; g < f.NumRowGroups(); g++ {
		info := f.RowGroup(g)
		nulls := make([]int64, nf)
		var rows int64
		err := f.ReadRowGroup(ctx, g, cols, func(b *vector.Batch) error {
			rows += int64(b.Rows)
			for i, a := range b.Cols {
				// String and binary columns may arrive as dictionaries of the schema's type.
				if !arrow.TypeEqual(types.Unwrap(a.DataType()), f.Schema().Field(i).Type) {
					t.Errorf("%s: column %d read as %s, schema says %s", name, i, a.DataType(), f.Schema().Field(i).Type)
					continue
				}
				nulls[i] += int64(a.NullN())
				dt := a.DataType()
				if !types.IsOrderable(dt) {
					aggs[i].nonNull += int64(a.Len() - a.NullN())
					continue
				}
				cs := info.Columns[i]
				for j := 0; j < a.Len(); j++ {
					if a.IsNull(j) {
						continue
					}
					v := types.ValueAt(a, j)
					ag := &aggs[i]
					ag.nonNull++
					if !ag.has || types.Compare(v, ag.min) < 0 {
						ag.min = v
					}
					if !ag.has || types.Compare(v, ag.max) > 0 {
						ag.max = v
					}
					ag.has = true
					if checkStats && cs.HasMinMax && !(types.IsFloat(dt) && v.F != v.F) {
						if types.Compare(v, cs.Min) < 0 || types.Compare(v, cs.Max) > 0 {
							t.Errorf("%s rg %d col %q: value %s outside bounds [%s, %s]", name, g, f.Schema().Field(i).Name, v, cs.Min, cs.Max)
							checkStats = false
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			return f, nil, 0, err
		}
		if rows != info.Rows && info.Rows != 0 {
			t.Errorf("%s rg %d: read %d rows, footer says %d", name, g, rows, info.Rows)
		}
		if checkStats {
			for i, cs := range info.Columns {
				if cs.HasNullCount && !types.IsNested(f.Schema().Field(i).Type) && cs.NullCount != nulls[i] {
					t.Errorf("%s rg %d col %q: %d nulls, statistics say %d", name, g, f.Schema().Field(i).Name, nulls[i], cs.NullCount)
				}
			}
		}
		total += rows
	}
	return f, aggs, total, nil
}

func TestParquetTestingFiles(t *testing.T) {
	root := dataDir(t)
	facts := loadFacts(t, root)
	if len(facts) < 100 {
		t.Fatalf("only %d files in facts.json", len(facts))
	}
	var readable, refused int
	for _, fc := range facts {
		name := fc.File
		path := filepath.Join(root, "parquet-testing", filepath.FromSlash(name))
		t.Run(name, func(t *testing.T) {
			if why, ok := footerOnly[name]; ok {
				r, err := storage.Local{}.Open(context.Background(), path)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if _, err := Open(context.Background(), r, name); err != nil {
					t.Fatalf("footer: %v", err)
				}
				t.Logf("data not read: %s", why)
				return
			}
			_, unreliable := unreliableStats[name]
			f, aggs, rows, err := readAll(t, path, name, !unreliable)
			if negative(name) {
				if err == nil {
					t.Fatalf("malformed file read without error")
				}
				checkCorrupt(t, err, name)
				t.Logf("refused: %v", err)
				refused++
				return
			}
			if why, ok := limitations[name]; ok {
				if err == nil {
					t.Fatalf("listed as a limitation (%s) but now reads: remove it from the list", why)
				}
				checkCorrupt(t, err, name)
				t.Logf("known limitation: %s: %v", why, err)
				return
			}
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			readable++
			if fc.Rows != nil && fc.FullRead == "ok" && rows != *fc.Rows {
				t.Errorf("rows: got %d, DuckDB counts %d", rows, *fc.Rows)
			}
			for _, s := range fc.Facts {
				checkFact(t, f, aggs, s, hiveKeys(name))
			}
		})
	}
	t.Logf("%d files read, %d malformed files refused", readable, refused)
}

func checkCorrupt(t *testing.T, err error, name string) {
	t.Helper()
	if errs.CodeOf(err) != errs.CorruptSource {
		t.Errorf("error code %s, want CORRUPT_SOURCE: %v", errs.CodeOf(err), err)
	}
	if !strings.Contains(err.Error(), strconv.Quote(name)) {
		t.Errorf("error does not name the file: %v", err)
	}
}

// checkFact compares one DuckDB fact "col: min=X, max=Y, non-null=N" with what was read.
func checkFact(t *testing.T, f *File, aggs []colAgg, s string, hive map[string]bool) {
	t.Helper()
	i := strings.LastIndex(s, ": min=")
	if i < 0 {
		return // an error recorded instead of a fact
	}
	col, rest := s[:i], s[i+len(": min="):]
	j := strings.LastIndex(rest, ", non-null=")
	k := strings.Index(rest, ", max=")
	if j < 0 || k < 0 {
		t.Fatalf("unparsable fact %q", s)
	}
	wantMin, wantMax := rest[:k], rest[k+len(", max="):j]
	wantNN, err := strconv.ParseInt(rest[j+len(", non-null="):], 10, 64)
	if err != nil {
		t.Fatalf("unparsable fact %q", s)
	}
	if hive[col] {
		return // DuckDB took the value from the path, not from the file
	}
	idx := f.Schema().FieldIndices(col)
	if len(idx) != 1 {
		t.Errorf("fact %q: no column %q in %s", s, col, f.Schema())
		return
	}
	ag := aggs[idx[0]]
	if ag.nonNull != wantNN {
		t.Errorf("%s: non-null %d, DuckDB %d", col, ag.nonNull, wantNN)
	}
	if !ag.has {
		if wantMin != "None" {
			t.Errorf("%s: no min, DuckDB %s", col, wantMin)
		}
		return
	}
	if got := renderLikeDuckDB(ag.min); !sameRendering(got, wantMin) {
		t.Errorf("%s: min %s, DuckDB %s", col, got, wantMin)
	}
	if got := renderLikeDuckDB(ag.max); !sameRendering(got, wantMax) {
		t.Errorf("%s: max %s, DuckDB %s", col, got, wantMax)
	}
}

// renderLikeDuckDB is Value.String with DuckDB's spelling of the few values it renders
// differently when casting to VARCHAR.
func renderLikeDuckDB(v types.Value) string {
	switch v.Type.ID() {
	case arrow.TIME32, arrow.TIME64:
		// Parquet TIME adjusted to UTC is DuckDB's TIME WITH TIME ZONE; Lore reads
		// TIME, and only the rendering differs.
		return v.String() + "+00"
	}
	return v.String()
}

// sameRendering compares renderings, taking DuckDB's "-nan" (a NaN with the sign bit
// set) as the NaN it is.
func sameRendering(got, want string) bool {
	return got == want || (got == "nan" && want == "-nan")
}

// hiveKeys are the key=value directory names on a path.
func hiveKeys(name string) map[string]bool {
	keys := map[string]bool{}
	for _, seg := range strings.Split(name, "/") {
		if k, _, ok := strings.Cut(seg, "="); ok {
			keys[k] = true
		}
	}
	return keys
}
