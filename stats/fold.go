package stats

import (
	"encoding/hex"
	"slices"
	"time"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

// Added returns the files of listing l that old does not describe, when old
// describes a subset of l's files exactly (same path, size and change marker, every
// file listed) and the same columns; ok is false otherwise (a file removed or
// rewritten, a schema change, an incomplete file list), when only recomputing will do.
func Added(old *Record, l *source.Listing) (added []source.FileRef, ok bool) {
	if old == nil || old.LoadDetail() != nil || !old.PerFileComplete || len(old.PerFile) != old.Files {
		return nil, false
	}
	fields := l.Schema.Fields()
	if len(fields) != len(old.Columns) || !slices.Equal(l.Partitions, old.PartitionColumns) {
		return nil, false
	}
	for i, f := range fields {
		c := old.Columns[i]
		if c.Name != f.Name || c.DataType != types.Name(f.Type) {
			return nil, false
		}
	}
	known := make(map[string]File, len(old.PerFile))
	for _, f := range old.PerFile {
		known[f.Path] = f
	}
	seen := 0
	for _, ref := range l.Files {
		f, ok := known[ref.Info.Path]
		if !ok {
			added = append(added, ref)
			continue
		}
		m, err := ref.Marker()
		if err != nil || f.Bytes != ref.Info.Size || f.Marker != hex.EncodeToString([]byte(m)) {
			return nil, false // rewritten
		}
		seen++
	}
	if seen != len(old.PerFile) {
		return nil, false // a file was removed
	}
	return added, true
}

// Fold merges part, a record of only the files Added found (built like old, at the
// same depth), into old, giving the record of the whole listing l at version v.
// Counts add up, bounds widen, sketches merge; exact distinct counts do not survive.
// old and part are not changed.
func Fold(old, part *Record, l *source.Listing, v source.Version, now time.Time) (*Record, error) {
	for _, r := range []*Record{old, part} {
		if err := r.LoadDetail(); err != nil {
			return nil, err
		}
	}
	if len(old.Columns) != len(part.Columns) || old.Depth != part.Depth {
		return nil, errs.New(errs.Internal, "BUG: folding a record of %d columns at %s into one of %d at %s",
			len(part.Columns), part.Depth, len(old.Columns), old.Depth)
	}
	r := &Record{
		DocumentVersion:   DocumentVersion,
		TableID:           old.TableID,
		SourceVersion:     v,
		ComputedAtMS:      now.UnixMilli(),
		Depth:             old.Depth,
		Format:            old.Format,
		Location:          old.Location,
		Rows:              old.Rows + part.Rows,
		Bytes:             old.Bytes + part.Bytes,
		Files:             old.Files + part.Files,
		RowGroups:         old.RowGroups + part.RowGroups,
		UncompressedBytes: old.UncompressedBytes + part.UncompressedBytes,
		LastModifiedMS:    max(old.LastModifiedMS, part.LastModifiedMS),
		PartitionColumns:  old.PartitionColumns,
	}
	for i := range old.Columns {
		c, err := foldColumn(old.Columns[i], part.Columns[i], old.Rows, part.Rows)
		if err != nil {
			return nil, err
		}
		r.Columns = append(r.Columns, c)
	}
	// Files and zones in the listing's (path) order; zones refer to files by index.
	files := append(slices.Clone(old.PerFile), part.PerFile...)
	slices.SortFunc(files, func(a, b File) int {
		switch {
		case a.Path < b.Path:
			return -1
		case a.Path > b.Path:
			return 1
		}
		return 0
	})
	index := make(map[string]int, len(l.Files))
	for i, f := range l.Files {
		index[f.Info.Path] = i
	}
	for _, src := range []struct {
		rec   *Record
		files []File
	}{{old, old.PerFile}, {part, part.PerFile}} {
		for _, z := range src.rec.Zones {
			if z.File < 0 || z.File >= len(src.files) {
				return nil, errs.New(errs.Internal, "BUG: zone of file %d in a record of %d files", z.File, len(src.files))
			}
			i, ok := index[src.files[z.File].Path]
			if !ok {
				return nil, errs.New(errs.Internal, "BUG: file %q is not in the listing", src.files[z.File].Path)
			}
			z.File = i
			r.Zones = append(r.Zones, z)
		}
	}
	slices.SortStableFunc(r.Zones, func(a, b Zone) int {
		if a.File != b.File {
			return a.File - b.File
		}
		return a.RowGroup - b.RowGroup
	})
	// Every file's zones must add up to its rows, or the renumbering went wrong.
	rows := make([]int64, len(l.Files))
	for _, z := range r.Zones {
		rows[z.File] += z.Rows
	}
	for i, f := range files {
		if i >= len(l.Files) || l.Files[i].Info.Path != f.Path || rows[i] != f.Rows {
			return nil, errs.New(errs.Internal, "BUG: folded record's file %d (%q) does not match its zones or the listing", i, f.Path)
		}
	}
	r.PerFileComplete = len(files) <= PerFileLimit
	r.PerFile = []File{}
	if r.PerFileComplete {
		r.PerFile = files
	}
	return r, nil
}

// foldColumn merges one column's facts over two disjoint sets of rows.
func foldColumn(a, b Column, rowsA, rowsB int64) (Column, error) {
	m := NewZoneMerge()
	m.Add(a.Partials(), rowsA)
	m.Add(b.Partials(), rowsB)
	c := Column{Name: a.Name, DataType: a.DataType, Bytes: a.Bytes + b.Bytes}
	c.SetPartials(m.Result())
	// A side with no value needs no sketch: the other side's stands for both.
	allNull := func(c Column, rows int64) bool { return c.NullCount != nil && *c.NullCount == rows }
	switch {
	case a.Distinct != nil && b.Distinct == nil && allNull(b, rowsB):
		c.Distinct = a.Distinct
	case b.Distinct != nil && a.Distinct == nil && allNull(a, rowsA):
		c.Distinct = b.Distinct
	}
	switch {
	case a.Quantiles != nil && b.Quantiles == nil && allNull(b, rowsB):
		c.Quantiles = a.Quantiles
	case b.Quantiles != nil && a.Quantiles == nil && allNull(a, rowsA):
		c.Quantiles = b.Quantiles
	}
	var err error
	if a.Distinct != nil && b.Distinct != nil {
		if c.Distinct, err = mergeSketches(NewHLL(), NewHLL(), a.Distinct, b.Distinct); err != nil {
			return c, err
		}
	}
	if a.Quantiles != nil && b.Quantiles != nil {
		if c.Quantiles, err = mergeSketches(NewKLL(), NewKLL(), a.Quantiles, b.Quantiles); err != nil {
			return c, err
		}
	}
	return c, nil
}

// sketch is what HLL and KLL have in common: a byte form and a merge.
type sketch[S any] interface {
	*S
	UnmarshalBinary([]byte) error
	MarshalBinary() ([]byte, error)
	Merge(*S)
}

// mergeSketches decodes two serialised sketches into x and y, merges y into x and
// returns x's bytes.
func mergeSketches[S any, P sketch[S]](x, y P, a, b []byte) ([]byte, error) {
	if err := x.UnmarshalBinary(a); err != nil {
		return nil, err
	}
	if err := y.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	x.Merge((*S)(y))
	return x.MarshalBinary()
}
