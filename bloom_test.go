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
)

// TestBloomFiltersPruneThroughSQL: a point query on a column with bloom filters reads
// only the row group that holds the value, and says so in the record; the answers
// are those of a scan without the filters.
func TestBloomFiltersPruneThroughSQL(t *testing.T) {
	dir := t.TempDir()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	// Four row groups whose keys interleave: group g holds k with k % 4 == g, so the
	// statistics of every group admit every key.
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
	f, err := os.Create(filepath.Join(dir, "t.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	props := pq.NewWriterProperties(pq.WithMaxRowGroupLength(250), pq.WithBloomFilterEnabled(true), pq.WithBloomFilterNDV(1000))
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
