package delta

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// supported are the reader features Lore implements. A table that needs another is
// refused by name rather than read wrongly.
var supported = map[string]bool{
	"columnMapping":        true,
	"deletionVectors":      true,
	"timestampNtz":         true,
	"typeWidening":         true,
	"typeWidening-preview": true,
	"v2Checkpoint":         true,
	"vacuumProtocolCheck":  true,
}

// Open reads the Delta table at location as of at: the newest complete checkpoint at
// or before the version (found by listing _delta_log, from the checkpoint
// _last_checkpoint names where that saves listing the rest) and every commit after it, reconciled by (path, deletion vector). The result is a
// listing of the live files with their partition values, stated statistics and
// deletion vectors, over the table's logical schema. Snapshots are cached by the log
// files that define them, so a statement that finds the log unchanged reuses the last
// one after listing _delta_log alone.
func Open(ctx context.Context, store storage.Store, location string, at source.AsOf) (*source.Listing, error) {
	if at.Metadata != "" {
		return nil, errs.New(errs.Analysis, "Delta table %q has versions, not Iceberg metadata versions", location)
	}
	root := strings.TrimSuffix(location, "/")
	if root == "" {
		root = location
	}
	ll, err := listLog(ctx, store, root, at)
	if err != nil {
		return nil, err
	}
	if ll.latest < 0 {
		return nil, errs.New(errs.SourceUnavailable, "no Delta table at %q: %s has no commit or checkpoint", location, ll.dir)
	}
	travel := !at.Latest()
	target := ll.latest
	switch {
	case at.HasVersion:
		if at.Version < 0 || at.Version > ll.latest {
			return nil, errs.New(errs.Analysis, "Delta table %q has no version %d (the latest is %d)", location, at.Version, ll.latest)
		}
		target = at.Version
	case !at.Time.IsZero():
		if target, err = versionAt(ctx, store, ll, at.Time, location); err != nil {
			return nil, err
		}
	}
	points, cpv := ll.checkpoint(target)
	var commits []logEntry
	for v := cpv + 1; v <= target; v++ {
		e, ok := ll.commit(v)
		if !ok {
			if travel {
				return nil, errs.New(errs.Analysis, "version %d of Delta table %q cannot be read: the log entries it needs were cleaned up", target, location)
			}
			return nil, corrupt(storage.Join(ll.dir, fmt.Sprintf("%020d.json", v)), "the commit of version %d is missing (the log goes from %s to version %d)", v, startName(cpv), target)
		}
		commits = append(commits, e)
	}
	if err := describe(ctx, store, points); err != nil {
		return nil, err
	}
	if err := describe(ctx, store, commits); err != nil {
		return nil, err
	}
	key := cacheKey(root, target, points, commits)
	if l, ok := snapshots.Get(key); ok {
		return l, nil
	}
	l, err := replay(ctx, store, root, ll, target, points, commits)
	if err != nil {
		return nil, err
	}
	if travel {
		// Files of an old version may have been vacuumed: say so now, not mid-scan.
		for _, f := range l.Files {
			if _, err := store.Stat(ctx, f.Info.Path); err != nil {
				return nil, errs.New(errs.Analysis, "version %d of Delta table %q cannot be read: its data file %q is gone (vacuumed)", target, location, f.Info.Path)
			}
		}
	}
	snapshots.Put(key, l)
	return l, nil
}

func startName(cpv int64) string {
	if cpv < 0 {
		return "the first commit"
	}
	return fmt.Sprintf("the checkpoint of version %d", cpv)
}

// state is the table as log replay has built it so far.
type state struct {
	files    map[string]*add
	meta     *metaData
	proto    *protocol
	sidecars []string
}

func (s *state) apply(a *action) {
	switch {
	case a.Add != nil:
		s.files[fileKey(a.Add.Path, a.Add.DeletionVector)] = a.Add
	case a.Remove != nil:
		delete(s.files, fileKey(a.Remove.Path, a.Remove.DeletionVector))
	case a.MetaData != nil:
		s.meta = a.MetaData
	case a.Protocol != nil:
		s.proto = a.Protocol
	case a.Sidecar != nil:
		s.sidecars = append(s.sidecars, a.Sidecar.Path)
	}
}

// replay reconstructs version target from a checkpoint and the commits after it.
func replay(ctx context.Context, store storage.Store, root string, ll *logListing, target int64, points, commits []logEntry) (*source.Listing, error) {
	s := &state{files: map[string]*add{}}
	for _, e := range points {
		if err := readCheckpoint(ctx, store, e.info, s); err != nil {
			return nil, err
		}
	}
	for _, name := range s.sidecars {
		o, ok := ll.sidecars[path.Base(name)]
		if !ok {
			return nil, corrupt(points[0].info.Path, "its sidecar %q is missing", name)
		}
		if err := readCheckpoint(ctx, store, o, s); err != nil {
			return nil, err
		}
	}
	// Removes in a checkpoint are tombstones for vacuum; only its adds are files.
	for _, e := range commits {
		if err := ctx.Err(); err != nil {
			return nil, err // a statement canceled while a long log replays
		}
		b, err := readAll(ctx, store, e.info)
		if err != nil {
			return nil, err
		}
		if err := parseCommit(e.info.Path, b, func(a *action) error { s.apply(a); return nil }); err != nil {
			return nil, err
		}
	}
	defining := ll.dir
	if len(commits) > 0 {
		defining = commits[len(commits)-1].info.Path
	} else if len(points) > 0 {
		defining = points[0].info.Path
	}
	if s.meta == nil || s.proto == nil {
		return nil, corrupt(defining, "version %d has no metaData or protocol action", target)
	}
	if err := checkProtocol(defining, s.proto); err != nil {
		return nil, err
	}
	return build(ctx, store, root, target, defining, s)
}

// checkProtocol refuses a table whose protocol needs a reader feature Lore lacks.
func checkProtocol(file string, p *protocol) error {
	switch {
	case p.MinReaderVersion > 3:
		return errs.New(errs.CorruptSource, "Delta table needs reader version %d, and Lore reads up to 3 (%s)", p.MinReaderVersion, file)
	case p.MinReaderVersion == 3:
		for _, f := range p.ReaderFeatures {
			if !supported[f] {
				return errs.New(errs.CorruptSource, "Delta table needs the reader feature %q, which Lore does not implement (%s)", f, file)
			}
		}
	}
	return nil
}

// build turns the replayed state into a listing.
func build(ctx context.Context, store storage.Store, root string, version int64, defining string, s *state) (*source.Listing, error) {
	if p := strings.ToLower(s.meta.Format.Provider); p != "" && p != "parquet" {
		return nil, corrupt(defining, "data files are %q, not Parquet", s.meta.Format.Provider)
	}
	mode := s.meta.Configuration["delta.columnMapping.mode"]
	cols, err := parseSchema(s.meta.SchemaString, mode)
	if err != nil {
		return nil, corrupt(defining, "%v", err)
	}
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
	}
	l := &source.Listing{Location: root, Format: "delta", Columns: sources(cols, mode)}
	var partCols []column
	for _, c := range cols {
		if slices.ContainsFunc(s.meta.PartitionColumns, func(p string) bool { return strings.EqualFold(p, c.name) }) {
			l.Partitions = append(l.Partitions, c.name)
			partCols = append(partCols, c)
		}
	}
	if len(l.Partitions) != len(s.meta.PartitionColumns) {
		return nil, corrupt(defining, "partition columns %v are not all in the schema", s.meta.PartitionColumns)
	}
	l.SetSchema(fields)
	keys := make([]string, 0, len(s.files))
	for k := range s.files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	l.Files = make([]source.FileRef, 0, len(keys))
	h := sha256.New()
	source.DigestField(h, []byte(root))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(version))
	source.DigestField(h, n[:])
	source.DigestField(h, []byte(s.meta.ID))
	source.DigestField(h, []byte(s.meta.SchemaString))
	for _, k := range keys {
		a := s.files[k]
		p, err := filePath(root, a.Path)
		if err != nil {
			return nil, corrupt(defining, "%v", err)
		}
		ref := source.FileRef{Info: storage.ObjectInfo{Path: p, Size: a.Size, ModTime: time.UnixMilli(a.ModificationTime)}}
		ref.PartitionValues = make([]types.Value, len(partCols))
		for i, c := range partCols {
			raw, ok := a.PartitionValues[c.physical]
			if !ok {
				raw = a.PartitionValues[c.name]
			}
			v, err := partitionValue(raw, c.typ)
			if err != nil {
				return nil, corrupt(defining, "partition value %q of column %q for %q: %v", deref(raw), c.name, a.Path, err)
			}
			ref.PartitionValues[i] = v
		}
		ref.Meta = fileMeta(a, cols, l)
		if a.DeletionVector != nil {
			d, err := a.DeletionVector.Read(ctx, store, root)
			if err != nil {
				return nil, err
			}
			if d != nil {
				ref.Deleted, ref.DeletesID = d, a.DeletionVector.ID()
			}
		}
		l.Files = append(l.Files, ref)
		source.DigestField(h, []byte(k))
		binary.BigEndian.PutUint64(n[:], uint64(a.Size))
		source.DigestField(h, n[:])
	}
	sort.SliceStable(l.Files, func(i, j int) bool { return l.Files[i].Info.Path < l.Files[j].Info.Path })
	l.Lake = &source.Lake{Kind: source.KindDelta, Version: version, Identity: h.Sum(nil)}
	return l, nil
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return *s
}

// filePath resolves a path of the log (a URI-encoded path relative to the table, or
// an absolute URI) to a storage path.
func filePath(root, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("a file has an empty path")
	}
	if u, err := url.Parse(p); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		switch u.Scheme {
		case "file":
			return u.Path, nil
		}
		if u.Host == "" || u.Opaque != "" {
			return p, nil // not a store's URI Lore reads; its store says so
		}
		// Another store's URI (s3://bucket/key): the log writes it encoded, and the
		// key is the decoded path.
		return u.Scheme + "://" + u.Host + u.Path, nil
	}
	dec, err := url.PathUnescape(p)
	if err != nil {
		return "", fmt.Errorf("path %q is not a valid URI path: %v", p, err)
	}
	if strings.HasPrefix(dec, "/") {
		return dec, nil
	}
	return root + "/" + dec, nil
}

// fileMeta is what an add action states of its file: the row count and per column
// bounds and null counts, from the JSON stats or a checkpoint's stats_parsed.
//
// Bounds are marked exact (values that occur among the file's rows) only where no
// writer could have changed them (exactBounds): the bounds are tight (the protocol's
// tightBounds, false once rows were deleted by a deletion vector), the file has no
// deletion vector, and the type is one writers state as it is. Null counts of wide
// bounds carry information only when 0 or all rows (PROTOCOL.md, Per-file Statistics);
// any other count is dropped.
func fileMeta(a *add, cols []column, l *source.Listing) *source.FileMeta {
	m := &source.FileMeta{Rows: -1}
	var min, max, nul func(c column) (types.Value, bool)
	var wide, text bool
	switch {
	case a.Stats != nil && *a.Stats != "":
		var st stats
		if err := json.Unmarshal([]byte(*a.Stats), &st); err != nil {
			return m // stats are an optimisation: unreadable ones are none
		}
		if st.NumRecords != nil && *st.NumRecords >= 0 {
			m.Rows = *st.NumRecords
		}
		wide, text = st.TightBounds != nil && !*st.TightBounds, true
		read := func(vals map[string]json.RawMessage) func(c column) (types.Value, bool) {
			return func(c column) (types.Value, bool) {
				raw, ok := vals[c.physical]
				if !ok {
					return types.Value{}, false
				}
				return jsonValue(raw, c.typ)
			}
		}
		min, max = read(st.MinValues), read(st.MaxValues)
		nul = func(c column) (types.Value, bool) {
			n, ok := jsonInt(st.NullCount[c.physical])
			return types.IntValue(n), ok && n >= 0
		}
	case a.parsed != nil:
		m.Rows, wide = a.parsed.rows, a.parsed.wide
		typed := func(vals map[string]types.Value) func(c column) (types.Value, bool) {
			return func(c column) (types.Value, bool) {
				v, ok := vals[c.physical]
				if !ok || v.Null {
					return types.Value{}, false
				}
				if !arrow.TypeEqual(v.Type, c.typ) {
					w, exact, ok := source.WidenValue(v, c.typ)
					if !ok || !exact {
						return types.Value{}, false
					}
					v = w
				}
				return v, true
			}
		}
		min, max = typed(a.parsed.min), typed(a.parsed.max)
		nul = func(c column) (types.Value, bool) {
			v, ok := a.parsed.nul[c.physical]
			return v, ok && !v.Null && types.IsInteger(v.Type) && v.I >= 0
		}
	default:
		return m
	}
	tight := !wide && a.DeletionVector == nil
	m.Columns = make([]parquet.ColumnStats, len(cols))
	for i, c := range cols {
		if l.Partition(i) >= 0 || types.IsNested(c.typ) {
			continue
		}
		cs := &m.Columns[i]
		if n, ok := nul(c); ok && (!wide || n.I == 0 || n.I == m.Rows) {
			cs.HasNullCount, cs.NullCount = true, n.I
		}
		lo, okLo := min(c)
		hi, okHi := max(c)
		if !okLo || !okHi {
			continue
		}
		exact := tight && exactBounds(c.typ, lo, hi, text)
		if !bound(c.typ, &hi) {
			continue
		}
		cs.HasMinMax, cs.Min, cs.Max = true, lo, hi
		cs.MinExact, cs.MaxExact = exact, exact
	}
	return m
}

// exactBounds reports whether tight bounds lo and hi of type dt, as a writer stated
// them (as JSON text when text), are the values themselves. Writers keep timestamps to
// the millisecond; cut strings to a prefix (delta-spark to 32 characters, adding a
// character to the maximum; others at 32 bytes or more), so only a value shorter than
// 32 bytes is surely whole; and leave NaN out of floating-point bounds. Some write
// decimals in JSON as doubles, which keep 15 significant digits.
func exactBounds(dt arrow.DataType, lo, hi types.Value, text bool) bool {
	switch {
	case types.IsFloat(dt), dt.ID() == arrow.TIMESTAMP:
		return false
	case types.IsString(dt), types.IsBinary(dt):
		return len(lo.S) < 32 && len(hi.S) < 32
	case types.IsDecimal(dt):
		return !text || dt.(arrow.DecimalType).GetPrecision() <= 15
	}
	return true
}

// bound makes a stated maximum an upper bound of the values it stands for: writers
// keep timestamps to the millisecond (so the true maximum may be up to 999µs more)
// and cut long strings to a prefix (which bounds nothing above).
func bound(dt arrow.DataType, hi *types.Value) bool {
	switch {
	case dt.ID() == arrow.TIMESTAMP:
		hi.I += 999
	case types.IsString(dt):
		return len([]rune(hi.S)) < 32
	case types.IsBinary(dt):
		return len(hi.S) < 32
	case types.IsFloat(dt):
		return false // NaN sorts above every stated maximum
	}
	return true
}

// jsonValue reads a stated bound: a JSON number or string, typed dt.
func jsonValue(raw json.RawMessage, dt arrow.DataType) (types.Value, bool) {
	if types.IsNested(dt) || dt.ID() == arrow.BOOL || dt.ID() == arrow.BINARY {
		return types.Value{}, false
	}
	// raw is valid JSON (it was decoded as part of the stats): a number or a string
	// without escapes is its own text, read without a decoder. A string that is not
	// UTF-8 is decoded, which replaces its invalid bytes.
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return types.Value{}, false
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		v, err := parseText(string(raw), dt)
		return v, err == nil && !v.Null
	case len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw):
		v, err := parseText(string(raw[1:len(raw)-1]), dt)
		return v, err == nil && !v.Null
	}
	s, ok := jsonText(raw)
	if !ok {
		return types.Value{}, false
	}
	v, err := parseText(s, dt)
	return v, err == nil && !v.Null
}

// readCheckpoint reads a checkpoint file (or a V2 checkpoint's sidecar) into s:
// Parquet by its columns add, metaData, protocol and sidecar; JSON as actions.
func readCheckpoint(ctx context.Context, store storage.Store, o storage.ObjectInfo, s *state) error {
	if strings.HasSuffix(o.Path, ".json") {
		b, err := readAll(ctx, store, o)
		if err != nil {
			return err
		}
		return parseCommit(o.Path, b, func(a *action) error {
			if a.Remove == nil {
				s.apply(a)
			}
			return nil
		})
	}
	r, err := storage.OpenInfo(ctx, store, o)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := parquet.Open(ctx, r, o.Path)
	if err != nil {
		return err
	}
	var cols []int
	var names []string
	for i, fld := range f.Schema().Fields() {
		switch fld.Name {
		case "add", "metaData", "protocol", "sidecar":
			cols = append(cols, i)
			names = append(names, fld.Name)
		}
	}
	if len(cols) == 0 {
		return nil // a part of a multi-part checkpoint may hold other actions alone
	}
	for g := range f.NumRowGroups() {
		err := f.ReadRowGroup(ctx, g, cols, func(b *vector.Batch) error {
			for k, name := range names {
				st, ok := b.Cols[k].(*array.Struct)
				if !ok {
					return corrupt(o.Path, "column %q is %s, not a struct", name, b.Cols[k].DataType())
				}
				for i := range b.Rows {
					row := structRow{st, i}
					if !row.valid() {
						continue
					}
					if err := checkpointAction(o.Path, name, row, s); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// checkpointAction applies the action in column name of one checkpoint row.
func checkpointAction(file, name string, row structRow, s *state) error {
	switch name {
	case "add":
		a, err := addOf(row)
		if err != nil {
			return corrupt(file, "%v", err)
		}
		s.apply(&action{Add: a})
	case "metaData":
		m := &metaData{Configuration: map[string]string{}}
		m.ID, _ = row.str("id")
		m.SchemaString, _ = row.str("schemaString")
		m.Format.Provider, _ = row.child("format").str("provider")
		m.PartitionColumns = row.strList("partitionColumns")
		for k, v := range row.strMap("configuration") {
			if v != nil {
				m.Configuration[k] = *v
			}
		}
		s.apply(&action{MetaData: m})
	case "protocol":
		p := &protocol{}
		if v, ok := row.int("minReaderVersion"); ok {
			p.MinReaderVersion = int(v)
		}
		p.ReaderFeatures = row.strList("readerFeatures")
		s.apply(&action{Protocol: p})
	case "sidecar":
		p, ok := row.str("path")
		if !ok {
			return corrupt(file, "a sidecar action has no path")
		}
		s.apply(&action{Sidecar: &sidecar{Path: p}})
	}
	return nil
}

// versionAt is the newest version committed at or before t: a commit's time is its
// in-commit timestamp, else the timestamp of its commitInfo, else the file's
// modification time.
func versionAt(ctx context.Context, store storage.Store, ll *logListing, t time.Time, location string) (int64, error) {
	var versions []int64
	for v := range ll.commits {
		versions = append(versions, v)
	}
	slices.Sort(versions)
	var ferr error
	// Commit times increase with versions: search.
	i := sort.Search(len(versions), func(i int) bool {
		e, _ := ll.commit(versions[i])
		ts, err := commitTime(ctx, store, e)
		if err != nil && ferr == nil {
			ferr = err
		}
		return ts.After(t)
	})
	if ferr != nil {
		return 0, ferr
	}
	if i == 0 {
		return 0, errs.New(errs.Analysis, "Delta table %q has no version committed at or before %s", location, t.UTC().Format(time.RFC3339Nano))
	}
	return versions[i-1], nil
}

// commitTime is when a commit was made.
func commitTime(ctx context.Context, store storage.Store, e logEntry) (time.Time, error) {
	b, err := readAll(ctx, store, e.info)
	if err != nil {
		return time.Time{}, err
	}
	var ts *int64
	err = parseCommit(e.info.Path, b, func(a *action) error {
		if ci := a.CommitInfo; ci != nil && ts == nil {
			if ci.InCommitTimestamp != nil {
				ts = ci.InCommitTimestamp
			} else {
				ts = ci.Timestamp
			}
		}
		return nil
	})
	if err != nil {
		return time.Time{}, err
	}
	if ts != nil {
		return time.UnixMilli(*ts), nil
	}
	es := []logEntry{e}
	if err := describe(ctx, store, es); err != nil {
		return time.Time{}, err
	}
	return es[0].info.ModTime, nil
}

// cacheKey names a snapshot by the log files that define it.
func cacheKey(root string, version int64, points, commits []logEntry) string {
	h := sha256.New()
	source.DigestField(h, []byte(root))
	for _, e := range append(slices.Clip(points), commits...) {
		source.DigestField(h, []byte(e.info.Path))
		var n [16]byte
		binary.BigEndian.PutUint64(n[:8], uint64(e.info.Size))
		binary.BigEndian.PutUint64(n[8:], uint64(e.info.ModTime.UnixNano()))
		source.DigestField(h, n[:])
	}
	return fmt.Sprintf("%d:%x", version, h.Sum(nil))
}

// snapshots are the snapshots read last.
var snapshots = source.NewSnapshotCache(64)

// DropCachedSnapshots empties the snapshot cache (tests, benchmarks of cold reads).
func DropCachedSnapshots() { snapshots.Drop() }

// jsonText is a JSON string's value, or a JSON number's text exactly as written.
func jsonText(raw []byte) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true
	}
	var num json.Number
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	if d.Decode(&num) != nil {
		return "", false
	}
	return num.String(), true
}
