package stats

import (
	"bytes"
	"context"

	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

// ColumnRange is a range of one record column's values (its index in Record.Columns)
// in the bounds encoding; nil Lo or Hi is unbounded.
type ColumnRange struct {
	Column int
	Lo, Hi []byte
}

// BoundsIndex asks the catalog's bounds index (SPEC §3) which of a record's files —
// by position in PerFile — can hold a row in every one of ranges. ok is false when
// the catalog no longer holds that very record: then its positions would name other
// files, and the caller checks the bounds itself.
type BoundsIndex func(ctx context.Context, ranges []ColumnRange) (files []int, ok bool, err error)

// IndexedFileMetas is FileMetas (the record describes l's version; the caller asks
// Current) for a scan under filters, with the files the record's bounds rule out
// found by the catalog's bounds index rather than by decoding and checking every
// file's bounds here: excluded marks them, by index into l's Files, and known holds
// the recorded facts of the others only, for what the index does not answer (IS NULL
// from null counts, <>). Where the index cannot help — no filter it answers, no
// index, the record not listing l's files, or the index failing or holding another
// record — it is FileMetas, excluded nil: the same files are skipped either way.
func (r *Record) IndexedFileMetas(ctx context.Context, l *source.Listing, filters []source.Predicate,
	index BoundsIndex) (known []*source.FileMeta, excluded []bool) {
	columns := make([]string, len(filters))
	for i, f := range filters {
		columns[i] = f.Column
	}
	if index == nil || !r.listsFilesOf(l) {
		return r.FileMetas(l, columns), nil
	}
	ranges := r.ranges(l, filters)
	if len(ranges) == 0 {
		return r.FileMetas(l, columns), nil
	}
	files, ok, err := index(ctx, ranges)
	if err != nil || !ok {
		return r.FileMetas(l, columns), nil
	}
	excluded = make([]bool, len(l.Files))
	for i := range excluded {
		excluded[i] = true
	}
	for _, k := range files {
		if k >= 0 && k < len(excluded) {
			excluded[k] = false
		}
	}
	known = r.fileMetas(l, columns, func(i int) int {
		if excluded[i] {
			return -1
		}
		return i
	})
	return known, excluded
}

// listsFilesOf reports whether the record lists l's files one by one, in l's order.
func (r *Record) listsFilesOf(l *source.Listing) bool {
	if r.LoadDetail() != nil || !r.PerFileComplete || len(r.PerFile) != len(l.Files) {
		return false
	}
	for k, pf := range r.PerFile {
		if pf.Path != l.Files[k].Info.Path {
			return false
		}
	}
	return true
}

// ranges are the ranges of the record's columns that filters confine rows to, in the
// bounds encoding, for the filters the bounds index answers: =, <, <=, >, >= and IN
// (the range from its least value to its greatest) on a file column the record
// measured with the listing's type. Strict comparisons give closed ranges, which
// admit more files, never fewer. A floating column's bounds count only after a full
// read (which finds the NaN that would otherwise lie outside them), as in FileMetas.
// A filter whose value does not encode exactly in the column's type gives no range.
func (r *Record) ranges(l *source.Listing, filters []source.Predicate) []ColumnRange {
	var out []ColumnRange
	for _, f := range filters {
		i := l.Schema.FieldIndices(f.Column)
		if len(i) != 1 || l.Partition(i[0]) >= 0 {
			continue
		}
		dt := l.Schema.Field(i[0]).Type
		j := r.ColumnIndex(f.Column)
		codec, ok := CodecFor(dt)
		if j < 0 || !ok || r.Columns[j].DataType != types.Name(dt) || types.IsFloat(codec.Type()) && r.Depth != DepthFull {
			continue
		}
		if lo, hi, ok := encodeRange(codec, f); ok {
			out = append(out, ColumnRange{Column: j, Lo: lo, Hi: hi})
		}
	}
	return out
}

// encodeRange is the range predicate f confines its column to, encoded by codec.
func encodeRange(codec Codec, f source.Predicate) (lo, hi []byte, ok bool) {
	switch f.Op {
	case "=", "<", "<=", ">", ">=":
		if len(f.Values) != 1 {
			return nil, nil, false
		}
		b, ok := codec.Encode(f.Values[0])
		if !ok {
			return nil, nil, false
		}
		switch f.Op {
		case "=":
			return b, b, true
		case "<", "<=":
			return nil, b, true
		default:
			return b, nil, true
		}
	case "in":
		for _, v := range f.Values {
			if v.Null {
				continue // equals no value
			}
			b, ok := codec.Encode(v)
			if !ok {
				return nil, nil, false
			}
			if lo == nil || bytes.Compare(b, lo) < 0 {
				lo = b
			}
			if hi == nil || bytes.Compare(b, hi) > 0 {
				hi = b
			}
		}
		return lo, hi, lo != nil
	}
	return nil, nil, false
}
