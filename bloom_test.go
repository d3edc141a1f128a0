package lore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore"
	"github.com/loredb/lore/storage/s3/s3test"
)

// writeBloomFile writes four row groups of 250 rows whose keys interleave: group g
// holds k with k % 4 == g, so the statistics of every group admit every key; every
// fiftieth row's key is NULL. k and name have bloom filters.
func writeBloomFile(t *testing.T, path string) {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for g := range 4 {
		for i := range 250 {
			k := int64(4*i + g)
			if i%50 == 7 {
				b.Field(0).AppendNull()
			} else {
				b.Field(0).(*array.Int64Builder).Append(k)
			}
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("n%d", k))
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := pq.NewWriterProperties(pq.WithMaxRowGroupLength(250), pq.WithBloomFilterEnabled(true), pq.WithBloomFilterNDV(250), pq.WithBloomFilterFPP(0.01))
	w, err := pqarrow.NewFileWriter(sch, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBloomFiltersPruneThroughSQL: a point query on a column with bloom filters reads
// only the row group that holds the value, and says so in the record; the answers
// are those of a scan without the filters.
func TestBloomFiltersPruneThroughSQL(t *testing.T) {
	dir := t.TempDir()
	writeBloomFile(t, filepath.Join(dir, "t.parquet"))
	e := open(t, lore.Options{Home: t.TempDir(), NoAutoRefresh: true})
	query(t, e, fmt.Sprintf("CREATE TABLE b WITH (location = '%s', format = 'parquet')", dir))
	settings := map[string]string{"result_cache": "false"}
	for _, c := range []struct {
		sql, want string
		read      int64
	}{
		{"SELECT count(*), min(name) FROM b WHERE k = 401", "1", 1},
		{"SELECT count(*), min(name) FROM b WHERE name = 'n402'", "1", 1},
		{"SELECT count(*), min(name) FROM b WHERE k IN (401, 402)", "2", 2},
		{"SELECT count(*), min(name) FROM b WHERE k = 28", "0", 0}, // a NULL row's key
	} {
		res := run(t, e, c.sql, settings)
		if got := cell(res, 0, 0); got != c.want {
			t.Errorf("%s: %s, want %s", c.sql, got, c.want)
		}
		s := res.Record.Scans[0].Snapshot
		if s.RowGroupsRead != c.read || s.RowGroupsPrunedByBloom != 4-c.read || s.BloomFiltersRead == 0 || s.BloomFilterBytesRead == 0 {
			t.Errorf("%s: counters %+v", c.sql, s)
		}
	}
	// EXPLAIN ANALYZE names the layer.
	plan := resultText(run(t, e, "EXPLAIN ANALYZE SELECT count(*) FROM b WHERE k = 401", settings))
	if !strings.Contains(plan, "bloom: read=4") || !strings.Contains(plan, "pruned=3") {
		t.Errorf("EXPLAIN ANALYZE:\n%s", plan)
	}
}

// TestSetBloomShown: the bloom columns ALTER TABLE … SET BLOOM stores (they take
// effect when OPTIMIZE next writes the table) show in DESCRIBE DETAIL and SHOW CREATE
// TABLE, and SET BLOOM () clears them.
func TestSetBloomShown(t *testing.T) {
	e := open(t, lore.Options{Home: t.TempDir()})
	dir, err := filepath.Abs("tests/testdata/people.parquet")
	if err != nil {
		t.Fatal(err)
	}
	query(t, e, fmt.Sprintf("CREATE TABLE p WITH (location = '%s', format = 'parquet')", dir))
	detail := func() string {
		res := query(t, e, "DESCRIBE DETAIL p")
		return cell(res, 0, res.Schema.FieldIndices("bloom")[0])
	}
	if got := detail(); got != "[]" {
		t.Errorf("bloom before SET BLOOM: %s", got)
	}
	query(t, e, "ALTER TABLE p SET BLOOM (name, city)")
	if got := detail(); got != "[name, city]" {
		t.Errorf("DESCRIBE DETAIL bloom: %s", got)
	}
	if got := cell(query(t, e, "SHOW CREATE TABLE p"), 0, 0); !strings.Contains(got, "bloom = ARRAY['name', 'city']") {
		t.Errorf("SHOW CREATE TABLE: %s", got)
	}
	query(t, e, "ALTER TABLE p SET BLOOM ()")
	if got := detail(); got != "[]" {
		t.Errorf("bloom after SET BLOOM (): %s", got)
	}
}

// TestBloomFiltersOverS3: from object storage, a bloom filter takes at most one ranged
// GET (the footer records its length), and the point lookup fetches the chunks of the one
// row group left.
func TestBloomFiltersOverS3(t *testing.T) {
	dir := t.TempDir()
	writeBloomFile(t, filepath.Join(dir, "t.parquet"))
	srv := s3test.Start(t, "lake")
	srv.Upload(t, dir, "s3://lake/bloom")
	cfg := srv.Config()
	e := open(t, lore.Options{Home: t.TempDir(), S3: &cfg, NoAutoRefresh: true})
	query(t, e, "CREATE TABLE b WITH (location = 's3://lake/bloom', format = 'parquet')")
	settings := map[string]string{"result_cache": "false"}
	run(t, e, "SELECT count(*) FROM b WHERE name = 'n1'", settings) // the footer is cached
	srv.Reset()
	res := run(t, e, "SELECT count(*), min(name) FROM b WHERE k = 401", settings)
	if got := cell(res, 0, 0); got != "1" {
		t.Fatalf("count = %s", got)
	}
	s := res.Record.Scans[0].Snapshot
	if s.BloomFiltersRead != 4 || s.RowGroupsPrunedByBloom != 3 || s.RowGroupsRead != 1 {
		t.Fatalf("counters %+v", s)
	}
	gets := 0
	for _, l := range srv.Log() {
		if strings.HasPrefix(l, "GET /lake/bloom/t.parquet") {
			gets++
		}
	}
	// At most one ranged GET per filter (the store's reader may fetch neighbouring
	// filters in one), and at most two for the row group read (its chunks, in one
	// prefetch, or piece by piece).
	if gets < 1 || gets > 4+2 {
		t.Errorf("%d GETs for 4 bloom filters and 1 row group:\n%s", gets, strings.Join(srv.Log(), "\n"))
	}
}
