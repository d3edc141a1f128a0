package stats

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

// indexFixture is a record of three files of one BIGINT column x, holding [0, 9],
// [10, 19] and [20, 29], and the listing it describes.
func indexFixture(t *testing.T) (*Record, *source.Listing) {
	t.Helper()
	codec, _ := CodecFor(arrow.PrimitiveTypes.Int64)
	enc := func(v int64) []byte {
		b, ok := codec.Encode(types.IntValue(v))
		if !ok {
			t.Fatal("cannot encode", v)
		}
		return b
	}
	r := &Record{Columns: []Column{{Name: "x", DataType: types.Name(arrow.PrimitiveTypes.Int64)}}, PerFileComplete: true}
	l := &source.Listing{Schema: arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)}
	for i, path := range []string{"/t/a.parquet", "/t/b.parquet", "/t/c.parquet"} {
		lo := int64(10 * i)
		r.PerFile = append(r.PerFile, File{Path: path, Rows: 10,
			Columns: []ZoneColumn{{Min: enc(lo), Max: enc(lo + 9), BoundsExact: true}}})
		l.Files = append(l.Files, source.FileRef{Info: storage.ObjectInfo{Path: path}})
	}
	return r, l
}

// TestIndexedFileMetas: the files the index leaves are known, the others excluded,
// and the ranges asked are those of the filters the index answers; where the index
// fails, holds another record or answers no filter, the result is FileMetas'.
func TestIndexedFileMetas(t *testing.T) {
	r, l := indexFixture(t)
	ctx := context.Background()
	point := []source.Predicate{{Column: "x", Op: "=", Values: []types.Value{types.IntValue(15)}}}
	var asked []ColumnRange
	answer := func(files []int, ok bool, err error) BoundsIndex {
		return func(_ context.Context, ranges []ColumnRange) ([]int, bool, error) {
			asked = ranges
			return files, ok, err
		}
	}
	known, excluded := r.IndexedFileMetas(ctx, l, point, answer([]int{1}, true, nil))
	if !slices.Equal(excluded, []bool{true, false, true}) || known[0] != nil || known[1] == nil || known[2] != nil {
		t.Fatalf("excluded %v, known %v", excluded, known)
	}
	if !known[1].Columns[0].HasMinMax || known[1].Columns[0].Min.I != 10 {
		t.Errorf("the file left lacks its recorded bounds: %+v", known[1].Columns[0])
	}
	if len(asked) != 1 || asked[0].Column != 0 || string(asked[0].Lo) != string(asked[0].Hi) {
		t.Errorf("asked %+v for x = 15", asked)
	}
	for name, index := range map[string]BoundsIndex{
		"failing":        answer(nil, false, errors.New("catalog gone")),
		"another record": answer([]int{1}, false, nil),
		"none":           nil,
	} {
		known, excluded := r.IndexedFileMetas(ctx, l, point, index)
		if excluded != nil || len(known) != 3 || known[0] == nil || known[2] == nil {
			t.Errorf("%s: excluded %v, known %v", name, excluded, known)
		}
	}
	// IS NULL and <> are not ranges: the index is not asked.
	asked = nil
	other := []source.Predicate{{Column: "x", Op: "is_null"}, {Column: "x", Op: "<>", Values: []types.Value{types.IntValue(3)}}}
	if _, excluded := r.IndexedFileMetas(ctx, l, other, answer(nil, true, nil)); excluded != nil || asked != nil {
		t.Errorf("asked %+v, excluded %v", asked, excluded)
	}
	// IN asks for its least to its greatest value; < and >= are one-sided.
	for _, tc := range []struct {
		p      source.Predicate
		lo, hi bool
	}{
		{source.Predicate{Column: "x", Op: "in", Values: []types.Value{types.IntValue(25), {Null: true}, types.IntValue(3)}}, true, true},
		{source.Predicate{Column: "x", Op: "<", Values: []types.Value{types.IntValue(3)}}, false, true},
		{source.Predicate{Column: "x", Op: ">=", Values: []types.Value{types.IntValue(3)}}, true, false},
	} {
		r.IndexedFileMetas(ctx, l, []source.Predicate{tc.p}, answer(nil, true, nil))
		if len(asked) != 1 || (asked[0].Lo != nil) != tc.lo || (asked[0].Hi != nil) != tc.hi {
			t.Errorf("%s: asked %+v", tc.p.Op, asked)
		}
	}
	in := source.Predicate{Column: "x", Op: "in", Values: []types.Value{types.IntValue(25), types.IntValue(3)}}
	r.IndexedFileMetas(ctx, l, []source.Predicate{in}, answer(nil, true, nil))
	if string(asked[0].Lo) > string(asked[0].Hi) {
		t.Errorf("IN asked a reversed range %+v", asked)
	}
}
