package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/loredb/lore/internal/lend"
	"github.com/loredb/lore/types"
)

// The page path: for a flat column chunk in PLAIN and dictionary encodings, Lore
// decodes the decompressed pages itself; the library still reads, checks and
// decompresses them. A dictionary is converted once per chunk to the column's
// normalised type (milliseconds scaled, decimals widened), so a row costs one index
// and one copy. A string chunk dictionary-encoded throughout becomes dictionary arrays
// that share one Arrow dictionary, and only indexes are decoded per row; other string
// chunks are copied straight into offsets and bytes, without a slice per value.

// pageMode is how the page path reads a chunk.
type pageMode uint8

const (
	pageNone    pageMode = iota // not on the page path
	pageFixed                   // fixed-width values
	pageDict                    // strings or binary as a dictionary
	pageStrings                 // strings or binary as plain values
)

// pageKind decides whether column c of row group rg takes the page path, and how: a
// flat leaf whose chunk uses only PLAIN and dictionary encodings (and RLE levels),
// either numeric and read by the typed path as it is, scaled or widened, or a string
// or binary column the library would read as such.
func (f *File) pageKind(rg, c int) pageMode {
	if readPath != pathPages {
		return pageNone
	}
	col := f.cols[c]
	if col.leaf == nil || col.int96 || col.leaf.MaxRepetitionLevel() != 0 || col.leaf.MaxDefinitionLevel() > 1 {
		return pageNone
	}
	ci := f.chunk(rg, col.leaves[0])
	if ci == nil || !ci.listed || !ci.plainOrDict {
		return pageNone // a chunk that does not list its encodings is left to the library
	}
	switch col.leaf.PhysicalType() {
	case pq.Types.Int32, pq.Types.Int64, pq.Types.Float, pq.Types.Double:
		if k, ok := f.typedKind(c); ok && (k == kindCopy || k == kindMicros || k == kindDecimal) {
			return pageFixed
		}
	case pq.Types.FixedLenByteArray:
		if flbaDecimal(col.leaf, f.schema.Field(c).Type) {
			return pageFixed
		}
	case pq.Types.ByteArray:
		want := f.schema.Field(c).Type
		if inferred := byteArrayType(col.leaf); inferred != nil && arrow.TypeEqual(inferred, col.read) &&
			arrow.TypeEqual(inferred, want) {
			if f.dictionaryEncoded(rg, col.leaves[0]) {
				return pageDict
			}
			return pageStrings
		}
	}
	return pageNone
}

// byteArrayType is the type the library gives a BYTE_ARRAY leaf it reads as strings or
// binary, or nil.
func byteArrayType(leaf *schema.Column) arrow.DataType {
	switch leaf.LogicalType().(type) {
	case schema.StringLogicalType:
		return arrow.BinaryTypes.String
	case nil, schema.NoLogicalType, schema.EnumLogicalType, schema.JSONLogicalType, schema.BSONLogicalType:
		return arrow.BinaryTypes.Binary
	}
	return nil
}

// pageColumn returns a reader on the page path for column c of row group rg, or nil.
func (f *File) pageColumn(rg, c int, rc *Recycler) (colReader, error) {
	pk := f.pageKind(rg, c)
	if pk == pageNone {
		return nil, nil
	}
	col := f.cols[c]
	pages, err := f.chunkWalker(rg, col.leaves[0])
	if pages == nil || err != nil {
		return nil, err
	}
	p := chunkPages{pages: pages, maxDef: col.leaf.MaxDefinitionLevel(), ptype: col.leaf.PhysicalType()}
	want := f.schema.Field(c).Type
	switch pk {
	case pageDict:
		return &dictColumn{chunkPages: p, want: want, rc: rc}, nil
	case pageStrings:
		return &stringColumn{chunkPages: p, want: want, rc: rc}, nil
	}
	if p.ptype == pq.Types.FixedLenByteArray {
		size := col.leaf.TypeLength()
		if want.ID() == arrow.DECIMAL64 {
			return newFixedColumn(p, want, size, plainFLBA64).lending(rc), nil
		}
		return newFixedColumn(p, want, size, plainFLBA128).lending(rc), nil
	}
	kind, _ := f.typedKind(c)
	switch {
	case kind == kindDecimal && want.ID() == arrow.DECIMAL64 && p.ptype == pq.Types.Int32:
		return newFixedColumn(p, want, 4, plainWiden32).lending(rc), nil
	case kind == kindDecimal && want.ID() == arrow.DECIMAL64:
		return newFixedColumn(p, want, 8, plainCopy[int64]).lending(rc), nil
	case kind == kindDecimal && p.ptype == pq.Types.Int32:
		return newFixedColumn(p, want, 4, plainDecimal32).lending(rc), nil
	case kind == kindDecimal:
		return newFixedColumn(p, want, 8, plainDecimal64).lending(rc), nil
	case kind == kindMicros:
		return newFixedColumn(p, want, 8, plainMicros).lending(rc), nil
	case p.ptype == pq.Types.Int32:
		return newFixedColumn(p, want, 4, plainCopy[int32]).lending(rc), nil
	case p.ptype == pq.Types.Int64:
		return newFixedColumn(p, want, 8, plainCopy[int64]).lending(rc), nil
	case p.ptype == pq.Types.Float:
		return newFixedColumn(p, want, 4, plainCopy[float32]).lending(rc), nil
	case p.ptype == pq.Types.Double:
		return newFixedColumn(p, want, 8, plainCopy[float64]).lending(rc), nil
	}
	return nil, fmt.Errorf("BUG: no page decoder for %s as %s", p.ptype, want)
}

// chunkPages walks the pages of one flat column chunk. A data page is begun — read,
// decompressed, its levels and values set up — only when a row of it is decoded, and
// the dictionary only when a page that needs it is begun.
type chunkPages struct {
	pages  *pageWalker
	maxDef int16
	ptype  pq.Type

	dict    *pageAt    // the dictionary page, until it is decoded
	hasDict bool       // whether a dictionary page was met
	cur     pageAt     // the current data page
	begun   bool       // whether cur is begun
	left    int        // rows left in the current data page
	defs    rleDecoder // its definition levels, when maxDef is 1
	indexed bool       // its values are dictionary indexes (else PLAIN)
	idx     rleDecoder
	raw     []byte // its PLAIN values not yet read
}

// more makes sure a begun data page has rows left, moving to the next page when the
// current one is used up; it returns false at the end of the chunk.
func (p *chunkPages) more(dict func(data []byte, n int) error) (bool, error) {
	if p.left == 0 {
		if ok, err := p.next(); !ok || err != nil {
			return false, err
		}
	}
	if !p.begun {
		if err := p.begin(dict); err != nil {
			return false, err
		}
	}
	return true, nil
}

// next moves to the next data page with rows, without beginning it, noting a
// dictionary page met on the way. It returns false at the end of the chunk.
func (p *chunkPages) next() (bool, error) {
	for {
		pg, ok, err := p.pages.next()
		if !ok || err != nil {
			return false, err
		}
		if pg.typ == pageDictionary {
			if p.hasDict {
				return false, errors.New("column chunk has more than one dictionary page")
			}
			if e := pq.Encoding(pg.encoding); e != pq.Encodings.Plain && e != pq.Encodings.PlainDict {
				return false, fmt.Errorf("dictionary page encoded as %s", e)
			}
			if pg.numValues < 0 {
				return false, errors.New("dictionary page with a negative count")
			}
			p.dict, p.hasDict = &pg, true
			continue
		}
		if pg.numValues > 0 {
			p.cur, p.begun, p.left = pg, false, int(pg.numValues)
			return true, nil
		}
	}
}

// begin reads the current data page and sets up its levels and values, decoding the
// dictionary first if the page needs it and it is not yet decoded.
func (p *chunkPages) begin(dict func(data []byte, n int) error) error {
	pg := p.cur
	enc := pq.Encoding(pg.encoding)
	if (enc == pq.Encodings.RLEDict || enc == pq.Encodings.PlainDict) && p.dict != nil {
		data, err := p.pages.data(*p.dict)
		if err != nil {
			return err
		}
		if err := dict(data, int(p.dict.numValues)); err != nil {
			return err
		}
		p.dict = nil
	}
	data, err := p.pages.data(pg)
	if err != nil {
		return err
	}
	switch pg.typ {
	case pageData:
		if p.maxDef > 0 {
			if e := pq.Encoding(pg.defEncoding); e != pq.Encodings.RLE {
				return fmt.Errorf("definition levels encoded as %s", e)
			}
			if len(data) < 4 {
				return errRLEShort
			}
			n := binary.LittleEndian.Uint32(data)
			if int64(n) > int64(len(data)-4) {
				return errRLEShort
			}
			if err := p.defs.reset(data[4:4+n], 1); err != nil {
				return err
			}
			data = data[4+n:]
		}
	case pageDataV2:
		rl, dl := int(pg.repLen), int(pg.defLen)
		if p.maxDef > 0 {
			if err := p.defs.reset(data[rl:rl+dl], 1); err != nil {
				return err
			}
		}
		data = data[rl+dl:]
	}
	if err := p.start(enc, data); err != nil {
		return err
	}
	p.begun = true
	return nil
}

func (p *chunkPages) start(enc pq.Encoding, data []byte) error {
	switch enc {
	case pq.Encodings.RLEDict, pq.Encodings.PlainDict:
		if !p.hasDict {
			return errors.New("dictionary-encoded data page without a dictionary page")
		}
		if len(data) < 1 {
			return errRLEShort
		}
		if err := p.idx.reset(data[1:], int(data[0])); err != nil {
			return err
		}
		p.indexed = true
	case pq.Encodings.Plain:
		p.indexed, p.raw = false, data
	default:
		return fmt.Errorf("data page encoded as %s", enc)
	}
	return nil
}

// skipRows passes over n rows of the chunk without decoding their values: a page
// whose rows are all passed over is dropped without being read; otherwise its levels
// are counted and plain passes over the defined values of a PLAIN page.
func (p *chunkPages) skipRows(n int64, dict func([]byte, int) error, plain func(d int) error) error {
	for n > 0 {
		if p.left == 0 {
			ok, err := p.next()
			if err != nil {
				return err
			}
			if !ok {
				return errors.New("column chunk ends before the rows of its row group")
			}
		}
		if int64(p.left) <= n {
			n -= int64(p.left)
			p.left = 0
			continue
		}
		if !p.begun {
			if err := p.begin(dict); err != nil {
				return err
			}
		}
		k := int(n)
		d := k
		var err error
		if p.maxDef > 0 {
			if d, err = p.defs.defined(k); err != nil {
				return err
			}
		}
		if p.indexed {
			err = p.idx.skip(d)
		} else {
			err = plain(d)
		}
		if err != nil {
			return err
		}
		p.left -= k
		n = 0
	}
	return nil
}

// levels reads the definition levels of the next k rows into valid (nil for a
// required column) and returns how many rows are defined.
func (p *chunkPages) levels(k int, valid []bool) (int, error) {
	if p.maxDef == 0 {
		return k, nil
	}
	return p.defs.levels(valid[:k])
}

// fixedColumn decodes a fixed-width column chunk into values of Go type V.
type fixedColumn[V any] struct {
	chunkPages
	want    arrow.DataType
	size    int                             // bytes per PLAIN value
	decode  func(src []byte, dst []V) error // PLAIN bytes to values
	dict    []V
	dictBuf []byte // dict's memory, a page buffer back to the pool at release
	scratch []uint32
	valid   []bool
	rc      *Recycler // lends the values of next's batches, or nil
}

func newFixedColumn[V any](p chunkPages, want arrow.DataType, size int, plain func([]byte, []V) error) *fixedColumn[V] {
	return &fixedColumn[V]{chunkPages: p, want: want, size: size, decode: plain}
}

// lending makes c take its batches' values from rc (see Recycler).
func (c *fixedColumn[V]) lending(rc *Recycler) *fixedColumn[V] {
	c.rc = rc
	return c
}

func (c *fixedColumn[V]) setDict(data []byte, n int) error {
	if int64(n)*int64(c.size) > int64(len(data)) {
		return fmt.Errorf("dictionary page of %d bytes holds fewer than %d values", len(data), n)
	}
	// A chunk's dictionary is only read from (its values are copied into each
	// batch), so its memory goes back to the page buffers' pool when the chunk is
	// done: a scan of many small files otherwise allocates, clears and collects a
	// dictionary per chunk.
	c.dictBuf = growPage(c.dictBuf, lend.Bytes[V](n))
	c.dict = lend.As[V](c.dictBuf)
	if c.scratch == nil {
		c.scratch = make([]uint32, 1024) // the indexes gathered at a time
	}
	return c.decode(data[:n*c.size], c.dict)
}

func (c *fixedColumn[V]) next(n int64) (arrow.Array, error) {
	vals := values[V](c.rc, int(n))
	if c.maxDef > 0 && int64(len(c.valid)) < n {
		c.valid = make([]bool, n)
	}
	rows, nv := 0, 0
	for rows < int(n) {
		if ok, err := c.chunkPages.more(c.setDict); err != nil {
			return nil, err
		} else if !ok {
			break
		}
		k := min(int(n)-rows, c.left)
		var valid []bool
		if c.maxDef > 0 {
			valid = c.valid[rows:]
		}
		d, err := c.levels(k, valid)
		if err != nil {
			return nil, err
		}
		dst := vals[nv : nv+d]
		if c.indexed {
			err = gather(&c.idx, c.dict, dst, c.scratch)
		} else {
			nb := d * c.size
			if nb > len(c.raw) {
				return nil, errors.New("PLAIN data page holds fewer values than its levels say")
			}
			err = c.decode(c.raw[:nb], dst)
			c.raw = c.raw[nb:]
		}
		if err != nil {
			return nil, err
		}
		rows += k
		nv += d
		c.left -= k
	}
	vals = vals[:rows]
	var valid *memory.Buffer
	if nv < rows {
		valid = memory.NewBufferBytes(spreadValid(vals, c.valid[:rows], nv))
	}
	d := array.NewData(c.want, rows, []*memory.Buffer{valid, memory.NewBufferBytes(bytesOf(vals))}, nil, rows-nv, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// nextAt reads the next n rows into an array of n, storing the values of the rows
// sel alone (nextDense's, put in their places); the other rows hold zero and count
// as valid. When sel is nil or not sparse it decodes every row.
func (c *fixedColumn[V]) nextAt(n int64, sel []int32) (arrow.Array, error) {
	if int64(len(sel))*4 >= n {
		return c.next(n)
	}
	dense, valid, nulls, err := c.denseValues(n, sel)
	if err != nil {
		return nil, err
	}
	vals := values[V](c.rc, int(n))
	clear(vals)
	for i, r := range sel {
		vals[r] = dense[i]
	}
	var vbuf *memory.Buffer
	if nulls > 0 {
		bits := make([]byte, bitutil.BytesForBits(n))
		bitutil.SetBitsTo(bits, 0, n, true)
		for i, r := range sel {
			if !valid[i] {
				bitutil.ClearBit(bits, int(r))
			}
		}
		vbuf = memory.NewBufferBytes(bits)
	}
	d := array.NewData(c.want, int(n), []*memory.Buffer{vbuf, memory.NewBufferBytes(bytesOf(vals))}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// nextDense reads the next n rows and returns the rows sel (ascending, below n)
// alone, in order: len(sel) values. Where a stretch of rows holds no NULL, only the
// selected rows' values are stored; elsewhere the stretch's values are decoded and
// each selected row takes its own.
func (c *fixedColumn[V]) nextDense(n int64, sel []int32) (arrow.Array, error) {
	out, valid, nulls, err := c.denseValues(n, sel)
	if err != nil {
		return nil, err
	}
	var vbuf *memory.Buffer
	if nulls > 0 {
		vbuf = memory.NewBufferBytes(bitmapOf(valid))
	}
	d := array.NewData(c.want, len(out), []*memory.Buffer{vbuf, memory.NewBufferBytes(bytesOf(out))}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// denseValues reads the next n rows and returns the values of the rows sel, with
// their validity (nil without definition levels) and how many are NULL.
func (c *fixedColumn[V]) denseValues(n int64, sel []int32) (out []V, valid []bool, nulls int, err error) {
	out = values[V](c.rc, len(sel))
	if c.maxDef > 0 {
		valid = make([]bool, len(sel))
		if int64(len(c.valid)) < n {
			c.valid = make([]bool, n)
		}
	}
	rows, o := 0, 0
	for rows < int(n) {
		if ok, err := c.chunkPages.more(c.setDict); err != nil {
			return nil, nil, 0, err
		} else if !ok {
			break
		}
		k := min(int(n)-rows, c.left)
		var vb []bool
		if c.maxDef > 0 {
			vb = c.valid[rows : rows+k]
		}
		d, err := c.levels(k, vb)
		if err != nil {
			return nil, nil, 0, err
		}
		at := sel
		for len(sel) > 0 && int(sel[0]) < rows+k {
			sel = sel[1:]
		}
		at = at[:len(at)-len(sel)]
		var src []V // the stretch's values, when decoded whole
		switch {
		case d == k && c.indexed && len(at)*4 < d:
			// Few rows of the stretch: their indexes alone are unpacked. (scratch only
			// grows: its length is gather's chunk.)
			c.scratch = grow(c.scratch, max(len(at), len(c.scratch)))
			if err := c.idx.pick(at, rows, d, c.scratch[:len(at)], len(c.dict)); err != nil {
				return nil, nil, 0, err
			}
			for _, x := range c.scratch[:len(at)] {
				out[o] = c.dict[x]
				o++
			}
		case d == k && c.indexed:
			c.scratch = grow(c.scratch, max(d, len(c.scratch)))
			if err := c.idx.indexes(c.scratch[:d], len(c.dict)); err != nil {
				return nil, nil, 0, err
			}
			for _, r := range at {
				out[o] = c.dict[c.scratch[int(r)-rows]]
				o++
			}
		case d == k:
			if d*c.size > len(c.raw) {
				return nil, nil, 0, errors.New("PLAIN data page holds fewer values than its levels say")
			}
			for _, r := range at {
				j := int(r) - rows
				if err := c.decode(c.raw[j*c.size:(j+1)*c.size], out[o:o+1]); err != nil {
					return nil, nil, 0, err
				}
				o++
			}
			c.raw = c.raw[d*c.size:]
		case c.indexed:
			src = make([]V, d)
			err = gather(&c.idx, c.dict, src, c.scratch)
		default:
			nb := d * c.size
			if nb > len(c.raw) {
				return nil, nil, 0, errors.New("PLAIN data page holds fewer values than its levels say")
			}
			src = make([]V, d)
			err = c.decode(c.raw[:nb], src)
			c.raw = c.raw[nb:]
		}
		if err != nil {
			return nil, nil, 0, err
		}
		if d == k {
			for i := o - len(at); i < o; i++ {
				if valid != nil {
					valid[i] = true
				}
			}
		} else {
			// A selected row's value is the stretch's value after as many values as
			// rows before it are defined.
			v, j := 0, 0
			for _, r := range at {
				for ; j < int(r)-rows; j++ {
					if vb[j] {
						v++
					}
				}
				if vb[j] {
					out[o], valid[o] = src[v], true
				} else {
					var zero V // a lent buffer holds old values: NULLs hold zero
					out[o] = zero
				}
				o++
			}
		}
		rows += k
		c.left -= k
	}
	if rows != int(n) || o != len(out) {
		return nil, nil, 0, fmt.Errorf("column chunk ends after %d of %d rows", rows, n)
	}
	for _, v := range valid {
		if !v {
			nulls++
		}
	}
	return out, valid, nulls, nil
}

func (c *fixedColumn[V]) skip(n int64) error {
	return c.skipRows(n, c.setDict, func(d int) error {
		nb := d * c.size
		if nb > len(c.raw) {
			return errors.New("PLAIN data page holds fewer values than its levels say")
		}
		c.raw = c.raw[nb:]
		return nil
	})
}

func (c *fixedColumn[V]) release() {
	c.pages.close()
	c.dict = nil
	putPage(c.dictBuf)
	c.dictBuf = nil
}

// dictColumn decodes a string or binary column chunk, dictionary-encoded throughout,
// into dictionary arrays that share the chunk's dictionary.
type dictColumn struct {
	chunkPages
	want  arrow.DataType
	dict  arrow.Array
	valid []bool
	rc    *Recycler // lends the indexes of next's batches, or nil
}

func (c *dictColumn) setDict(data []byte, n int) error {
	offsets, values, err := byteArrays(data, n)
	if err != nil {
		return err
	}
	d := array.NewData(c.want, n, []*memory.Buffer{nil, memory.NewBufferBytes(bytesOf(offsets)), memory.NewBufferBytes(values)}, nil, 0, 0)
	defer d.Release()
	c.dict = array.MakeFromData(d)
	return nil
}

// byteArrays parses n PLAIN byte arrays (each a 4-byte little-endian length, then the
// bytes) into Arrow offsets and values.
func byteArrays(data []byte, n int) ([]int32, []byte, error) {
	if int64(n) > int64(len(data)/4) {
		return nil, nil, fmt.Errorf("dictionary page of %d bytes holds fewer than %d values", len(data), n)
	}
	offsets := make([]int32, n+1)
	values := make([]byte, 0, len(data)-4*n)
	for i := 0; i < n; i++ {
		if len(data) < 4 {
			return nil, nil, errors.New("dictionary page ends before its values")
		}
		l := binary.LittleEndian.Uint32(data)
		if int64(l) > int64(len(data)-4) {
			return nil, nil, errors.New("dictionary page ends before its values")
		}
		if int64(len(values))+int64(l) > math.MaxInt32 {
			return nil, nil, errors.New("dictionary larger than 2 GiB")
		}
		values = append(values, data[4:4+l]...)
		data = data[4+l:]
		offsets[i+1] = int32(len(values))
	}
	return offsets, values, nil
}

func (c *dictColumn) next(n int64) (arrow.Array, error) {
	idx := values[uint32](c.rc, int(n))
	if c.maxDef > 0 && int64(len(c.valid)) < n {
		c.valid = make([]bool, n)
	}
	rows, nv := 0, 0
	for rows < int(n) {
		if ok, err := c.chunkPages.more(c.setDict); err != nil {
			return nil, err
		} else if !ok {
			break
		}
		if !c.indexed {
			return nil, errors.New("PLAIN data page in a chunk whose statistics say it is dictionary-encoded")
		}
		k := min(int(n)-rows, c.left)
		var valid []bool
		if c.maxDef > 0 {
			valid = c.valid[rows:]
		}
		d, err := c.levels(k, valid)
		if err != nil {
			return nil, err
		}
		if err := c.idx.indexes(idx[nv:nv+d], c.dict.Len()); err != nil {
			return nil, err
		}
		rows += k
		nv += d
		c.left -= k
	}
	idx = idx[:rows]
	var valid *memory.Buffer
	if nv < rows {
		valid = memory.NewBufferBytes(spreadValid(idx, c.valid[:rows], nv))
	}
	dict := c.dict
	if dict == nil {
		dict = array.MakeArrayOfNull(memory.DefaultAllocator, c.want, 0)
	}
	d := array.NewData(arrow.PrimitiveTypes.Int32, rows, []*memory.Buffer{valid, memory.NewBufferBytes(bytesOf(idx))}, nil, rows-nv, 0)
	defer d.Release()
	indices := array.MakeFromData(d)
	defer indices.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: c.want}
	return array.NewDictionaryArray(dt, indices, dict), nil
}

func (c *dictColumn) skip(n int64) error {
	return c.skipRows(n, c.setDict, func(int) error {
		return errors.New("PLAIN data page in a chunk whose statistics say it is dictionary-encoded")
	})
}

func (c *dictColumn) release() { c.pages.close() }

// stringColumn decodes a string or binary chunk, in PLAIN pages, dictionary pages or
// both (a dictionary that overflowed), into plain arrays.
type stringColumn struct {
	chunkPages
	want     arrow.DataType
	dictOffs []int32 // the dictionary, when the chunk has one
	dictData []byte
	scratch  []uint32
	valid    []bool
	hint     int       // bytes of the last batch, to size the next
	rc       *Recycler // lends the offsets and bytes of next's batches, or nil
}

func (c *stringColumn) setDict(data []byte, n int) error {
	var err error
	c.dictOffs, c.dictData, err = byteArrays(data, n)
	return err
}

func (c *stringColumn) next(n int64) (arrow.Array, error) {
	offsets := values[int32](c.rc, int(n+1))
	offsets[0] = 0
	// A batch whose bytes outgrow the lent buffer moves to one of its own; the lent
	// one, no longer under any array, comes back at the next Recycle all the same.
	var data []byte
	if int64(len(c.valid)) < n {
		c.valid = make([]bool, n)
		c.scratch = make([]uint32, n)
	}
	rows, nv := 0, 0
	for rows < int(n) {
		if ok, err := c.chunkPages.more(c.setDict); err != nil {
			return nil, err
		} else if !ok {
			break
		}
		if data == nil {
			data = values[byte](c.rc, c.sizeHint(int(n)))[:0]
		}
		k := min(int(n)-rows, c.left)
		valid := c.valid[rows : rows+k]
		d, err := c.levels(k, valid)
		if err != nil {
			return nil, err
		}
		if c.maxDef == 0 {
			for i := range valid {
				valid[i] = true
			}
		}
		offs := offsets[rows+1 : rows+k+1]
		if c.indexed {
			idx := c.scratch[:d]
			if err := c.idx.indexes(idx, len(c.dictOffs)-1); err != nil {
				return nil, err
			}
			j := 0
			for i, v := range valid {
				if v {
					x := idx[j]
					j++
					data = append(data, c.dictData[c.dictOffs[x]:c.dictOffs[x+1]]...)
				}
				offs[i] = int32(len(data))
			}
		} else {
			raw := c.raw
			for i, v := range valid {
				if v {
					if len(raw) < 4 {
						return nil, errors.New("PLAIN data page ends before its values")
					}
					l := binary.LittleEndian.Uint32(raw)
					if int64(l) > int64(len(raw)-4) {
						return nil, errors.New("PLAIN data page ends before its values")
					}
					data = append(data, raw[4:4+l]...)
					raw = raw[4+l:]
				}
				offs[i] = int32(len(data))
			}
			c.raw = raw
		}
		if len(data) > math.MaxInt32 {
			return nil, errors.New("a batch of strings larger than 2 GiB")
		}
		rows += k
		nv += d
		c.left -= k
	}
	c.hint = len(data) + len(data)/8
	var valid *memory.Buffer
	if nv < rows {
		valid = memory.NewBufferBytes(bitmapOf(c.valid[:rows]))
	}
	bufs := []*memory.Buffer{valid, memory.NewBufferBytes(bytesOf(offsets[:rows+1])), memory.NewBufferBytes(data)}
	d := array.NewData(c.want, rows, bufs, nil, rows-nv, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// sizeHint is the bytes n rows of strings are expected to take: as many as the
// last batch's, or, for a reader's first batch, what the current page's values
// take a row (its dictionary's average length, or its PLAIN bytes less their
// lengths), with an eighth to spare. A first guess of nothing would grow the
// batch's bytes from nothing, page after page of a file written with one page a
// chunk.
func (c *stringColumn) sizeHint(n int) int {
	if c.hint > 0 || c.left <= 0 {
		return c.hint
	}
	var per float64
	if c.indexed {
		if entries := len(c.dictOffs) - 1; entries > 0 {
			per = float64(len(c.dictData)) / float64(entries)
		}
	} else {
		per = float64(max(0, len(c.raw)-4*c.left)) / float64(c.left)
	}
	guess := per * float64(n)
	return int(min(guess+guess/8, 1<<30))
}

func (c *stringColumn) skip(n int64) error {
	return c.skipRows(n, c.setDict, func(d int) error {
		raw := c.raw
		for range d {
			if len(raw) < 4 {
				return errors.New("PLAIN data page ends before its values")
			}
			l := binary.LittleEndian.Uint32(raw)
			if int64(l) > int64(len(raw)-4) {
				return errors.New("PLAIN data page ends before its values")
			}
			raw = raw[4+l:]
		}
		c.raw = raw
		return nil
	})
}

func (c *stringColumn) release() { c.pages.close() }

func bitmapOf(valid []bool) []byte {
	bits := make([]byte, bitutil.BytesForBits(int64(len(valid))))
	// Eight at a time, without a branch on each.
	n := len(valid) &^ 7
	for i := 0; i < n; i += 8 {
		v := valid[i : i+8 : i+8]
		bits[i>>3] = b2u(v[0]) | b2u(v[1])<<1 | b2u(v[2])<<2 | b2u(v[3])<<3 |
			b2u(v[4])<<4 | b2u(v[5])<<5 | b2u(v[6])<<6 | b2u(v[7])<<7
	}
	for i := n; i < len(valid); i++ {
		bits[i>>3] |= b2u(valid[i]) << (i & 7)
	}
	return bits
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// spreadValid moves the nv dense values at the start of vals to the rows valid says
// are defined (from the back, so in place), zeroes the others, and returns the
// validity bitmap.
func spreadValid[T any](vals []T, valid []bool, nv int) []byte {
	bits := bitmapOf(valid)
	var zero T
	k := nv - 1
	// From the end, each row takes the last value not yet placed, or zero when NULL;
	// only the count of values left depends on the row's validity.
	for i := len(vals) - 1; i > k; i-- {
		x := vals[max(k, 0)]
		v := valid[i]
		if !v {
			x = zero
		}
		vals[i] = x
		k -= int(b2u(v))
	}
	return bits
}

// PLAIN decoders of fixed-width values (little-endian).

func plainCopy[V int32 | int64 | float32 | float64](src []byte, dst []V) error {
	copy(bytesOf(dst), src)
	return nil
}

func plainMicros(src []byte, dst []int64) error {
	copy(bytesOf(dst), src)
	return millisToMicros(dst)
}

// flbaDecimal reports whether a FIXED_LEN_BYTE_ARRAY leaf is a decimal the page
// path decodes into want: big-endian two's complement integers of at most 8 bytes
// for a 64-bit decimal, 16 for a 128-bit one, of the type's scale.
func flbaDecimal(leaf *schema.Column, want arrow.DataType) bool {
	d, ok := leaf.LogicalType().(schema.DecimalLogicalType)
	if !ok {
		return false
	}
	p, s, isDec := types.DecimalParams(want)
	if !isDec || p != d.Precision() || s != d.Scale() {
		return false
	}
	n := leaf.TypeLength()
	switch want.ID() {
	case arrow.DECIMAL64:
		return n >= 1 && n <= 8
	case arrow.DECIMAL128:
		return n >= 1 && n <= 16
	}
	return false
}

// plainFLBA64 reads big-endian two's-complement integers of len(src)/len(dst)
// bytes each (at most 8), as a FIXED_LEN_BYTE_ARRAY decimal stores them.
func plainFLBA64(src []byte, dst []int64) error {
	if len(dst) == 0 {
		return nil
	}
	n := len(src) / len(dst)
	shift := uint(64 - 8*n)
	for i := range dst {
		var v uint64
		for _, x := range src[i*n : (i+1)*n] {
			v = v<<8 | uint64(x)
		}
		dst[i] = int64(v<<shift) >> shift // sign-extend from n bytes
	}
	return nil
}

// plainFLBA128 is plainFLBA64 for integers of up to 16 bytes.
func plainFLBA128(src []byte, dst []decimal128.Num) error {
	if len(dst) == 0 {
		return nil
	}
	n := len(src) / len(dst)
	for i := range dst {
		b := src[i*n : (i+1)*n]
		var hi, lo uint64
		if b[0]&0x80 != 0 {
			hi, lo = ^uint64(0), ^uint64(0)
		}
		for _, x := range b {
			hi = hi<<8 | lo>>56
			lo = lo<<8 | uint64(x)
		}
		dst[i] = decimal128.New(int64(hi), lo)
	}
	return nil
}

// plainWiden32 reads INT32 values as int64 (a DECIMAL of up to 9 digits as a 64-bit
// decimal).
func plainWiden32(src []byte, dst []int64) error {
	for i := range dst {
		dst[i] = int64(int32(binary.LittleEndian.Uint32(src[4*i:])))
	}
	return nil
}

func plainDecimal32(src []byte, dst []decimal128.Num) error {
	for i := range dst {
		dst[i] = decimal128.FromI64(int64(int32(binary.LittleEndian.Uint32(src[4*i:]))))
	}
	return nil
}

func plainDecimal64(src []byte, dst []decimal128.Num) error {
	for i := range dst {
		dst[i] = decimal128.FromI64(int64(binary.LittleEndian.Uint64(src[8*i:])))
	}
	return nil
}
