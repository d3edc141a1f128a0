package stats

import (
	"bytes"
	"encoding/hex"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

// FromFooters builds the metadata-depth record of listing l at version v from the
// files' footers alone (footers[i] is the footer of l.Files[i]): table facts, and per
// column, file and row group the null counts, bounds and bytes the footers state.
// Partition columns take their bounds from the files' partition values. Deleted rows
// (a deletion vector, position deletes) are taken out of the counts; the statistics of
// a row group that lost rows become bounds. A file with equality deletes counts the
// rows it holds before them, and its statistics are bounds. It reads no
// data, so it costs the same whatever the table's size.
//
// Bounds are exact only when every footer that contributed says so. Floating-point
// bounds from footers are never exact: writers leave NaN out of them, and NaN is the
// greatest value for MIN and MAX.
func FromFooters(l *source.Listing, footers []*parquet.File, v source.Version, now time.Time) (*Record, error) {
	if len(footers) != len(l.Files) {
		return nil, errs.New(errs.Internal, "BUG: %d footers for %d files", len(footers), len(l.Files))
	}
	fields := l.Schema.Fields()
	return build(l, v, now, func(fi int, ref *source.FileRef) []zoneStats {
		footer := footers[fi]
		// Where each table column is in this file, if it is there.
		pos := make([]int, len(fields))
		for i, f := range fields {
			pos[i] = -1
			if l.Partition(i) < 0 {
				pos[i] = l.FileColumn(footer, f.Name)
			}
		}
		zones := make([]zoneStats, footer.NumRowGroups())
		for g := range zones {
			info := footer.RowGroup(g)
			zones[g] = zoneStats{rowGroup: g, rows: info.Rows, uncompressed: info.UncompressedBytes,
				column: func(i int) (parquet.ColumnStats, bool) {
					if pos[i] < 0 {
						return parquet.ColumnStats{}, false
					}
					return info.Columns[pos[i]], true
				}}
		}
		return zones
	})
}

// FromLakeStats builds the metadata-depth record of listing l at version v from what
// the table's metadata states of each file (FileRef.Meta), without opening a footer:
// one zone per file (RowGroup WholeFile), since the metadata knows nothing of row
// groups. Everything else is as FromFooters builds it, by the same code: partition
// columns, deletes, per-file and table merges. The metadata states no bytes per column
// nor uncompressed sizes, so those stay 0, and RowGroups counts none. Bounds are exact
// where the source marked them so (parquet.ColumnStats.MinExact and MaxExact).
//
// Every file must carry its statistics (LakeStatsComplete); otherwise it is an error.
func FromLakeStats(l *source.Listing, v source.Version, now time.Time) (*Record, error) {
	if !LakeStatsComplete(l) {
		return nil, errs.New(errs.Internal, "BUG: a record from lake statistics of %q, whose files do not all carry them", l.Location)
	}
	return build(l, v, now, func(_ int, ref *source.FileRef) []zoneStats {
		m := ref.Meta
		if m.Rows == 0 {
			return nil // as a footer of no row group
		}
		return []zoneStats{{rowGroup: WholeFile, rows: m.Rows,
			column: func(i int) (parquet.ColumnStats, bool) { return m.Columns[i], true }}}
	})
}

// LakeStatsComplete reports whether every file of l carries the statistics a record
// needs from lake metadata: its row count, and a null count of every column that is
// not a partition column nor nested (the metadata describes only leaves). A file with
// deleted rows needs no null counts: its counts become unknown whatever the source.
// A column whose null count is missing may be one the file lacks or one its writer
// chose not to describe; only the footer can tell, so such a table is read by footers.
func LakeStatsComplete(l *source.Listing) bool {
	fields := l.Schema.Fields()
	for _, ref := range l.Files {
		m := ref.Meta
		if m == nil || m.Rows < 0 || len(m.Columns) != len(fields) || len(ref.Equality) > 0 {
			return false
		}
		if ref.Deleted != nil && ref.Deleted.Len() > 0 {
			continue
		}
		for i, f := range fields {
			if l.Partition(i) < 0 && !types.IsNested(f.Type) && !m.Columns[i].HasNullCount {
				return false
			}
		}
	}
	return true
}

// zoneStats is what one zone's source states of it: a row group's entry in its
// footer, or a whole file's lake metadata.
type zoneStats struct {
	rowGroup     int   // WholeFile for a file's metadata
	rows         int64 // before deletes
	uncompressed int64 // 0 when not stated
	// column is the statistics of table column i (not a partition column), typed as
	// the file stores it; false when the file lacks the column.
	column func(i int) (parquet.ColumnStats, bool)
}

// build is the one builder of metadata-depth records: zonesOf states the zones of
// each file of l, in order, and build merges them into files and the table, taking
// out deleted rows and filling partition and missing columns.
func build(l *source.Listing, v source.Version, now time.Time, zonesOf func(fi int, ref *source.FileRef) []zoneStats) (*Record, error) {
	r := &Record{
		DocumentVersion:  DocumentVersion,
		SourceVersion:    v,
		ComputedAtMS:     now.UnixMilli(),
		Depth:            DepthMetadata,
		Format:           l.Format,
		Location:         l.Location,
		Files:            len(l.Files),
		PartitionColumns: append([]string{}, l.Partitions...),
		PerFileComplete:  len(l.Files) <= PerFileLimit,
		PerFile:          []File{},
		Zones:            []Zone{},
	}
	fields := l.Schema.Fields()
	codecs := make([]*Codec, len(fields))
	for i, f := range fields {
		r.Columns = append(r.Columns, Column{Name: f.Name, DataType: types.Name(f.Type)})
		if c, ok := CodecFor(f.Type); ok {
			codecs[i] = &c
		}
	}
	floors := make([]int64, len(fields)) // the most distinct values stated for a zone
	tables := make([]ZoneMerge, len(fields))
	for i := range tables {
		tables[i] = NewZoneMerge()
	}
	for fi := range l.Files {
		ref := &l.Files[fi]
		if mt := ref.Info.ModTime.UnixMilli(); !ref.Info.ModTime.IsZero() && mt > r.LastModifiedMS {
			r.LastModifiedMS = mt
		}
		r.Bytes += ref.Info.Size
		zones := zonesOf(fi, ref)
		var fileRows int64
		for _, zs := range zones {
			fileRows += zs.rows
		}
		if ref.Deleted != nil {
			fileRows -= ref.Deleted.Len()
		}
		r.Rows += fileRows
		files := make([]ZoneMerge, len(fields))
		for i := range files {
			files[i] = NewZoneMerge()
		}
		var first int64 // the zone's first row in the file
		for _, zs := range zones {
			if zs.rowGroup >= 0 {
				r.RowGroups++
			}
			r.UncompressedBytes += zs.uncompressed
			// Deleted rows leave the row count exact (the positions are known) but the
			// stated statistics only bounds: a deleted row may have held the minimum
			// or a NULL.
			var deleted int64
			if ref.Deleted != nil {
				deleted = ref.Deleted.CountIn(first, zs.rows)
			}
			// Equality deletes may remove any row: the count is only what is read at
			// most (Listing.Rows says it is unknown, so no statement is answered from
			// it) and the statistics only bounds.
			inexact := deleted > 0 || len(ref.Equality) > 0
			first += zs.rows
			live := zs.rows - deleted
			z := Zone{File: fi, RowGroup: zs.rowGroup, Rows: live, Columns: make([]ZoneColumn, len(fields))}
			for i := range fields {
				// A partition column, or one the file lacks, has its value exactly;
				// what a source states of a column the file holds is exact only while
				// no row is deleted.
				stated := false
				if k := l.Partition(i); k >= 0 {
					z.Columns[i] = partitionZone(ref.PartitionValues[k], live, codecs[i])
				} else if cs, ok := zs.column(i); ok {
					stated = true
					r.Columns[i].Bytes += cs.CompressedBytes
					floors[i] = max(floors[i], cs.Distinct)
					z.Columns[i] = footerZone(cs, codecs[i], fields[i].Type)
				} else {
					// A column the file lacks reads as NULL, or as its default.
					z.Columns[i] = partitionZone(l.MissingIn(*ref, i), live, codecs[i])
				}
				if len(ref.Equality) > 0 || (stated && inexact) {
					z.Columns[i] = ZoneColumn{Min: z.Columns[i].Min, Max: z.Columns[i].Max, HasNaN: z.Columns[i].HasNaN}
				}
				files[i].Add(z.Columns[i], live)
			}
			r.Zones = append(r.Zones, z)
		}
		if len(zones) == 0 {
			for i := range fields {
				n := int64(0)
				files[i].Add(ZoneColumn{NullCount: &n}, 0)
			}
		}
		f := File{Path: ref.Info.Path, Rows: fileRows, Bytes: ref.Info.Size, Columns: make([]ZoneColumn, len(fields))}
		if m, err := ref.Marker(); err == nil {
			f.Marker = hex.EncodeToString([]byte(m))
		}
		if !ref.Info.ModTime.IsZero() {
			f.LastModifiedMS = ref.Info.ModTime.UnixMilli()
		}
		for i := range fields {
			f.Columns[i] = files[i].Result()
			tables[i].Add(f.Columns[i], f.Rows)
		}
		if r.PerFileComplete {
			r.PerFile = append(r.PerFile, f)
		}
	}
	for i := range fields {
		r.Columns[i].SetPartials(tables[i].Result())
		if floors[i] > 0 {
			r.Columns[i].DistinctFloor = &floors[i]
		}
	}
	return r, nil
}

// footerZone turns a column chunk's footer statistics into a zone column of the
// table's type dt. Bounds need a codec; a file whose column has a narrower type (schema
// drift, read widened) has its bounds converted to dt as its values are when read.
func footerZone(cs parquet.ColumnStats, codec *Codec, dt arrow.DataType) ZoneColumn {
	var z ZoneColumn
	if cs.HasNullCount {
		n := cs.NullCount
		z.NullCount = &n
	}
	if !cs.HasMinMax || codec == nil {
		return z
	}
	// A conversion that may round (a decimal read as DOUBLE) leaves the bounds out: the
	// scan's cast might round a value the other way, and a bound must hold every value.
	min, exactLo, okLo := source.WidenValue(cs.Min, dt)
	max, exactHi, okHi := source.WidenValue(cs.Max, dt)
	if !okLo || !okHi || !exactLo || !exactHi {
		return z
	}
	lo, okLo := codec.Encode(min)
	hi, okHi := codec.Encode(max)
	if !okLo || !okHi {
		return z
	}
	z.Min, z.Max = lo, hi
	z.BoundsExact = cs.MinExact && cs.MaxExact && !types.IsFloat(dt)
	return z
}

// partitionZone is a partition column over rows rows of one file: one value, exactly.
func partitionZone(v types.Value, rows int64, codec *Codec) ZoneColumn {
	var nulls int64
	if v.Null {
		nulls = rows
	}
	z := ZoneColumn{NullCount: &nulls}
	if v.Null || rows == 0 || codec == nil {
		return z
	}
	if b, ok := codec.Encode(v); ok {
		z.Min, z.Max, z.BoundsExact = b, b, true
	}
	return z
}

// ZoneMerge folds zone columns into the zone column of their union: null counts add
// up (unknown if any is), bounds widen and are kept only when every zone with a
// non-null value had them, exact only when all of them were.
type ZoneMerge struct {
	nulls      int64
	nullsKnown bool
	min, max   []byte
	exact      bool
	bounded    bool // every zone with a non-null value had bounds
	hasNaN     bool
}

// NewZoneMerge starts a merge of no zones.
func NewZoneMerge() ZoneMerge { return ZoneMerge{nullsKnown: true, exact: true, bounded: true} }

// Add folds in zone column z over rows rows.
func (m *ZoneMerge) Add(z ZoneColumn, rows int64) {
	if z.NullCount == nil {
		m.nullsKnown = false
	} else {
		m.nulls += *z.NullCount
	}
	m.hasNaN = m.hasNaN || z.HasNaN
	if z.Min == nil || z.Max == nil {
		if z.NullCount == nil || *z.NullCount != rows {
			m.bounded = false // values of unknown range
		}
		return
	}
	if m.min == nil || bytes.Compare(z.Min, m.min) < 0 {
		m.min = z.Min
	}
	if m.max == nil || bytes.Compare(z.Max, m.max) > 0 {
		m.max = z.Max
	}
	m.exact = m.exact && z.BoundsExact
}

// Result is the merged zone column.
func (m *ZoneMerge) Result() ZoneColumn {
	z := ZoneColumn{HasNaN: m.hasNaN}
	if m.nullsKnown {
		n := m.nulls
		z.NullCount = &n
	}
	if m.bounded && m.min != nil {
		z.Min, z.Max, z.BoundsExact = m.min, m.max, m.exact
	}
	return z
}
