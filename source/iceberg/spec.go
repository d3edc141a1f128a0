package iceberg

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// firstPartitionFieldID is the id the spec gives the first partition field of a
// table whose specs state none (v1 writers may leave them out).
const firstPartitionFieldID = 1000

// partitionSpec is one of a table's partition specs: how the partition tuple of a
// data file written under it derives from the file's rows.
type partitionSpec struct {
	ID     int
	Fields []partitionField
}

// partitionField is one field of a partition spec: the transform of its source
// columns, under its own field id and name.
type partitionField struct {
	SourceIDs []int // one column for every transform Lore knows; a void left by a dropped field may have the placeholder 0
	FieldID   int
	Name      string
	Transform transform
}

// unpartitioned reports a spec that partitions nothing: no fields, or only voids.
func (s *partitionSpec) unpartitioned() bool {
	for _, f := range s.Fields {
		if f.Transform.kind != transformVoid {
			return false
		}
	}
	return true
}

// UnmarshalJSON parses a partition spec of the metadata's partition-specs.
func (s *partitionSpec) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("invalid partition spec: %w", err)
	}
	id := 0
	if rawID, ok := raw["spec-id"]; ok {
		if isNull(rawID) {
			return errors.New("a partition spec with a null spec-id")
		}
		if err := json.Unmarshal(rawID, &id); err != nil {
			return fmt.Errorf("invalid partition spec id: %w", err)
		}
		if id < 0 {
			return fmt.Errorf("partition spec id %d is negative", id)
		}
	}
	fields, ok := raw["fields"]
	if !ok || isNull(fields) {
		return fmt.Errorf("partition spec %d has no fields", id)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(fields, &list); err != nil {
		return fmt.Errorf("invalid fields of partition spec %d: %w", id, err)
	}
	spec, err := parseSpec(id, list)
	if err != nil {
		return err
	}
	*s = spec
	return nil
}

// parseSpec makes partition spec id of its fields' JSON: each parsed and checked,
// the set checked (no name twice, no field repeating another's transform of the same
// columns, no field id twice), and fields without ids given the next free ones.
func parseSpec(id int, list []json.RawMessage) (partitionSpec, error) {
	spec := partitionSpec{ID: id, Fields: make([]partitionField, len(list))}
	for i, raw := range list {
		f, err := parsePartitionField(raw)
		if err != nil {
			return spec, fmt.Errorf("partition spec %d: %w", id, err)
		}
		spec.Fields[i] = f
	}
	names := map[string]bool{}
	for i, f := range spec.Fields {
		if names[f.Name] {
			return spec, fmt.Errorf("partition spec %d names two fields %q", id, f.Name)
		}
		names[f.Name] = true
		if f.Transform.kind == transformVoid {
			continue
		}
		for _, g := range spec.Fields[:i] {
			if g.Transform.kind != transformVoid && g.Transform.equal(f.Transform) && slices.Equal(g.SourceIDs, f.SourceIDs) {
				return spec, fmt.Errorf("partition spec %d: fields %q and %q are the same %s of %v", id, g.Name, f.Name, f.Transform, f.SourceIDs)
			}
		}
	}
	// Ids left out (0) follow the highest one given, skipping those taken.
	taken := map[int]bool{}
	last := firstPartitionFieldID - 1
	for _, f := range spec.Fields {
		if f.FieldID == 0 {
			continue
		}
		if taken[f.FieldID] {
			return spec, fmt.Errorf("partition spec %d has two fields of id %d", id, f.FieldID)
		}
		taken[f.FieldID] = true
		last = max(last, f.FieldID)
	}
	for i := range spec.Fields {
		f := &spec.Fields[i]
		if f.FieldID != 0 {
			last = max(last, f.FieldID)
			continue
		}
		last++
		for taken[last] {
			last++
		}
		f.FieldID = last
	}
	return spec, nil
}

// parsePartitionField parses one field of a partition spec.
func parsePartitionField(b []byte) (partitionField, error) {
	var f partitionField
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return f, fmt.Errorf("invalid partition field: %w", err)
	}
	rawID, hasID := raw["source-id"]
	rawIDs, hasIDs := raw["source-ids"]
	if hasID && hasIDs {
		return f, errors.New("a partition field with both source-id and source-ids")
	}
	rawTransform, ok := raw["transform"]
	if !ok || isNull(rawTransform) {
		return f, errors.New("a partition field without a transform")
	}
	var name string
	if err := json.Unmarshal(rawTransform, &name); err != nil {
		return f, fmt.Errorf("invalid partition transform: %w", err)
	}
	var err error
	if f.Transform, err = parseTransform(name); err != nil {
		return f, err
	}
	if rawFieldID, ok := raw["field-id"]; ok {
		if isNull(rawFieldID) {
			return f, errors.New("a partition field with a null field-id")
		}
		if err := json.Unmarshal(rawFieldID, &f.FieldID); err != nil {
			return f, fmt.Errorf("invalid partition field id: %w", err)
		}
	}
	if rawName, ok := raw["name"]; ok {
		if err := json.Unmarshal(rawName, &f.Name); err != nil {
			return f, fmt.Errorf("invalid partition field name: %w", err)
		}
	}
	switch {
	case hasIDs:
		if err := json.Unmarshal(rawIDs, &f.SourceIDs); err != nil {
			return f, fmt.Errorf("invalid partition source-ids: %w", err)
		}
		if len(f.SourceIDs) == 0 {
			return f, errors.New("a partition field with no source-ids")
		}
	case hasID:
		var id int
		if err := json.Unmarshal(rawID, &id); err != nil {
			return f, fmt.Errorf("invalid partition source-id: %w", err)
		}
		f.SourceIDs = []int{id}
	case f.Transform.kind == transformVoid:
		// A void a dropped field left, some writers without a source.
		f.SourceIDs = []int{0}
	default:
		return f, errors.New("a partition field without source-id")
	}
	if hasID || hasIDs {
		for _, id := range f.SourceIDs {
			if id <= 0 {
				return f, fmt.Errorf("partition source id %d is not a field id", id)
			}
		}
	}
	if f.Name == "" {
		return f, errors.New("a partition field without a name")
	}
	return f, nil
}

// isNull reports a JSON null.
func isNull(raw json.RawMessage) bool { return strings.Trim(string(raw), jsonSpace) == "null" }

// transformKind is the kind of a partition transform.
type transformKind uint8

const (
	// transformOther is a transform Lore does not know (a later version's): the
	// spec has readers load the table and let such a field bound nothing.
	transformOther transformKind = iota
	transformIdentity
	transformVoid
	transformYear
	transformMonth
	transformDay
	transformHour
	transformBucket
	transformTruncate
)

// transform is a partition field's transform.
type transform struct {
	kind transformKind
	n    int    // a bucket's number of buckets, a truncation's width
	name string // as the metadata writes it
}

// String is the transform as the metadata writes it.
func (t transform) String() string { return t.name }

// equal reports whether two transforms are the same function: known ones by kind and
// parameter, others by their names exactly.
func (t transform) equal(o transform) bool {
	if t.kind == transformOther || o.kind == transformOther {
		return t.kind == o.kind && t.name == o.name
	}
	return t.kind == o.kind && t.n == o.n
}

// parseTransform parses a transform's name: identity, void, year, month, day, hour,
// bucket[N] and truncate[W], in any case. A name it does not know is a transform of
// kind transformOther, not an error, except a bucket or truncation whose parameter
// is a number out of range (zero, or beyond an int).
func parseTransform(s string) (transform, error) {
	t := transform{name: s}
	if s == "" {
		return t, errors.New("an empty partition transform")
	}
	lower := asciiLower(s)
	switch lower {
	case "identity":
		t.kind = transformIdentity
	case "void":
		t.kind = transformVoid
	case "year":
		t.kind = transformYear
	case "month":
		t.kind = transformMonth
	case "day":
		t.kind = transformDay
	case "hour":
		t.kind = transformHour
	default:
		for _, p := range []struct {
			prefix string
			kind   transformKind
		}{{"bucket[", transformBucket}, {"truncate[", transformTruncate}} {
			arg, ok := strings.CutPrefix(lower, p.prefix)
			if !ok || !strings.HasSuffix(arg, "]") || !allDigits(arg[:len(arg)-1]) {
				continue
			}
			n, err := strconv.Atoi(arg[:len(arg)-1])
			if err != nil || n <= 0 || n > math.MaxInt32 {
				return t, fmt.Errorf("invalid partition transform %q", s)
			}
			t.kind, t.n = p.kind, n
			return t, nil
		}
	}
	return t, nil
}

// asciiLower lowers the ASCII letters of s, and only those.
func asciiLower(s string) string {
	for i := range len(s) {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// timeTransform reports the transforms that count periods of time: year, month, day
// and hour.
func (t transform) timeTransform() bool {
	switch t.kind {
	case transformYear, transformMonth, transformDay, transformHour:
		return true
	}
	return false
}
