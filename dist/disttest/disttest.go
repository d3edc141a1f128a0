// Package disttest holds what the tests of distributed runs share: a table to read,
// the record a full read starts from, and comparisons of records and quantile
// sketches.
package disttest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// WriteHive writes a Hive-partitioned table of several files, one lacking a column,
// and returns its directory.
func WriteHive(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for i, rel := range []string{"p=a/1.parquet", "p=a/2.parquet", "p=b/3.parquet", "p=__HIVE_DEFAULT_PARTITION__/4.parquet"} {
		fields := []arrow.Field{{Name: "id", Type: types.Int64, Nullable: true}, {Name: "x", Type: types.Float64, Nullable: true}}
		if i != 2 {
			fields = append(fields, arrow.Field{Name: "s", Type: types.String, Nullable: true})
		}
		schema := arrow.NewSchema(fields, nil)
		n := 3000 + 700*i
		cols := make([]arrow.Array, len(fields))
		for c, f := range fields {
			vals := make([]types.Value, n)
			for r := range vals {
				switch {
				case (r+c)%17 == 0:
					vals[r] = types.NullOf(f.Type)
				case f.Name == "id":
					vals[r] = types.IntValue(int64(i*100000 + r))
				case f.Name == "x":
					vals[r] = types.FloatValue(float64((r*7919)%1000) / 3)
				default:
					vals[r] = types.StringValue(strings.Repeat("v", r%5) + string(rune('a'+r%26)))
				}
			}
			cols[c] = vector.FromValues(f.Type, vals)
		}
		rec := array.NewRecord(schema, cols, int64(n))
		path := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		err := parquet.WriteFile(path, schema, func(emit func(arrow.Record) error) error { return emit(rec) },
			parquet.WriteOptions{RowGroupRows: 1000})
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// QuantilesClose reports how two quantile sketches (their byte forms) of the same
// values differ beyond their error, or "" when they agree: the same count and range,
// and each decile of one between the other's quantiles eps below and above it
// (discrete values make ranks jump, so values are compared, not ranks).
func QuantilesClose(a, b []byte, eps float64) string {
	if (a == nil) != (b == nil) {
		return "one quantile sketch of two"
	}
	if a == nil {
		return ""
	}
	ka, kb := stats.NewKLL(), stats.NewKLL()
	if err := ka.UnmarshalBinary(a); err != nil {
		return err.Error()
	}
	if err := kb.UnmarshalBinary(b); err != nil {
		return err.Error()
	}
	if ka.N() != kb.N() {
		return fmt.Sprintf("sketches of %d and %d values", ka.N(), kb.N())
	}
	if ka.N() == 0 {
		return ""
	}
	if ka.Min() != kb.Min() || ka.Max() != kb.Max() {
		return fmt.Sprintf("sketches of ranges [%v, %v] and [%v, %v]", ka.Min(), ka.Max(), kb.Min(), kb.Max())
	}
	for i := 1; i <= 9; i++ {
		q := float64(i) / 10
		if v := ka.Quantile(q); v < kb.Quantile(q-eps) || v > kb.Quantile(q+eps) {
			return fmt.Sprintf("the %.1f quantile is %v in one sketch, in the other between %v and %v", q, v, kb.Quantile(q-eps), kb.Quantile(q+eps))
		}
	}
	return ""
}

// FootersRecord is the metadata record of listing l (of a local table) that a full
// read starts from, and l's version.
func FootersRecord(ctx context.Context, l *source.Listing) (*stats.Record, source.Version, error) {
	v, err := l.Version()
	if err != nil {
		return nil, v, err
	}
	footers, err := l.Footers(ctx, storage.Local{})
	if err != nil {
		return nil, v, err
	}
	rec, err := stats.FromFooters(l, footers, v, time.Now())
	return rec, v, err
}

// Hive writes the table of WriteHive and returns its directory, its listing, the
// record a full read of it starts from (FootersRecord) and its version.
func Hive(t testing.TB) (string, *source.Listing, *stats.Record, source.Version) {
	t.Helper()
	dir := WriteHive(t)
	l, err := source.Resolve(context.Background(), storage.Local{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	rec, v, err := FootersRecord(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	return dir, l, rec, v
}

// SameRecord checks got, a record built by a run, against want, the local full
// read's: every field equal but the time it was computed at, the quantile sketches
// (merged in the runner's order) within their error.
func SameRecord(t testing.TB, got, want *stats.Record) {
	t.Helper()
	g, w := *got, *want
	g.ComputedAtMS, w.ComputedAtMS = 0, 0
	g.Columns = append([]stats.Column(nil), got.Columns...)
	w.Columns = append([]stats.Column(nil), want.Columns...)
	if len(g.Columns) != len(w.Columns) {
		t.Fatalf("%d columns, want %d", len(g.Columns), len(w.Columns))
	}
	for c := range g.Columns {
		if d := QuantilesClose(g.Columns[c].Quantiles, w.Columns[c].Quantiles, 0.05); d != "" {
			t.Errorf("column %s: %s", g.Columns[c].Name, d)
		}
		g.Columns[c].Quantiles, w.Columns[c].Quantiles = nil, nil
	}
	a, err := g.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("the record built on the runner differs from the local full read's:\n%s\nwant\n%s", a, b)
	}
}

// ParquetFiles lists the visible Parquet files under dir (a staging directory and
// other names beginning with '_' left out), in name order.
func ParquetFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), "_") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
