package delta

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/source/deletes"
	"github.com/loredb/lore/types"
)

// action is one line of a commit: exactly one of its fields is set. Checkpoints hold
// the same actions as columns.
type action struct {
	Add                *add             `json:"add"`
	Remove             *remove          `json:"remove"`
	MetaData           *metaData        `json:"metaData"`
	Protocol           *protocol        `json:"protocol"`
	CommitInfo         *commitInfo      `json:"commitInfo"`
	Sidecar            *sidecar         `json:"sidecar"`
	CheckpointMetadata *json.RawMessage `json:"checkpointMetadata"`
}

// add makes a data file part of the table.
type add struct {
	Path             string             `json:"path"`
	PartitionValues  map[string]*string `json:"partitionValues"`
	Size             int64              `json:"size"`
	ModificationTime int64              `json:"modificationTime"`
	Stats            *string            `json:"stats"`
	DeletionVector   *deletes.DV        `json:"deletionVector"`
	// parsed are the stats a checkpoint stored as columns (stats_parsed), when it did.
	parsed *parsedStats
}

// remove takes a data file (with that deletion vector) out of the table.
type remove struct {
	Path           string      `json:"path"`
	DeletionVector *deletes.DV `json:"deletionVector"`
}

type metaData struct {
	ID               string                    `json:"id"`
	Format           struct{ Provider string } `json:"format"`
	SchemaString     string                    `json:"schemaString"`
	PartitionColumns []string                  `json:"partitionColumns"`
	Configuration    map[string]string         `json:"configuration"`
}

type protocol struct {
	MinReaderVersion int      `json:"minReaderVersion"`
	ReaderFeatures   []string `json:"readerFeatures"`
}

type commitInfo struct {
	Timestamp         *int64 `json:"timestamp"`
	InCommitTimestamp *int64 `json:"inCommitTimestamp"`
}

// sidecar names a file of a V2 checkpoint holding add and remove actions.
type sidecar struct {
	Path string `json:"path"`
}

// key identifies a logical file for reconciliation: its path and deletion vector.
func fileKey(path string, dv *deletes.DV) string {
	if dv == nil {
		return path
	}
	return path + "\x00" + dv.ID()
}

// maxLine bounds one action's JSON: a line longer than this is not a commit.
const maxLine = 256 << 20

// parseCommit reads the actions of one JSON commit (or a V2 checkpoint's top-level
// JSON file), one per line; blank lines are allowed.
func parseCommit(name string, b []byte, fn func(*action) error) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, maxLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var a action
		if err := json.Unmarshal(line, &a); err != nil {
			return corrupt(name, "line %d is not a valid action: %v", n, err)
		}
		if err := fn(&a); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return corrupt(name, "%v", err)
	}
	return nil
}

// stats is an add action's JSON statistics.
type stats struct {
	NumRecords *int64 `json:"numRecords"`
	// TightBounds false says the bounds are wide (rows were deleted since they were
	// computed); absent means true.
	TightBounds *bool                      `json:"tightBounds"`
	MinValues   map[string]json.RawMessage `json:"minValues"`
	MaxValues   map[string]json.RawMessage `json:"maxValues"`
	NullCount   map[string]json.RawMessage `json:"nullCount"`
}

// parsedStats are a checkpoint's stats_parsed: the same statistics as typed columns.
type parsedStats struct {
	rows          int64 // -1 when absent
	wide          bool  // tightBounds is false
	min, max, nul map[string]types.Value
}

// ---- checkpoint columns ----

// structRow is one row of a struct column.
type structRow struct {
	s *array.Struct
	i int
}

// get is the child column name at the row's position, nil when the struct has no such
// child or the row is NULL.
func (r structRow) get(name string) (arrow.Array, int) {
	if r.s == nil || r.s.IsNull(r.i) {
		return nil, 0
	}
	st := r.s.DataType().(*arrow.StructType)
	k, ok := st.FieldIdx(name)
	if !ok {
		return nil, 0
	}
	return r.s.Field(k), r.i // children are sliced like the struct
}

// child is the struct child name as a struct row.
func (r structRow) child(name string) structRow {
	a, i := r.get(name)
	s, ok := a.(*array.Struct)
	if !ok || s.IsNull(i) {
		return structRow{}
	}
	return structRow{s, i}
}

func (r structRow) valid() bool { return r.s != nil && !r.s.IsNull(r.i) }

// str is the string child name; ok is false when absent or NULL.
func (r structRow) str(name string) (string, bool) {
	a, i := r.get(name)
	if a == nil || a.IsNull(i) {
		return "", false
	}
	switch x := a.(type) {
	case *array.String:
		return x.Value(i), true
	case *array.LargeString:
		return x.Value(i), true
	case *array.Binary:
		return string(x.Value(i)), true
	}
	return "", false
}

// int is the integer child name; ok is false when absent or NULL.
func (r structRow) int(name string) (int64, bool) {
	a, i := r.get(name)
	if a == nil || a.IsNull(i) {
		return 0, false
	}
	switch x := a.(type) {
	case *array.Int64:
		return x.Value(i), true
	case *array.Int32:
		return int64(x.Value(i)), true
	case *array.Int16:
		return int64(x.Value(i)), true
	case *array.Int8:
		return int64(x.Value(i)), true
	}
	return 0, false
}

// boolean is the boolean child name; ok is false when absent or NULL.
func (r structRow) boolean(name string) (bool, bool) {
	a, i := r.get(name)
	if x, ok := a.(*array.Boolean); ok && !x.IsNull(i) {
		return x.Value(i), true
	}
	return false, false
}

// strMap is the map<string,string> child name.
func (r structRow) strMap(name string) map[string]*string {
	a, i := r.get(name)
	m, ok := a.(*array.Map)
	if !ok || m.IsNull(i) {
		return nil
	}
	out := map[string]*string{}
	lo, hi := m.ValueOffsets(i)
	keys, items := m.Keys(), m.Items()
	for j := lo; j < hi; j++ {
		k := textAt(keys, int(j))
		if k == nil {
			continue
		}
		out[*k] = textAt(items, int(j))
	}
	return out
}

// strList is the non-NULL strings of the list child name; nil when absent or NULL.
func (r structRow) strList(name string) []string {
	a, i := r.get(name)
	lst, ok := a.(*array.List)
	if !ok || lst.IsNull(i) {
		return nil
	}
	var out []string
	lo, hi := lst.ValueOffsets(i)
	for j := lo; j < hi; j++ {
		if s := textAt(lst.ListValues(), int(j)); s != nil {
			out = append(out, *s)
		}
	}
	return out
}

// textAt is a string or binary value, nil when NULL or of another type.
func textAt(a arrow.Array, i int) *string {
	if a.IsNull(i) {
		return nil
	}
	var s string
	switch x := a.(type) {
	case *array.String:
		s = x.Value(i)
	case *array.LargeString:
		s = x.Value(i)
	case *array.Binary:
		s = string(x.Value(i))
	default:
		return nil
	}
	return &s
}

// dv is the deletionVector child of an add or remove.
func (r structRow) dv() *deletes.DV {
	d := r.child("deletionVector")
	if !d.valid() {
		return nil
	}
	st, _ := d.str("storageType")
	p, _ := d.str("pathOrInlineDv")
	size, _ := d.int("sizeInBytes")
	card, _ := d.int("cardinality")
	out := &deletes.DV{StorageType: st, PathOrInlineDv: p, SizeInBytes: int32(size), Cardinality: card}
	if off, ok := d.int("offset"); ok {
		o := int32(off)
		out.Offset = &o
	}
	return out
}

// addOf reads an add action from a checkpoint row.
func addOf(r structRow) (*add, error) {
	a := &add{}
	var ok bool
	if a.Path, ok = r.str("path"); !ok || a.Path == "" {
		return nil, fmt.Errorf("an add action has no path")
	}
	a.PartitionValues = r.strMap("partitionValues")
	a.Size, _ = r.int("size")
	a.ModificationTime, _ = r.int("modificationTime")
	if s, ok := r.str("stats"); ok {
		a.Stats = &s
	}
	a.DeletionVector = r.dv()
	if sp := r.child("stats_parsed"); sp.valid() {
		p := &parsedStats{rows: -1}
		if n, ok := sp.int("numRecords"); ok {
			p.rows = n
		}
		if t, ok := sp.boolean("tightBounds"); ok {
			p.wide = !t
		}
		p.min = valuesOf(sp.child("minValues"))
		p.max = valuesOf(sp.child("maxValues"))
		p.nul = valuesOf(sp.child("nullCount"))
		a.parsed = p
	}
	return a, nil
}

// valuesOf reads the top-level primitive children of a stats struct.
func valuesOf(r structRow) map[string]types.Value {
	if !r.valid() {
		return nil
	}
	out := map[string]types.Value{}
	st := r.s.DataType().(*arrow.StructType)
	for k := range st.NumFields() {
		c := r.s.Field(k)
		if types.IsNested(c.DataType()) || c.IsNull(r.i) {
			continue
		}
		out[st.Field(k).Name] = types.ValueAt(c, r.i)
	}
	return out
}

// jsonInt reads a JSON number as an int64.
func jsonInt(raw json.RawMessage) (int64, bool) {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	return n, err == nil
}
