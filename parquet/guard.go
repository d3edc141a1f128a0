package parquet

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Checks made before the library sees a footer. The library trusts the lengths and
// counts in a footer: it makes a slice as long as a schema element says it has
// children, and the Arrow schema stored under ARROW:schema is an IPC flatbuffer whose
// vector lengths it allocates from unchecked. A Go allocation too large for the
// machine is a fatal error, not a panic that recover could turn into an error, so
// every such number is checked here against the bytes that hold it first.

const (
	footerTail     = 64 << 10 // bytes read from the end of a file at once, footer included
	maxFixedLength = 1 << 20  // the longest FIXED_LEN_BYTE_ARRAY value accepted
	maxFieldDepth  = 64       // the deepest nesting of Arrow fields accepted
)

// tailReader serves reads of the end of a file from the bytes already read there, so
// that checking a footer before the library reads it costs no second read.
type tailReader struct {
	r      io.ReaderAt
	tail   []byte
	tailAt int64
	footer []byte   // the footer's Thrift FileMetaData, within tail
	shape  shapeKey // the key of the footer's schema
}

func (t *tailReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= t.tailAt && off+int64(len(p)) <= t.tailAt+int64(len(t.tail)) {
		return copy(p, t.tail[off-t.tailAt:]), nil
	}
	return t.r.ReadAt(p, off)
}

// readFooter reads the end of the file r of size bytes and checks its footer (see
// checkFooter); it returns a reader that serves the footer from memory.
func readFooter(r io.ReaderAt, size int64) (*tailReader, error) {
	if size < 12 {
		return nil, fmt.Errorf("file of %d bytes is too small for Parquet", size)
	}
	n := min(size, footerTail)
	t := &tailReader{r: r, tail: make([]byte, n), tailAt: size - n}
	if _, err := r.ReadAt(t.tail, t.tailAt); err != nil && err != io.EOF {
		return nil, err
	}
	magic := string(t.tail[n-4:])
	if magic == "PARE" {
		return t, nil // an encrypted footer: the library refuses it without keys
	}
	if magic != "PAR1" {
		return nil, errors.New("file does not end in the Parquet magic bytes")
	}
	flen := int64(binary.LittleEndian.Uint32(t.tail[n-8:]))
	if flen > size-12 {
		return nil, fmt.Errorf("footer of %d bytes is longer than the file of %d bytes", flen, size)
	}
	if flen > n-8 {
		t.tail = make([]byte, flen+8)
		t.tailAt = size - flen - 8
		if _, err := r.ReadAt(t.tail, t.tailAt); err != nil && err != io.EOF {
			return nil, err
		}
	}
	t.footer = t.tail[int64(len(t.tail))-8-flen : int64(len(t.tail))-8]
	key, err := checkFooter(t.footer, size)
	if err != nil {
		return nil, err
	}
	t.shape = key
	return t, nil
}

// checkFooter walks the Thrift FileMetaData in b, from a file of size bytes: every
// list is no longer than the bytes left to hold it, every schema element has no more
// children than there are elements and a fixed length that can be read, and an
// ARROW:schema value is one the library can decode without a runaway allocation.
// It returns the key of the footer's schema (see shape).
func checkFooter(b []byte, size int64) (shapeKey, error) {
	r := &thriftReader{b: b}
	var elements, arrowSchema []byte
	var schemaErr error
	r.structure(func(id int16, typ byte) bool {
		switch {
		case id == 2 && typ == tList: // schema: list<SchemaElement>
			start := r.pos
			defer func() { elements = r.b[start:r.pos] }()
			n, et := r.listHeader()
			if et != tStruct {
				r.elements(n, et)
				return true
			}
			for i := uint64(0); i < n && r.err == nil; i++ {
				r.structure(func(id int16, typ byte) bool {
					switch {
					case id == 2 && typ == tI32: // type_length
						if l := r.i32(); l < 0 || int64(l) > min(size, maxFixedLength) {
							schemaErr = fmt.Errorf("schema element with a fixed length of %d", l)
						}
						return true
					case id == 5 && typ == tI32: // num_children
						if c := r.i32(); c < 0 || uint64(c) > n {
							schemaErr = fmt.Errorf("schema element with %d children of %d elements", c, n)
						}
						return true
					}
					return false
				})
			}
			return true
		case id == 5 && typ == tList: // key_value_metadata: list<KeyValue>
			n, et := r.listHeader()
			if et != tStruct {
				r.elements(n, et)
				return true
			}
			for i := uint64(0); i < n && r.err == nil; i++ {
				var key, value []byte
				r.structure(func(id int16, typ byte) bool {
					if typ != tBinary || (id != 1 && id != 2) {
						return false
					}
					if v := r.binary(); id == 1 {
						key = v
					} else {
						value = v
					}
					return true
				})
				if string(key) == "ARROW:schema" {
					arrowSchema = value
				}
			}
			return true
		}
		return false
	})
	if r.err != nil {
		return shapeKey{}, fmt.Errorf("malformed footer: %w", r.err)
	}
	if schemaErr != nil {
		return shapeKey{}, schemaErr
	}
	if arrowSchema != nil {
		if err := checkArrowSchema(arrowSchema); err != nil {
			return shapeKey{}, fmt.Errorf("invalid ARROW:schema: %w", err)
		}
	}
	return keyOf(elements, arrowSchema), nil
}

// checkThrift checks that b starts with a Thrift structure whose lists are no longer
// than the bytes left to hold them, before the library allocates from them.
func checkThrift(b []byte) error {
	r := &thriftReader{b: b}
	r.skip(tStruct)
	return r.err
}

// checkArrowSchema checks the base64 IPC message stored under ARROW:schema the way
// the library decodes it (both base64 alphabets' padding, the message framing, then
// the flatbuffer): every offset followed lies in the message and every vector fits
// in it, so the lengths the library allocates from are bounded by the message.
func checkArrowSchema(value []byte) error {
	var msg []byte
	var err error
	if len(value)%4 == 0 {
		msg, err = base64.StdEncoding.DecodeString(string(value))
	}
	if len(msg) == 0 || err != nil {
		msg, err = base64.RawStdEncoding.DecodeString(string(value))
	}
	if err != nil {
		return fmt.Errorf("not base64: %w", err)
	}
	if len(msg) < 8 {
		return errors.New("message too short")
	}
	// A continuation marker and a length, or (before Arrow 0.15) a length alone.
	at := 4
	length := int64(int32(binary.LittleEndian.Uint32(msg)))
	if binary.LittleEndian.Uint32(msg) == 0xFFFFFFFF {
		at = 8
		length = int64(int32(binary.LittleEndian.Uint32(msg[4:])))
	}
	if length < 4 || length > int64(len(msg)-at) {
		return fmt.Errorf("message metadata of %d bytes in %d", length, len(msg)-at)
	}
	fb := &flatbuf{b: msg[at : at+int(length)]}
	fb.budget = len(fb.b)/4 + 1
	if err := fb.message(int64(len(msg)-at) - length); err != nil {
		return err
	}
	return nil
}

// flatbuf checks a flatbuffer: tables, offsets and vectors in bounds, and no more
// tables visited than could fit in it (shared or cyclic offsets run out of budget).
type flatbuf struct {
	b      []byte
	budget int
}

// fbTable is a checked table: where it starts, where its vtable is, and its sizes.
type fbTable struct {
	pos, vt, fields, size int
}

var errFlatbuf = errors.New("malformed flatbuffer")

func (f *flatbuf) u32(p int) (int, error) {
	if p < 0 || p > len(f.b)-4 {
		return 0, errFlatbuf
	}
	return int(binary.LittleEndian.Uint32(f.b[p:])), nil
}

func (f *flatbuf) u16(p int) (int, error) {
	if p < 0 || p > len(f.b)-2 {
		return 0, errFlatbuf
	}
	return int(binary.LittleEndian.Uint16(f.b[p:])), nil
}

// table checks the table at t.
func (f *flatbuf) table(t int) (fbTable, error) {
	if f.budget--; f.budget < 0 {
		return fbTable{}, errors.New("flatbuffer refers to more tables than it can hold")
	}
	so, err := f.u32(t)
	if err != nil {
		return fbTable{}, err
	}
	vt := t - int(int32(so))
	vsize, err1 := f.u16(vt)
	tsize, err2 := f.u16(vt + 2)
	if err1 != nil || err2 != nil || vsize < 4 || vsize%2 != 0 || vt+vsize > len(f.b) || tsize < 4 || t+tsize > len(f.b) {
		return fbTable{}, errFlatbuf
	}
	tb := fbTable{pos: t, vt: vt, fields: (vsize - 4) / 2, size: tsize}
	for i := 0; i < tb.fields; i++ {
		if off, _ := f.u16(vt + 4 + 2*i); off >= tsize {
			return fbTable{}, errFlatbuf
		}
	}
	return tb, nil
}

// field is the position of field i of tb, 0 when absent.
func (f *flatbuf) field(tb fbTable, i int) int {
	if i >= tb.fields {
		return 0
	}
	off, _ := f.u16(tb.vt + 4 + 2*i)
	if off == 0 {
		return 0
	}
	return tb.pos + off
}

// ref follows the offset in field i of tb; ok is false when the field is absent.
func (f *flatbuf) ref(tb fbTable, i int) (p int, ok bool, err error) {
	at := f.field(tb, i)
	if at == 0 {
		return 0, false, nil
	}
	return f.deref(at)
}

func (f *flatbuf) deref(at int) (int, bool, error) {
	off, err := f.u32(at)
	if err != nil || at+off > len(f.b)-4 {
		return 0, false, errFlatbuf
	}
	return at + off, true, nil
}

// vector checks the vector in field i of tb, of elements elem bytes wide, and returns
// its length and where its elements start.
func (f *flatbuf) vector(tb fbTable, i, elem int) (n, at int, err error) {
	p, ok, err := f.ref(tb, i)
	if !ok || err != nil {
		return 0, 0, err
	}
	n, _ = f.u32(p)
	if int64(n)*int64(elem) > int64(len(f.b)-p-4) {
		return 0, 0, fmt.Errorf("flatbuffer vector of %d elements runs past its end", n)
	}
	return n, p + 4, nil
}

// tables checks the vector of tables in field i of tb and calls fn on each.
func (f *flatbuf) tables(tb fbTable, i int, fn func(fbTable) error) error {
	n, at, err := f.vector(tb, i, 4)
	if err != nil {
		return err
	}
	for j := 0; j < n; j++ {
		p, _, err := f.deref(at + 4*j)
		if err != nil {
			return err
		}
		t, err := f.table(p)
		if err != nil {
			return err
		}
		if err := fn(t); err != nil {
			return err
		}
	}
	return nil
}

// message checks an IPC Message whose header is a Schema; body is the bytes after the
// metadata, which the body length must not exceed.
func (f *flatbuf) message(body int64) error {
	root, err := f.u32(0)
	if err != nil {
		return err
	}
	m, err := f.table(root)
	if err != nil {
		return err
	}
	// Message: version, header_type, header, bodyLength, custom_metadata.
	if p := f.field(m, 1); p == 0 || f.b[p] != 1 {
		return errors.New("message is not a schema")
	}
	if p := f.field(m, 3); p != 0 {
		if p+8 > m.pos+m.size {
			return errFlatbuf
		}
		if n := int64(binary.LittleEndian.Uint64(f.b[p:])); n < 0 || n > body {
			return fmt.Errorf("message body of %d bytes in %d", n, body)
		}
	}
	if err := f.tables(m, 4, f.keyValue); err != nil {
		return err
	}
	p, ok, err := f.ref(m, 2)
	if !ok || err != nil {
		return errors.Join(errors.New("schema message without a schema"), err)
	}
	s, err := f.table(p)
	if err != nil {
		return err
	}
	// Schema: endianness, fields, custom_metadata, features.
	if err := f.tables(s, 1, func(t fbTable) error { return f.arrowField(t, 0) }); err != nil {
		return err
	}
	if err := f.tables(s, 2, f.keyValue); err != nil {
		return err
	}
	_, _, err = f.vector(s, 3, 8)
	return err
}

func (f *flatbuf) keyValue(t fbTable) error {
	// KeyValue: key, value.
	if _, _, err := f.vector(t, 0, 1); err != nil {
		return err
	}
	_, _, err := f.vector(t, 1, 1)
	return err
}

// Arrow flatbuffer type codes whose tables hold offsets.
const (
	fbTypeTimestamp = 10
	fbTypeUnion     = 14
)

// arrowField checks a Field at depth levels of nesting.
func (f *flatbuf) arrowField(t fbTable, depth int) error {
	if depth > maxFieldDepth {
		return errors.New("fields nested too deeply")
	}
	// Field: name, nullable, type_type, type, dictionary, children, custom_metadata.
	if _, _, err := f.vector(t, 0, 1); err != nil {
		return err
	}
	if p, ok, err := f.ref(t, 3); err != nil {
		return err
	} else if ok {
		typ, err := f.table(p)
		if err != nil {
			return err
		}
		kind := 0
		if q := f.field(t, 2); q != 0 {
			kind = int(f.b[q])
		}
		switch kind {
		case fbTypeTimestamp: // unit, timezone
			_, _, err = f.vector(typ, 1, 1)
		case fbTypeUnion: // mode, typeIds
			_, _, err = f.vector(typ, 1, 4)
		}
		if err != nil {
			return err
		}
	}
	if p, ok, err := f.ref(t, 4); err != nil {
		return err
	} else if ok {
		// DictionaryEncoding: id, indexType (a table of scalars), isOrdered, kind.
		d, err := f.table(p)
		if err != nil {
			return err
		}
		if q, ok, err := f.ref(d, 1); err != nil {
			return err
		} else if ok {
			if _, err := f.table(q); err != nil {
				return err
			}
		}
	}
	if err := f.tables(t, 5, func(c fbTable) error { return f.arrowField(c, depth+1) }); err != nil {
		return err
	}
	return f.tables(t, 6, f.keyValue)
}
