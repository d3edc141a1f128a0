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
	"strings"

	"github.com/klauspost/compress/zstd"
)

// A generic reader of Avro object container files, for the manifests and manifest
// lists whose writers strayed from what iceberg-go's typed decoder resolves: every
// value decodes by its writer schema into plain Go values (a record is a
// map[string]any by field name, a union its branch's value, an array []any, a map
// map[string]any, bytes and fixed []byte, int int32, long int64). It is lenient in one
// way readers of such files need: a long whose varint runs to the tenth byte keeps its
// low 64 bits (a hand-written file encodes ids beyond a long's range so). It is strict
// otherwise: every count is checked against the bytes left before anything is made,
// nesting is bounded, and a block must be decoded exactly.

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
}

type avroField struct {
	name string
	typ  *avroSchema
}

// readAvroFile decodes every object of an object container file, and returns its
// header metadata.
func readAvroFile(b []byte) ([]any, map[string][]byte, error) {
	d := &avroDecoder{b: b}
	if len(b) < 4 || !bytes.Equal(b[:4], avroMagic) {
		return nil, nil, errors.New("not an Avro object container file")
	}
	d.pos = 4
	meta := map[string][]byte{}
	for {
		n, err := d.long()
		if err != nil {
			return nil, nil, err
		}
		if n == 0 {
			break
		}
		if n < 0 {
			if n == math.MinInt64 {
				return nil, nil, errors.New("bad metadata block count")
			}
			n = -n
			if _, err := d.long(); err != nil {
				return nil, nil, err
			}
		}
		if n > int64(d.left()) {
			return nil, nil, fmt.Errorf("metadata block of %d entries in %d bytes", n, d.left())
		}
		for range n {
			k, err := d.bytes()
			if err != nil {
				return nil, nil, err
			}
			v, err := d.bytes()
			if err != nil {
				return nil, nil, err
			}
			meta[string(k)] = v
		}
	}
	sync, err := d.fixed(16)
	if err != nil {
		return nil, nil, err
	}
	raw := meta["avro.schema"]
	if len(raw) == 0 || len(raw) > avroMaxSchemaLen {
		return nil, nil, errors.New("no writer schema")
	}
	var js any
	if err := json.Unmarshal(raw, &js); err != nil {
		return nil, nil, fmt.Errorf("writer schema: %v", err)
	}
	names := map[string]*avroSchema{}
	schema, err := parseAvroSchema(js, "", names, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("writer schema: %v", err)
	}
	codec := string(meta["avro.codec"])
	var out []any
	budget := avroMaxItems
	for d.left() > 0 {
		count, err := d.long()
		if err != nil {
			return nil, nil, err
		}
		size, err := d.long()
		if err != nil {
			return nil, nil, err
		}
		if count < 0 || size < 0 || size > int64(d.left()) {
			return nil, nil, fmt.Errorf("block of %d objects in %d bytes, %d left", count, size, d.left())
		}
		data := d.b[d.pos : d.pos+int(size)]
		d.pos += int(size)
		if data, err = decompress(codec, data); err != nil {
			return nil, nil, err
		}
		bd := &avroDecoder{b: data, budget: &budget}
		if count > int64(len(data))+int64(budget) {
			return nil, nil, fmt.Errorf("block claims %d objects in %d bytes", count, len(data))
		}
		for range count {
			v, err := bd.value(schema, 0)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, v)
		}
		if bd.left() != 0 {
			return nil, nil, fmt.Errorf("%d bytes left over in a block", bd.left())
		}
		s, err := d.fixed(16)
		if err != nil {
			return nil, nil, err
		}
		if !bytes.Equal(s, sync) {
			return nil, nil, errors.New("a block does not end with the file's sync marker")
		}
	}
	return out, meta, nil
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
		return nil, fmt.Errorf("bad %s block: %v", codec, err)
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
					return nil, fmt.Errorf("field %q: %v", fname, err)
				}
				s.fields = append(s.fields, avroField{name: fname, typ: ft})
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
		m := make(map[string]any, len(s.fields))
		for _, f := range s.fields {
			v, err := d.value(f.typ, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", f.name, err)
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
					return nil, errors.New("bad block count")
				}
				n = -n
				if _, err := d.long(); err != nil {
					return nil, err
				}
			}
			// Each item takes a byte at least, or a unit of the budget.
			if n > int64(d.left())+int64(d.remaining()) {
				return nil, fmt.Errorf("%d items claimed, %d bytes left", n, d.left())
			}
			for range n {
				var key string
				if m != nil {
					k, err := d.bytes()
					if err != nil {
						return nil, err
					}
					key = string(k)
				}
				v, err := d.value(s.items, depth+1)
				if err != nil {
					return nil, err
				}
				if m != nil {
					m[key] = v
				} else {
					arr = append(arr, v)
				}
			}
		}
		if m != nil {
			return m, nil
		}
		return arr, nil
	}
	return nil, fmt.Errorf("type %q", s.kind)
}

func (d *avroDecoder) remaining() int {
	if d.budget == nil {
		return avroMaxItems
	}
	return *d.budget
}
