package iceberg

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// A generic reader of Avro object container files, for manifests and manifest lists:
// every value decodes by its writer schema into plain Go values (a record is a
// map[string]any by field name, a union its branch's value, an array []any, a map
// map[string]any, bytes and fixed []byte, int int32, long int64), and the manifest
// readers take what they need by the field names the Iceberg spec gives. That reads
// every writer's files alike, whether it wraps records and fields in nullable unions
// (BigQuery) or not. It is lenient in one way readers of such files need: a long whose
// varint runs to the tenth byte keeps its low 64 bits (a hand-written file encodes ids
// beyond a long's range so). It is strict otherwise: every count is checked against
// the bytes left before anything is made, nesting is bounded, and a block must be
// decoded exactly.

// Limits of the reader.
const (
	avroMaxDepth     = 64
	avroMaxItems     = 1 << 20   // values of a type that takes no bytes (null, an empty record) one file may hold
	avroMaxBlock     = 256 << 20 // bytes of one block, decompressed
	avroMaxSchemaLen = 1 << 20
)

var avroMagic = []byte{'O', 'b', 'j', 1}

// avroSchema is one node of a writer schema.
type avroSchema struct {
	kind    string // null, boolean, int, long, float, double, bytes, string, record, enum, array, map, union, fixed
	fields  []avroField
	items   *avroSchema // array items, map values
	options []*avroSchema
	symbols []string
	size    int
	skipped int // the record's fields marked to be passed over
}

// avroField is one field of a record: its name, its type, and the Iceberg field id
// its "field-id" attribute gives (hasID false when it gives none).
type avroField struct {
	name  string
	typ   *avroSchema
	id    int
	hasID bool
	skip  bool // passed over when decoding: a reader needs none of it (keepOnly)
}

// field is the record field called name, nil when s is no record or has none.
func (s *avroSchema) field(name string) *avroField {
	if s == nil || s.kind != "record" {
		return nil
	}
	for i := range s.fields {
		if s.fields[i].name == name {
			return &s.fields[i]
		}
	}
	return nil
}

// record is s, or the record branch of a union s: the schema a record value was
// decoded by. nil when there is no such record.
func (s *avroSchema) record() *avroSchema {
	if s == nil {
		return nil
	}
	if s.kind == "record" {
		return s
	}
	if s.kind == "union" {
		for _, o := range s.options {
			if o.kind == "record" {
				return o
			}
		}
	}
	return nil
}

// avroFile is an object container file whose header has been read: its metadata,
// its writer schema, and the blocks of objects that follow.
type avroFile struct {
	meta   map[string][]byte
	schema *avroSchema
	codec  string
	sync   []byte
	d      *avroDecoder // at the first block
}

// readAvroFile decodes every object of an object container file, and returns its
// header metadata.
func readAvroFile(b []byte) ([]any, map[string][]byte, error) {
	f, err := openAvroFile(b)
	if err != nil {
		return nil, nil, err
	}
	var out []any
	if err := f.each(func(v any) error { out = append(out, v); return nil }); err != nil {
		return nil, nil, err
	}
	return out, f.meta, nil
}

// openAvroFile reads the header of an object container file: its metadata and its
// writer schema.
func openAvroFile(b []byte) (*avroFile, error) {
	d := &avroDecoder{b: b}
	if len(b) < 4 || !bytes.Equal(b[:4], avroMagic) {
		return nil, errors.New("not an Avro object container file")
	}
	d.pos = 4
	meta := map[string][]byte{}
	for {
		n, err := d.long()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		if n < 0 {
			if n == math.MinInt64 {
				return nil, errors.New("bad metadata block count")
			}
			n = -n
			if _, err := d.long(); err != nil {
				return nil, err
			}
		}
		if n > int64(d.left()) {
			return nil, fmt.Errorf("metadata block of %d entries in %d bytes", n, d.left())
		}
		for range n {
			k, err := d.bytes()
			if err != nil {
				return nil, err
			}
			v, err := d.bytes()
			if err != nil {
				return nil, err
			}
			meta[string(k)] = v
		}
	}
	sync, err := d.fixed(16)
	if err != nil {
		return nil, err
	}
	raw := meta["avro.schema"]
	if len(raw) == 0 || len(raw) > avroMaxSchemaLen {
		return nil, errors.New("no writer schema")
	}
	var js any
	if err := json.Unmarshal(raw, &js); err != nil {
		return nil, fmt.Errorf("writer schema: %w", err)
	}
	names := map[string]*avroSchema{}
	schema, err := parseAvroSchema(js, "", names, 0)
	if err != nil {
		return nil, fmt.Errorf("writer schema: %w", err)
	}
	return &avroFile{meta: meta, schema: schema, codec: string(meta["avro.codec"]), sync: sync, d: d}, nil
}

// each decodes the file's objects in order and hands each to fn; it stops at the
// first error, fn's included.
func (f *avroFile) each(fn func(v any) error) error {
	d := f.d
	budget := avroMaxItems
	for d.left() > 0 {
		count, err := d.long()
		if err != nil {
			return err
		}
		size, err := d.long()
		if err != nil {
			return err
		}
		if count < 0 || size < 0 || size > int64(d.left()) {
			return fmt.Errorf("block of %d objects in %d bytes, %d left", count, size, d.left())
		}
		data := d.b[d.pos : d.pos+int(size)]
		d.pos += int(size)
		if data, err = decompress(f.codec, data); err != nil {
			return err
		}
		bd := &avroDecoder{b: data, budget: &budget}
		if count > int64(len(data))+int64(budget) {
			return fmt.Errorf("block claims %d objects in %d bytes", count, len(data))
		}
		for range count {
			v, err := bd.value(f.schema, 0)
			if err != nil {
				return err
			}
			if err := fn(v); err != nil {
				return err
			}
		}
		if bd.left() != 0 {
			return fmt.Errorf("%d bytes left over in a block", bd.left())
		}
		s, err := d.fixed(16)
		if err != nil {
			return err
		}
		if !bytes.Equal(s, f.sync) {
			return errors.New("a block does not end with the file's sync marker")
		}
	}
	return nil
}

func decompress(codec string, b []byte) ([]byte, error) {
	var r io.Reader
	switch codec {
	case "", "null":
		return b, nil
	case "deflate":
		fr := flate.NewReader(bytes.NewReader(b))
		defer fr.Close()
		r = fr
	case "zstandard":
		zr, err := zstd.NewReader(bytes.NewReader(b), zstd.WithDecoderMaxMemory(avroMaxBlock))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	default:
		return nil, fmt.Errorf("Avro codec %q is not one Lore reads", codec)
	}
	out, err := io.ReadAll(io.LimitReader(r, avroMaxBlock+1))
	if err != nil {
		return nil, fmt.Errorf("bad %s block: %w", codec, err)
	}
	if len(out) > avroMaxBlock {
		return nil, fmt.Errorf("a block decompresses to more than %d bytes", avroMaxBlock)
	}
	return out, nil
}

// parseAvroSchema parses a schema's JSON; names holds the named types seen so far.
func parseAvroSchema(js any, ns string, names map[string]*avroSchema, depth int) (*avroSchema, error) {
	if depth > avroMaxDepth {
		return nil, errors.New("nested too deep")
	}
	switch x := js.(type) {
	case string:
		switch x {
		case "null", "boolean", "int", "long", "float", "double", "bytes", "string":
			return &avroSchema{kind: x}, nil
		}
		if s, ok := names[x]; ok {
			return s, nil
		}
		if s, ok := names[qualify(ns, x)]; ok {
			return s, nil
		}
		return nil, fmt.Errorf("unknown type %q", x)
	case []any:
		u := &avroSchema{kind: "union"}
		for _, o := range x {
			s, err := parseAvroSchema(o, ns, names, depth+1)
			if err != nil {
				return nil, err
			}
			u.options = append(u.options, s)
		}
		if len(u.options) == 0 {
			return nil, errors.New("an empty union")
		}
		return u, nil
	case map[string]any:
		typ, _ := x["type"].(string)
		if typ == "" {
			// {"type": {...}}: the type is the inner schema.
			if inner, ok := x["type"]; ok {
				return parseAvroSchema(inner, ns, names, depth+1)
			}
			return nil, errors.New("a schema without a type")
		}
		name, _ := x["name"].(string)
		if n, ok := x["namespace"].(string); ok && !strings.Contains(name, ".") {
			ns = n
		}
		register := func(s *avroSchema) {
			if name != "" {
				names[name] = s
				names[qualify(ns, name)] = s
			}
		}
		switch typ {
		case "record", "error":
			s := &avroSchema{kind: "record"}
			register(s)
			fields, _ := x["fields"].([]any)
			for _, f := range fields {
				fm, ok := f.(map[string]any)
				if !ok {
					return nil, errors.New("a record field is not an object")
				}
				fname, _ := fm["name"].(string)
				ft, err := parseAvroSchema(fm["type"], ns, names, depth+1)
				if err != nil {
					return nil, fmt.Errorf("field %q: %w", fname, err)
				}
				f := avroField{name: fname, typ: ft}
				f.id, f.hasID = fieldIDAttr(fm["field-id"])
				s.fields = append(s.fields, f)
			}
			return s, nil
		case "enum":
			s := &avroSchema{kind: "enum"}
			for _, sym := range asSlice(x["symbols"]) {
				str, _ := sym.(string)
				s.symbols = append(s.symbols, str)
			}
			register(s)
			return s, nil
		case "fixed":
			size, ok := x["size"].(float64)
			if !ok || size < 0 || size > 1<<20 {
				return nil, errors.New("a fixed type without a valid size")
			}
			s := &avroSchema{kind: "fixed", size: int(size)}
			register(s)
			return s, nil
		case "array", "map":
			key := "items"
			if typ == "map" {
				key = "values"
			}
			items, err := parseAvroSchema(x[key], ns, names, depth+1)
			if err != nil {
				return nil, err
			}
			return &avroSchema{kind: typ, items: items}, nil
		}
		return parseAvroSchema(typ, ns, names, depth+1)
	}
	return nil, fmt.Errorf("a schema of JSON type %T", js)
}

// fieldIDAttr reads a record field's "field-id" attribute: a JSON integer, or a
// string holding one.
func fieldIDAttr(x any) (int, bool) {
	switch v := x.(type) {
	case float64:
		if v == math.Trunc(v) && v >= math.MinInt32 && v <= math.MaxInt32 {
			return int(v), true
		}
	case string:
		if n, err := strconv.ParseInt(v, 10, 32); err == nil {
			return int(n), true
		}
	}
	return 0, false
}

func qualify(ns, name string) string {
	if ns == "" || strings.Contains(name, ".") {
		return name
	}
	return ns + "." + name
}

func asSlice(x any) []any {
	s, _ := x.([]any)
	return s
}

// avroDecoder reads values from b.
type avroDecoder struct {
	b      []byte
	pos    int
	budget *int // values of types that take no bytes still allowed
}

func (d *avroDecoder) left() int { return len(d.b) - d.pos }

var errAvroShort = errors.New("truncated Avro data")

// long reads a zig-zag varint. Its tenth byte may carry bits beyond the 64 of a
// long: the value decoded keeps its low 64 bits.
func (d *avroDecoder) long() (int64, error) {
	var u uint64
	for i := 0; i < 10; i++ {
		if d.pos >= len(d.b) {
			return 0, errAvroShort
		}
		c := uint64(d.b[d.pos] & 0x7f)
		last := d.b[d.pos] < 0x80
		d.pos++
		if i < 9 {
			u |= c << (7 * i)
			if last {
				return int64(u>>1) ^ -int64(u&1), nil
			}
			continue
		}
		if !last {
			break
		}
		// Bit 63 of the zig-zag value, and bit 64, which becomes bit 63 once the
		// sign bit is shifted out.
		u |= c << 63
		return int64(u>>1|(c>>1&1)<<63) ^ -int64(u&1), nil
	}
	return 0, errors.New("a varint longer than ten bytes")
}

func (d *avroDecoder) fixed(n int) ([]byte, error) {
	if n < 0 || n > d.left() {
		return nil, errAvroShort
	}
	b := d.b[d.pos : d.pos+n]
	d.pos += n
	return b, nil
}

func (d *avroDecoder) bytes() ([]byte, error) {
	n, err := d.long()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > int64(d.left()) {
		return nil, fmt.Errorf("%d bytes claimed, %d left", n, d.left())
	}
	return d.fixed(int(n))
}

// spend counts one value of a type that may take no bytes.
func (d *avroDecoder) spend() error {
	if d.budget == nil {
		return nil
	}
	if *d.budget <= 0 {
		return errors.New("too many values")
	}
	*d.budget--
	return nil
}

// value decodes one value of schema s.
func (d *avroDecoder) value(s *avroSchema, depth int) (any, error) {
	if depth > avroMaxDepth {
		return nil, errors.New("values nested too deep")
	}
	switch s.kind {
	case "null":
		return nil, d.spend()
	case "boolean":
		b, err := d.fixed(1)
		if err != nil {
			return nil, err
		}
		return b[0] != 0, nil
	case "int":
		n, err := d.long()
		if err != nil {
			return nil, err
		}
		if n < math.MinInt32 || n > math.MaxInt32 {
			return nil, fmt.Errorf("int %d out of range", n)
		}
		return int32(n), nil
	case "long":
		return d.long()
	case "float":
		b, err := d.fixed(4)
		if err != nil {
			return nil, err
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(b)), nil
	case "double":
		b, err := d.fixed(8)
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
	case "bytes":
		b, err := d.bytes()
		return bytes.Clone(b), err
	case "string":
		b, err := d.bytes()
		return string(b), err
	case "fixed":
		if s.size == 0 {
			if err := d.spend(); err != nil {
				return nil, err
			}
		}
		b, err := d.fixed(s.size)
		return bytes.Clone(b), err
	case "enum":
		n, err := d.long()
		if err != nil {
			return nil, err
		}
		if n < 0 || n >= int64(len(s.symbols)) {
			return nil, fmt.Errorf("enum index %d of %d", n, len(s.symbols))
		}
		return s.symbols[n], nil
	case "union":
		n, err := d.long()
		if err != nil {
			return nil, err
		}
		if n < 0 || n >= int64(len(s.options)) {
			return nil, fmt.Errorf("union branch %d of %d", n, len(s.options))
		}
		return d.value(s.options[n], depth+1)
	case "record":
		if len(s.fields) == 0 {
			if err := d.spend(); err != nil {
				return nil, err
			}
		}
		m := make(map[string]any, len(s.fields)-s.skipped)
		for _, f := range s.fields {
			if f.skip {
				if err := d.skip(f.typ, depth+1); err != nil {
					return nil, fmt.Errorf("%s: %w", f.name, err)
				}
				continue
			}
			v, err := d.value(f.typ, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.name, err)
			}
			m[f.name] = v
		}
		return m, nil
	case "array", "map":
		var arr []any
		var m map[string]any
		if s.kind == "map" {
			m = map[string]any{}
		}
		err := d.items(func() error {
			var key string
			if m != nil {
				k, err := d.bytes()
				if err != nil {
					return err
				}
				key = string(k)
			}
			v, err := d.value(s.items, depth+1)
			if err != nil {
				return err
			}
			if m != nil {
				m[key] = v
			} else {
				arr = append(arr, v)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if m != nil {
			return m, nil
		}
		return arr, nil
	}
	return nil, fmt.Errorf("type %q", s.kind)
}

// items reads the blocks of an array or map, calling item for each of their items.
func (d *avroDecoder) items(item func() error) error {
	for {
		n, err := d.long()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if n < 0 {
			if n == math.MinInt64 {
				return errors.New("bad block count")
			}
			n = -n
			if _, err := d.long(); err != nil {
				return err
			}
		}
		// Each item takes a byte at least, or a unit of the budget.
		if n > int64(d.left())+int64(d.remaining()) {
			return fmt.Errorf("%d items claimed, %d bytes left", n, d.left())
		}
		for range n {
			if err := item(); err != nil {
				return err
			}
		}
	}
}

// skip passes over one value of schema s, checked as value checks it, without
// making it.
func (d *avroDecoder) skip(s *avroSchema, depth int) error {
	if depth > avroMaxDepth {
		return errors.New("values nested too deep")
	}
	var err error
	switch s.kind {
	case "null":
		return d.spend()
	case "boolean":
		_, err = d.fixed(1)
	case "int", "long", "enum":
		var n int64
		if n, err = d.long(); err != nil {
			return err
		}
		switch {
		case s.kind == "int" && (n < math.MinInt32 || n > math.MaxInt32):
			return fmt.Errorf("int %d out of range", n)
		case s.kind == "enum" && (n < 0 || n >= int64(len(s.symbols))):
			return fmt.Errorf("enum index %d of %d", n, len(s.symbols))
		}
	case "float":
		_, err = d.fixed(4)
	case "double":
		_, err = d.fixed(8)
	case "bytes", "string":
		_, err = d.bytes()
	case "fixed":
		if s.size == 0 {
			if err := d.spend(); err != nil {
				return err
			}
		}
		_, err = d.fixed(s.size)
	case "union":
		n, err := d.long()
		if err != nil {
			return err
		}
		if n < 0 || n >= int64(len(s.options)) {
			return fmt.Errorf("union branch %d of %d", n, len(s.options))
		}
		return d.skip(s.options[n], depth+1)
	case "record":
		if len(s.fields) == 0 {
			if err := d.spend(); err != nil {
				return err
			}
		}
		for _, f := range s.fields {
			if err := d.skip(f.typ, depth+1); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
		}
	case "array", "map":
		return d.items(func() error {
			if s.kind == "map" {
				if _, err := d.bytes(); err != nil {
					return err
				}
			}
			return d.skip(s.items, depth+1)
		})
	default:
		err = fmt.Errorf("type %q", s.kind)
	}
	return err
}

// keepOnly marks every field of record s but those named to be skipped: decoded
// records then leave them out, and nothing is made of their values.
func (s *avroSchema) keepOnly(names ...string) {
	if s == nil {
		return
	}
	s.skipped = 0
	for i := range s.fields {
		s.fields[i].skip = !slices.Contains(names, s.fields[i].name)
		if s.fields[i].skip {
			s.skipped++
		}
	}
}

func (d *avroDecoder) remaining() int {
	if d.budget == nil {
		return avroMaxItems
	}
	return *d.budget
}
