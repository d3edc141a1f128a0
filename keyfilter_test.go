package lore_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore"
)

// writeKeys writes a table of rows rows: k (BIGINT, NULL every 13th row, values below
// span), d (DATE from k) and v.
func writeKeys(t *testing.T, path string, rows int, span int64, seed uint64) {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "v", Type: arrow.BinaryTypes.String},
	}, nil)
	r := rand.New(rand.NewPCG(seed, 9))
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i := 0; i < rows; i++ {
		if i%13 == 5 {
			b.Field(0).AppendNull()
			b.Field(1).AppendNull()
		} else {
			k := r.Int64N(span)
			b.Field(0).(*array.Int64Builder).Append(k)
			b.Field(1).(*array.Date32Builder).Append(arrow.Date32(k % 20000))
		}
		b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("v%d", i))
	}
	writeRecord(t, path, b, nil)
}

// TestJoinKeyFilterKeepsResults runs joins of every kind where the probe side's scan
// may take a Bloom filter of the build keys, and the same joins on a key expression
// (which no filter reaches): the results are the same.
func TestJoinKeyFilterKeepsResults(t *testing.T) {
	dir := t.TempDir()
	writeKeys(t, filepath.Join(dir, "big.parquet"), 40_000, 100_000, 1)
	writeKeys(t, filepath.Join(dir, "small.parquet"), 900, 100_000, 2)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE big WITH (location = '%s', format = 'parquet')", filepath.Join(dir, "big.parquet")))
	query(t, e, fmt.Sprintf("CREATE TABLE small WITH (location = '%s', format = 'parquet')", filepath.Join(dir, "small.parquet")))
	for _, sql := range []string{
		"SELECT count(*), count(s.v), min(b.v) FROM big b JOIN small s ON b.k = s.k",
		"SELECT count(*), count(s.v) FROM big b LEFT JOIN small s ON b.k = s.k",
		"SELECT count(*), count(b.v) FROM small s LEFT JOIN big b ON b.k = s.k",
		"SELECT count(*), count(b.v) FROM big b RIGHT JOIN small s ON b.k = s.k",
		"SELECT count(*), count(s.v) FROM small s RIGHT JOIN big b ON b.k = s.k",
		"SELECT count(*), count(b.v), count(s.v) FROM big b FULL JOIN small s ON b.k = s.k",
		"SELECT count(*) FROM big b WHERE EXISTS (SELECT 1 FROM small s WHERE s.k = b.k)",
		"SELECT count(*) FROM big b WHERE NOT EXISTS (SELECT 1 FROM small s WHERE s.k = b.k)",
		"SELECT count(*) FROM small s WHERE EXISTS (SELECT 1 FROM big b WHERE s.k = b.k)",
		"SELECT count(*) FROM small s WHERE NOT EXISTS (SELECT 1 FROM big b WHERE s.k = b.k)",
		"SELECT count(*) FROM big b WHERE b.k IN (SELECT k FROM small)",
		"SELECT count(*) FROM big b WHERE b.k NOT IN (SELECT k FROM small WHERE k IS NOT NULL)",
		"SELECT count(*), min(s.v) FROM big b JOIN small s ON b.d = s.d",
		"SELECT b.k, count(*) FROM big b JOIN small s ON b.k = s.k AND b.v < s.v GROUP BY b.k ORDER BY 1 LIMIT 5",
	} {
		got := run(t, e, sql, nil)
		plain := strings.NewReplacer("b.k = s.k", "b.k + 0 = s.k", "s.k = b.k", "s.k = b.k + 0", "b.d = s.d", "b.d + 0 = s.d",
			"b.k IN", "b.k + 0 IN", "b.k NOT IN", "b.k + 0 NOT IN").Replace(sql)
		want := run(t, e, plain, nil)
		if g, w := resultText(got), resultText(want); g != w {
			t.Errorf("%s:\n%s\nwant (%s)\n%s", sql, g, plain, w)
		}
	}
}
