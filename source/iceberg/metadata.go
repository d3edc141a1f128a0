package iceberg

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// metadata is what Lore reads of a table metadata file: the schemas (types.go), the
// partition specs (spec.go), the properties with the name mapping, the snapshots, and
// the few other fields a reader needs or checks.
type metadata struct {
	FormatVersion     int               `json:"format-version"`
	Location          string            `json:"location"`
	LastSequence      int64             `json:"last-sequence-number"`
	Schemas           []*schema         `json:"schemas"`
	Schema            *schema           `json:"schema"` // v1
	CurrentSchemaID   *int              `json:"current-schema-id"`
	Specs             []partitionSpec   `json:"partition-specs"`
	Properties        map[string]string `json:"properties"`
	CurrentSnapshotID *snapshotID       `json:"current-snapshot-id"`
	Snapshots         []snapshot        `json:"snapshots"`
	Refs              map[string]struct {
		SnapshotID snapshotID `json:"snapshot-id"`
		Type       string     `json:"type"`
	} `json:"refs"`

	// Present-or-not checks of required fields.
	UUID            *string          `json:"table-uuid"`
	LastUpdated     *int64           `json:"last-updated-ms"`
	LastColumn      *int             `json:"last-column-id"`
	DefaultSpec     *int             `json:"default-spec-id"`
	LastPartition   *int             `json:"last-partition-id"`
	SortOrders      *json.RawMessage `json:"sort-orders"`
	DefaultSort     *int             `json:"default-sort-order-id"`
	LegacySpecField *json.RawMessage `json:"partition-spec"` // v1
}

// snapshot is one snapshot of the table.
type snapshot struct {
	ID           *snapshotID `json:"snapshot-id"`
	Sequence     int64       `json:"sequence-number"`
	TimestampMs  *int64      `json:"timestamp-ms"`
	ManifestList string      `json:"manifest-list"`
	Manifests    []string    `json:"manifests"` // v1: the manifests themselves
	SchemaID     *int        `json:"schema-id"`
}

// snapshotID is a snapshot id: a long, which some hand-written metadata gives beyond
// the range of one; such an id is read as the long its 64 bits make, as a writer
// storing it in a manifest would have.
type snapshotID int64

func (id *snapshotID) UnmarshalJSON(b []byte) error {
	s := string(b)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		*id = snapshotID(n)
		return nil
	}
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("snapshot id %s is not a 64-bit integer", s)
	}
	*id = snapshotID(int64(u))
	return nil
}

func (s *snapshot) id() int64 { return int64(*s.ID) }

// nameMappingKey is the table property holding the default name mapping.
const nameMappingKey = "schema.name-mapping.default"

// parseMetadataJSON parses and checks a metadata file's JSON: the fields the format
// version requires are there, ids are consistent, and the current schema exists.
func parseMetadataJSON(b []byte) (*metadata, error) {
	var head struct {
		Version *int `json:"format-version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("not a metadata file: %w", err)
	}
	if head.Version == nil {
		return nil, fmt.Errorf("no format-version")
	}
	if *head.Version < 1 || *head.Version > 3 {
		return nil, fmt.Errorf("format version %d is not one Lore reads (1, 2 or 3)", *head.Version)
	}
	md := &metadata{}
	if err := json.Unmarshal(b, md); err != nil {
		return nil, fmt.Errorf("invalid metadata: %w", err)
	}
	missing := func(name string) error {
		return fmt.Errorf("format version %d metadata without %q", md.FormatVersion, name)
	}
	if md.LastUpdated == nil {
		return nil, missing("last-updated-ms")
	}
	if md.LastColumn == nil {
		return nil, missing("last-column-id")
	}
	if md.FormatVersion >= 2 {
		switch {
		case md.UUID == nil:
			return nil, missing("table-uuid")
		case md.Schemas == nil:
			return nil, missing("schemas")
		case md.CurrentSchemaID == nil:
			return nil, missing("current-schema-id")
		case md.Specs == nil:
			return nil, missing("partition-specs")
		case md.DefaultSpec == nil:
			return nil, missing("default-spec-id")
		case md.LastPartition == nil:
			return nil, missing("last-partition-id")
		case md.SortOrders == nil:
			return nil, missing("sort-orders")
		case md.DefaultSort == nil:
			return nil, missing("default-sort-order-id")
		}
	} else {
		if md.Schema == nil && (md.Schemas == nil || md.CurrentSchemaID == nil) {
			// A v1 table's schema is "schema"; "schemas" only with the current id.
			return nil, missing("schema")
		}
		if md.Specs == nil && md.LegacySpecField == nil {
			return nil, missing("partition-spec")
		}
		if md.Specs == nil {
			var fields []json.RawMessage
			if err := json.Unmarshal(*md.LegacySpecField, &fields); err != nil {
				return nil, fmt.Errorf("invalid partition-spec: %w", err)
			}
			spec, err := parseSpec(0, fields)
			if err != nil {
				return nil, fmt.Errorf("invalid partition-spec: %w", err)
			}
			md.Specs = []partitionSpec{spec}
		}
	}
	if md.Location == "" {
		return nil, missing("location")
	}
	for _, s := range md.Schemas {
		if s == nil {
			return nil, fmt.Errorf("a null schema")
		}
	}
	if md.currentSchema() == nil {
		return nil, fmt.Errorf("the current schema %v is not among its schemas", deref(md.CurrentSchemaID))
	}
	seen := map[int64]bool{}
	for i := range md.Snapshots {
		s := &md.Snapshots[i]
		if s.ID == nil || s.TimestampMs == nil {
			return nil, fmt.Errorf("a snapshot without snapshot-id or timestamp-ms")
		}
		if seen[s.id()] {
			return nil, fmt.Errorf("snapshot %d appears twice", s.id())
		}
		seen[s.id()] = true
		if s.ManifestList == "" && s.Manifests == nil {
			return nil, fmt.Errorf("snapshot %d has neither a manifest list nor manifests", s.id())
		}
		if md.FormatVersion >= 2 && (s.Sequence < 0 || s.Sequence > math.MaxInt64/2) {
			return nil, fmt.Errorf("snapshot %d has sequence number %d", *s.ID, s.Sequence)
		}
	}
	if id := md.currentSnapshotID(); id != nil && !seen[*id] {
		return nil, fmt.Errorf("the current snapshot %d is not among its snapshots", *id)
	}
	return md, nil
}

func deref[T any](p *T) any {
	if p == nil {
		return "(none)"
	}
	return *p
}

// currentSchema is the table's current schema, or nil when it is not there.
func (md *metadata) currentSchema() *schema {
	if md.CurrentSchemaID == nil {
		return md.Schema
	}
	if s := md.schemaByID(*md.CurrentSchemaID); s != nil {
		return s
	}
	if md.Schema != nil && md.Schema.ID == *md.CurrentSchemaID {
		return md.Schema
	}
	return nil
}

func (md *metadata) schemaByID(id int) *schema {
	for _, s := range md.Schemas {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// currentSnapshotID is the snapshot the main branch points at (current-snapshot-id;
// -1 is none, as v1 writers put it).
func (md *metadata) currentSnapshotID() *int64 {
	id := md.CurrentSnapshotID
	if r, ok := md.Refs["main"]; ok && id == nil {
		id = &r.SnapshotID
	}
	if id == nil || *id == -1 {
		return nil
	}
	n := int64(*id)
	return &n
}

func (md *metadata) snapshotByID(id int64) *snapshot {
	for i := range md.Snapshots {
		if md.Snapshots[i].id() == id {
			return &md.Snapshots[i]
		}
	}
	return nil
}

func (md *metadata) specByID(id int) *partitionSpec {
	for i := range md.Specs {
		if md.Specs[i].ID == id {
			return &md.Specs[i]
		}
	}
	return nil
}

// nameMapping is a table's name mapping: for files written without field ids, the
// names each field has had in them (the spec's "Column Projection").
type nameMapping []mappedField

// mappedField is one field of a name mapping, with the mapping of the fields nested
// in it. A field without an id maps names to no field of the table.
type mappedField struct {
	Names   []string      `json:"names"`
	FieldID *int          `json:"field-id"`
	Fields  []mappedField `json:"fields"`
}

// nameMapping is the table's default name mapping, nil when it has none (or one that
// does not parse: files without field ids then match by name).
func (md *metadata) nameMapping() nameMapping {
	raw, ok := md.Properties[nameMappingKey]
	if !ok {
		return nil
	}
	var nm nameMapping
	if err := json.Unmarshal([]byte(raw), &nm); err != nil {
		return nil
	}
	return nm
}

// manifests lists the snapshot's manifests: from its manifest list, or, in a v1 table
// that wrote none, the manifests it names itself (data manifests of spec 0, whose
// entries take the snapshot's id and sequence number 0).
func (s *snapshot) manifests(obj *objects) ([]manifestFile, error) {
	if s.ManifestList != "" {
		b, err := obj.read(s.ManifestList, maxManifest)
		if err != nil {
			return nil, err
		}
		return decodeManifestList(b)
	}
	out := make([]manifestFile, len(s.Manifests))
	for i, p := range s.Manifests {
		out[i] = manifestFile{path: p, snapshotID: s.id()}
	}
	return out, nil
}
