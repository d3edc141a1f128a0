package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/source/deletes"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// maxTruncatedBound is the length from which a string or binary upper bound may have
// been cut by its writer (Iceberg's default metrics keep 16 characters): only shorter
// ones are used.
const maxTruncatedBound = 16

// builder turns one snapshot of a table into a listing.
type builder struct {
	ctx      context.Context
	store    storage.Store
	location string
	metaPath string
	md       *metadata
	raw      []byte
	snap     *snapshot
	latest   bool
	paths    *resolver
	obj      *objects

	fields []schemaField
	dts    []arrow.DataType
	byID   map[int]int // field id -> schema index
	l      *source.Listing
}

// dataFile is a live data file of the snapshot.
type dataFile struct {
	df  *contentFile
	seq int64
	ref source.FileRef
}

// deleteFile is a live delete file of the snapshot.
type deleteFile struct {
	df   *contentFile
	seq  int64
	path string
	eq   *source.EqualityDelete // loaded when first applied
}

func (b *builder) build() (*source.Listing, error) {
	if err := b.buildSchema(); err != nil {
		return nil, err
	}
	l := b.l
	if b.snap == nil {
		l.Lake = &source.Lake{Kind: source.KindIceberg}
		return l, nil
	}
	l.Lake = &source.Lake{Kind: source.KindIceberg, Version: b.snap.Sequence, SnapshotID: b.snap.id()}
	data, dels, err := b.entries()
	if err != nil {
		return nil, err
	}
	if err := b.applyDeletes(data, dels); err != nil {
		return nil, err
	}
	l.Files = make([]source.FileRef, len(data))
	for i := range data {
		l.Files[i] = data[i].ref
	}
	b.partitions(l)
	sortFiles(l.Files)
	return l, nil
}

// partitions makes the columns every data file's partition spec keeps by identity
// partition columns of the listing, valued from the manifests: the plan prunes files
// by them and the statistics take them as constants. A column only some specs keep
// (the spec evolved) stays a column, filled from the manifest where a file lacks it.
func (b *builder) partitions(l *source.Listing) {
	if len(l.Files) == 0 {
		return
	}
	var cols []int
	for i := range b.fields {
		if !slices.ContainsFunc(l.Files, func(f source.FileRef) bool { _, ok := f.Fill[i]; return !ok }) {
			cols = append(cols, i)
		}
	}
	for _, i := range cols {
		l.Partitions = append(l.Partitions, l.Schema.Field(i).Name)
	}
	for k := range l.Files {
		f := &l.Files[k]
		f.PartitionValues = make([]types.Value, len(cols))
		for j, i := range cols {
			f.PartitionValues[j] = f.Fill[i]
		}
	}
}

// buildSchema makes the listing's schema: the current schema for the latest
// snapshot, the snapshot's own for an older one.
func (b *builder) buildSchema() error {
	s := b.md.currentSchema()
	if !b.latest && b.snap != nil && b.snap.SchemaID != nil {
		if sc := b.md.schemaByID(*b.snap.SchemaID); sc != nil {
			s = sc
		}
	}
	b.fields = s.Fields
	b.byID = map[int]int{}
	arrowFields := make([]arrow.Field, len(b.fields))
	b.dts = make([]arrow.DataType, len(b.fields))
	for i, f := range b.fields {
		dt, err := arrowType(f.Type, 0)
		if err != nil {
			return corrupt(b.metaPath, "column %q: %v", f.Name, err)
		}
		b.dts[i] = dt
		b.byID[f.ID] = i
		arrowFields[i] = arrow.Field{Name: f.Name, Type: dt, Nullable: true}
	}
	var rs rawSchemas
	if err := json.Unmarshal(b.raw, &rs); err != nil {
		return corrupt(b.metaPath, "%v", err)
	}
	mapping := b.md.nameMapping()
	cols, err := columnSources(b.fields, b.dts, mapping, rs.defaults(s.ID))
	if err != nil {
		return corrupt(b.metaPath, "%v", err)
	}
	b.l = &source.Listing{Location: b.location, Format: "iceberg", Columns: cols}
	b.l.SetSchema(arrowFields)
	return nil
}

// entries reads the snapshot's manifest list and manifests: the live data and delete
// files, with their data sequence numbers inherited from the manifest list.
func (b *builder) entries() ([]dataFile, []*deleteFile, error) {
	manifests, err := b.snap.manifests(b.obj)
	if err != nil {
		list := b.paths.resolve(b.snap.ManifestList)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, errs.New(errs.CorruptSource, "Iceberg table %q: the manifest list %q of snapshot %d is missing", b.location, list, b.snap.id())
		}
		if code := errs.CodeOf(err); code == errs.SourceUnavailable || code == errs.Canceled {
			return nil, nil, err
		}
		return nil, nil, corrupt(list, "invalid manifest list of snapshot %d: %v", b.snap.id(), err)
	}
	var data []dataFile
	var dels []*deleteFile
	for _, mf := range manifests {
		if err := b.ctx.Err(); err != nil {
			return nil, nil, err
		}
		mpath := b.paths.resolve(mf.path)
		entries, err := b.readManifest(mf)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil, errs.New(errs.CorruptSource, "Iceberg table %q: the manifest %q of snapshot %d is missing", b.location, mpath, b.snap.id())
			}
			if code := errs.CodeOf(err); code == errs.SourceUnavailable || code == errs.Canceled {
				return nil, nil, err
			}
			return nil, nil, corrupt(mpath, "invalid manifest: %v", err)
		}
		group := b.manifestMeta(mf)
		for i := range entries {
			e := &entries[i]
			df := &e.file
			if e.status == entryDeleted {
				continue
			}
			seq := e.seq
			if b.md.FormatVersion == 1 || seq < 0 {
				seq = 0
			}
			switch df.content {
			case contentData:
				if !strings.EqualFold(df.format, "parquet") {
					return nil, nil, corrupt(mpath, "data file %q is %s, and Lore reads Parquet data files", df.path, df.format)
				}
				d, err := b.dataFile(df, seq, e.snapshotID)
				if err != nil {
					return nil, nil, corrupt(mpath, "%v", err)
				}
				d.ref.Group = group
				data = append(data, d)
			case contentPositionDeletes, contentEqualityDeletes:
				dels = append(dels, &deleteFile{df: df, seq: seq, path: b.paths.resolve(df.path)})
			default:
				return nil, nil, corrupt(mpath, "entry of unknown content %d", df.content)
			}
		}
	}
	return data, dels, nil
}

// maxManifest bounds a manifest file.
const maxManifest = 512 << 20

// readManifest reads a manifest's live entries through the store.
func (b *builder) readManifest(mf manifestFile) ([]manifestEntry, error) {
	data, err := b.obj.read(mf.path, maxManifest)
	if err != nil {
		return nil, err
	}
	return decodeManifest(mf, data, b.md.specByID)
}

// dataFile describes one data file: path, size, when it was added, partition fills and
// what the manifest states of it. A data file is never rewritten in place: the time of
// the snapshot that added it (else, that snapshot expired, of the one read) marks it.
func (b *builder) dataFile(df *contentFile, seq, added int64) (dataFile, error) {
	if df.path == "" {
		return dataFile{}, fmt.Errorf("a data file has no path")
	}
	if df.size < 0 || df.records < -1 {
		return dataFile{}, fmt.Errorf("data file %q has size %d and %d rows", df.path, df.size, df.records)
	}
	ref := source.FileRef{Info: storage.ObjectInfo{Path: b.paths.resolve(df.path), Size: df.size}}
	at := b.snap
	if s := b.md.snapshotByID(added); s != nil {
		at = s
	}
	ref.Info.ModTime = time.UnixMilli(*at.TimestampMs)
	fills, err := b.identityValues(df)
	if err != nil {
		return dataFile{}, fmt.Errorf("data file %q: %w", df.path, err)
	}
	if len(fills) > 0 {
		ref.Fill = fills
	}
	ref.Meta = b.fileMeta(df, fills)
	return dataFile{df: df, seq: seq, ref: ref}, nil
}

// identityValues are the values of the columns the file's partition spec keeps by
// identity, from its partition tuple.
func (b *builder) identityValues(df *contentFile) (map[int]types.Value, error) {
	spec := b.md.specByID(df.specID)
	if spec == nil || len(spec.Fields) == 0 {
		return nil, nil
	}
	part := df.partition
	var out map[int]types.Value
	for _, pf := range spec.Fields {
		if pf.Transform.kind != transformIdentity || len(pf.SourceIDs) != 1 {
			continue
		}
		col, ok := b.byID[pf.SourceIDs[0]]
		if !ok || types.IsNested(b.dts[col]) {
			continue // a column since dropped, or inside a struct
		}
		x, ok := part[pf.FieldID]
		if !ok {
			continue
		}
		v, err := partitionValue(x, b.dts[col])
		if err != nil {
			return nil, fmt.Errorf("partition field %q: %w", pf.Name, err)
		}
		if out == nil {
			out = map[int]types.Value{}
		}
		out[col] = v
	}
	return out, nil
}

// fileMeta is what the manifest states of a data file: its rows, and per column its
// bounds and null count, for skipping it before its footer. Bounds are never exact
// (they need not be values of the column), and only bounds that bound are kept: an
// upper bound of a string or binary long enough to have been truncated is not (the
// writer may not have rounded it up), nor a float's while NaN is not ruled out.
func (b *builder) fileMeta(df *contentFile, fills map[int]types.Value) *source.FileMeta {
	m := &source.FileMeta{Rows: df.records}
	lower, upper := df.lower, df.upper
	nulls, nans := df.nullCounts, df.nanCounts
	m.Columns = make([]parquet.ColumnStats, len(b.fields))
	for i, f := range b.fields {
		dt := b.dts[i]
		if types.IsNested(dt) || (b.l != nil && i < len(b.l.Columns) && b.l.Columns[i].Unmapped) {
			// A column the name mapping leaves out reads as NULL from a file without
			// field ids, whatever its writer measured there.
			continue
		}
		cs := &m.Columns[i]
		if n, ok := nulls[f.ID]; ok && n >= 0 && (m.Rows < 0 || n <= m.Rows) {
			cs.HasNullCount, cs.NullCount = true, n
		}
		lo, okLo := lower[f.ID]
		hi, okHi := upper[f.ID]
		if okLo && okHi {
			min, ok1 := boundValue(lo, dt)
			max, ok2 := boundValue(hi, dt)
			switch {
			case !ok1 || !ok2 || !boundsBound(dt, max):
			case types.IsFloat(dt) && nans[f.ID] != 0:
			case types.IsFloat(dt):
				if _, ok := nans[f.ID]; ok {
					cs.HasMinMax, cs.Min, cs.Max = true, min, max
				}
			default:
				cs.HasMinMax, cs.Min, cs.Max = true, min, max
			}
		}
		// An identity partition column whose value is NULL is NULL in every row
		// (partitionBounds below bounds one that is not).
		if v, ok := fills[i]; ok && v.Null && !cs.HasMinMax && m.Rows >= 0 {
			cs.HasNullCount, cs.NullCount = true, m.Rows
		}
	}
	// The partition fields bound their source columns (an identity's value, a day of
	// a timestamp, a truncated integer): what the entry states is narrowed by them.
	if spec := b.md.specByID(df.specID); spec != nil && len(spec.Fields) > 0 {
		part := df.partition
		b.partitionBounds(spec, m.Columns, func(i int, dt arrow.DataType) (lo, hi types.Value, nulls, ok bool) {
			x, ok := part[spec.Fields[i].FieldID]
			if !ok {
				return lo, hi, false, false
			}
			v, err := partitionValue(x, dt)
			return v, v, v.Null, err == nil
		})
	}
	return m
}

// manifestMeta is what a manifest's partition summaries state of every data file it
// lists, for skipping them all at once: per column the range its partition fields'
// bounds allow, and no NULL where a field has none; nil when they state nothing.
func (b *builder) manifestMeta(mf manifestFile) *source.FileMeta {
	sums := mf.partitions
	spec := b.md.specByID(mf.specID)
	if spec == nil || len(spec.Fields) == 0 || len(sums) != len(spec.Fields) {
		return nil
	}
	m := &source.FileMeta{Rows: -1, Columns: make([]parquet.ColumnStats, len(b.fields))}
	b.partitionBounds(spec, m.Columns, func(i int, dt arrow.DataType) (lo, hi types.Value, nulls, ok bool) {
		s := sums[i]
		nulls = s.containsNull
		if !s.hasLower || !s.hasUpper {
			// Only NULLs (or NaNs), or bounds not kept: only the NULLs say something.
			return types.NullOf(dt), types.NullOf(dt), nulls, true
		}
		lo, okLo := boundValue(s.lower, dt)
		hi, okHi := boundValue(s.upper, dt)
		if !okLo || !okHi {
			return types.NullOf(dt), types.NullOf(dt), nulls, true
		}
		return lo, hi, nulls, true
	})
	if !slices.ContainsFunc(m.Columns, func(cs parquet.ColumnStats) bool { return cs.HasMinMax || cs.HasNullCount }) {
		return nil
	}
	return m
}

// applyDeletes attaches the delete files to the data files they apply to: position
// deletes and deletion vectors to the files they name whose data sequence number is
// not above theirs; equality deletes to the files of an earlier sequence number in
// the same partition (any partition, when the delete's spec is unpartitioned).
func (b *builder) applyDeletes(data []dataFile, dels []*deleteFile) error {
	if len(dels) == 0 {
		return nil
	}
	byPath := map[string][]int{}
	for i := range data {
		byPath[data[i].ref.Info.Path] = append(byPath[data[i].ref.Info.Path], i)
	}
	positions := make([][]*deletes.Positions, len(data))
	ids := make([][]string, len(data))
	var loose [][]int64 // position deletes from Parquet files, per data file
	loose = make([][]int64, len(data))
	for _, d := range dels {
		switch d.df.content {
		case contentPositionDeletes:
			if strings.EqualFold(d.df.format, "puffin") || d.df.hasContentOffset {
				if err := b.applyDV(d, data, byPath, positions, ids); err != nil {
					return err
				}
				continue
			}
			if !strings.EqualFold(d.df.format, "parquet") {
				return corrupt(d.path, "position delete file of format %s; Lore reads Parquet and Puffin", d.df.format)
			}
			hit, err := b.readPositions(d, data, byPath, loose)
			if err != nil {
				return err
			}
			for _, i := range hit {
				ids[i] = append(ids[i], "p:"+d.path)
			}
		case contentEqualityDeletes:
			if err := b.applyEquality(d, data, ids); err != nil {
				return err
			}
		}
	}
	for i := range data {
		ps := positions[i]
		if len(loose[i]) > 0 {
			slices.Sort(loose[i])
			p, err := deletes.FromSorted(slices.Compact(loose[i]))
			if err != nil {
				return err
			}
			ps = append(ps, p)
		}
		switch len(ps) {
		case 0:
		case 1:
			data[i].ref.Deleted = ps[0]
		default:
			data[i].ref.Deleted = deletes.Union(ps...)
		}
		if len(ids[i]) > 0 {
			slices.Sort(ids[i])
			data[i].ref.DeletesID = strings.Join(ids[i], "\x00")
		}
	}
	return nil
}

// applyDV reads a deletion vector and attaches it to the data file it names.
func (b *builder) applyDV(d *deleteFile, data []dataFile, byPath map[string][]int, positions [][]*deletes.Positions, ids [][]string) error {
	ref, off, size := d.df.referenced, d.df.contentOffset, d.df.contentSize
	if !d.df.hasReferenced || !d.df.hasContentOffset || !d.df.hasContentSize {
		return corrupt(d.path, "a deletion vector without referenced_data_file, content_offset or content_size_in_bytes")
	}
	var targets []int
	for _, i := range byPath[b.paths.resolve(ref)] {
		if data[i].seq <= d.seq {
			targets = append(targets, i)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	p, err := deletes.ReadPuffinDV(b.ctx, b.store, d.path, off, size, d.df.records)
	if err != nil {
		return err
	}
	for _, i := range targets {
		positions[i] = append(positions[i], p)
		ids[i] = append(ids[i], fmt.Sprintf("dv:%s@%d", d.path, off))
	}
	return nil
}

// Field ids of the columns of a position delete file.
const (
	posFilePathID = 2147483546
	posPosID      = 2147483545
)

// readPositions reads a Parquet position delete file into the positions of the data
// files it names whose data sequence number is not above its own; it returns those
// files.
func (b *builder) readPositions(d *deleteFile, data []dataFile, byPath map[string][]int, loose [][]int64) ([]int, error) {
	f, r, err := b.openParquet(d.path, d.df.size)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	pathCol, posCol := fileColumnOf(f, posFilePathID, "file_path"), fileColumnOf(f, posPosID, "pos")
	if pathCol < 0 || posCol < 0 {
		return nil, corrupt(d.path, "a position delete file without file_path and pos columns")
	}
	var hit []int
	seen := map[int]bool{}
	// The paths repeat: resolve each once.
	resolved := map[string][]int{}
	for g := range f.NumRowGroups() {
		err := f.ReadRowGroup(b.ctx, g, []int{pathCol, posCol}, func(batch *vector.Batch) error {
			paths, pos := batch.Cols[0], batch.Cols[1]
			for i := range batch.Rows {
				pv, qv := types.ValueAt(paths, i), types.ValueAt(pos, i)
				if pv.Null || qv.Null || qv.I < 0 || !types.IsInteger(qv.Type) {
					return corrupt(d.path, "row %d is not a file path and a position", i)
				}
				targets, ok := resolved[pv.S]
				if !ok {
					for _, k := range byPath[b.paths.resolve(pv.S)] {
						if data[k].seq <= d.seq {
							targets = append(targets, k)
						}
					}
					resolved[pv.S] = targets
				}
				for _, k := range targets {
					loose[k] = append(loose[k], qv.I)
					if !seen[k] {
						seen[k] = true
						hit = append(hit, k)
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return hit, nil
}

// applyEquality attaches an equality delete file to the data files it applies to,
// reading it when it applies to any.
func (b *builder) applyEquality(d *deleteFile, data []dataFile, ids [][]string) error {
	spec := b.md.specByID(d.df.specID)
	global := spec == nil || spec.unpartitioned()
	part := d.df.partition
	for i := range data {
		dd := &data[i]
		if dd.seq >= d.seq {
			continue
		}
		if !global && (dd.df.specID != d.df.specID || !reflect.DeepEqual(dd.df.partition, part)) {
			continue
		}
		if d.eq == nil {
			eq, err := b.readEquality(d)
			if err != nil {
				return err
			}
			d.eq = eq
		}
		if d.eq.Len() == 0 {
			return nil
		}
		dd.ref.Equality = append(dd.ref.Equality, d.eq)
		ids[i] = append(ids[i], "e:"+d.path)
	}
	return nil
}

// readEquality reads the tuples of an equality delete file: its equality_ids columns,
// typed like the table's, whatever other columns it has.
func (b *builder) readEquality(d *deleteFile) (*source.EqualityDelete, error) {
	eqIDs := d.df.equalityIDs
	if len(eqIDs) == 0 {
		return nil, corrupt(d.path, "an equality delete file without equality_ids")
	}
	f, r, err := b.openParquet(d.path, d.df.size)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fields := make([]int, len(eqIDs))
	cols := make([]int, len(eqIDs))
	for k, id := range eqIDs {
		i, ok := b.byID[id]
		if !ok || types.IsNested(b.dts[i]) {
			return nil, corrupt(d.path, "equality delete on field id %d, which is not a top-level column of the table's schema", id)
		}
		fields[k] = i
		if cols[k] = fileColumnOf(f, id, b.fields[i].Name); cols[k] < 0 {
			return nil, corrupt(d.path, "equality delete file lacks column %q (field id %d)", b.fields[i].Name, id)
		}
	}
	eq := source.NewEqualityDelete(d.path, fields)
	tuple := make([]types.Value, len(cols))
	for g := range f.NumRowGroups() {
		err := f.ReadRowGroup(b.ctx, g, cols, func(batch *vector.Batch) error {
			arrays := make([]arrow.Array, len(cols))
			for k := range cols {
				a, dt := batch.Cols[k], b.dts[fields[k]]
				if !arrow.TypeEqual(types.Unwrap(a.DataType()), dt) {
					var err error
					if a, err = kernels.Cast(a, dt); err != nil {
						return corrupt(d.path, "column %q: %v", b.fields[fields[k]].Name, err)
					}
				}
				arrays[k] = a
			}
			for i := range batch.Rows {
				for k := range arrays {
					tuple[k] = types.ValueAt(arrays[k], i)
				}
				eq.Add(tuple)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return eq, nil
}

// openParquet opens a delete file's footer; the caller closes the reader. A file
// whose size is not what its manifest states is not the file the manifest means.
func (b *builder) openParquet(p string, size int64) (*parquet.File, storage.Reader, error) {
	r, err := b.store.Open(b.ctx, p)
	if err != nil {
		return nil, nil, err
	}
	if size > 0 && r.Size() != size {
		r.Close()
		return nil, nil, corrupt(p, "the delete file is %d bytes, its manifest says %d", r.Size(), size)
	}
	f, err := parquet.Open(b.ctx, r, p)
	if err != nil {
		r.Close()
		return nil, nil, err
	}
	return f, r, nil
}

// fileColumnOf finds a column of a Parquet file by field id, else by name.
func fileColumnOf(f *parquet.File, id int, name string) int {
	sch := f.Schema()
	ids := false
	for j := range sch.NumFields() {
		fid, ok := f.FieldID(j)
		if ok && int(fid) == id {
			return j
		}
		ids = ids || ok
	}
	if idx := sch.FieldIndices(name); len(idx) > 0 && !ids {
		return idx[0]
	}
	return -1
}
