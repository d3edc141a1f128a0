package parquet

import (
	"errors"
	"fmt"
	"io"
	"math/bits"

	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// The page walker: the page path reads a column chunk's pages itself, so that a page
// none of whose rows are wanted is neither read from the file nor decompressed. Page
// headers are Thrift structures in the compact protocol; only the fields the page
// path uses are kept, the rest (page statistics, CRCs) are passed over.

// Page types, as the format numbers them.
const (
	pageData       = 0
	pageIndex      = 1
	pageDictionary = 2
	pageDataV2     = 3
)

// Page size limits: a header claiming more is refused rather than allocated.
const (
	maxCompressedPage   = 64 << 20
	maxUncompressedPage = 256 << 20
	maxPageHeader       = 16 << 20
	headerReadAhead     = 256 // bytes read past a page body, for the next header
)

// pageHeader is what the page path needs of a page header.
type pageHeader struct {
	typ          int32
	uncompressed int32 // the body's size decompressed
	compressed   int32 // the body's size in the file
	numValues    int32 // values, which are rows in a flat column
	encoding     int32
	defEncoding  int32 // V1: the definition levels' encoding
	defLen       int32 // V2: bytes of definition levels, uncompressed, first in the body
	repLen       int32 // V2: bytes of repetition levels, before those
	v2Compressed bool  // V2: whether the values are compressed (true unless said)
}

// pageAt is a page: its header and where its body starts in the file.
type pageAt struct {
	pageHeader
	body int64
}

// pageWalker walks the pages of one column chunk in a file.
type pageWalker struct {
	src   io.ReaderAt
	pos   int64 // the next header's offset
	end   int64 // the chunk's end
	left  int64 // values of the chunk's data pages not yet reached
	codec compress.Codec
	// most is the largest size a page may decompress to: the column chunk's
	// uncompressed size (its pages' sizes and headers) when the footer states one.
	most int64

	ahead   []byte // bytes of the file from aheadAt on, read with the last body
	aheadAt int64
	comp    []byte // the last body read, when it was not decompressed
	plain   []byte // the last body decompressed, reused
	// aheadBuf keeps ahead once a compressed body's buffer has gone back to the
	// pool.
	aheadBuf [headerReadAhead]byte
	// share, when the chunk's row group is read in parts at once, is where the
	// parts find its pages decompressed by one of them; f is the file the walker
	// reads, which helping the other parts reads too.
	share *PageShare
	f     *File
}

// chunkWalker returns a walker over the chunk of leaf in row group rg, or nil when the
// chunk is one the page path leaves to the library: encrypted, compressed with a codec
// the library does not have, or written by a parquet-mr old enough to misstate its
// sizes.
func (f *File) chunkWalker(rg, leaf int) (*pageWalker, error) {
	if !f.walkable(rg, leaf) {
		return nil, nil
	}
	ci := f.chunk(rg, leaf)
	codec, err := compress.GetCodec(ci.codec)
	if err != nil {
		return nil, nil
	}
	start, n := ci.start, ci.compressed
	if start < 0 || n < 0 || start > f.size || n > f.size-start {
		return nil, fmt.Errorf("column chunk at %d of %d bytes lies outside the file of %d bytes", start, n, f.size)
	}
	if ci.values < 0 {
		return nil, fmt.Errorf("column chunk with a negative value count %d", ci.values)
	}
	if ci.codec == compress.Codecs.Uncompressed {
		codec = nil
	}
	most := int64(maxUncompressedPage)
	if u := ci.uncompressed; u > 0 {
		most = min(most, u)
	}
	w := &pageWalker{src: f.src, pos: start, end: start + n, left: ci.values, codec: codec, most: most, f: f}
	if f.share != nil && f.share.rg == rg && codec != nil {
		w.share = f.share
	}
	return w, nil
}

// checkDictionary checks the dictionary page of the chunk of leaf in row group rg,
// when it has one, for a chunk the library is to read: the library allocates as many
// values as the page header says it holds, so the count must fit in the page's bytes
// (a PLAIN value takes its width, a byte array its 4-byte length at least).
func (f *File) checkDictionary(rg, leaf int) error {
	if ci := f.chunk(rg, leaf); ci == nil || !ci.hasDict {
		return nil
	}
	w, err := f.chunkWalker(rg, leaf)
	if w == nil || err != nil {
		return err
	}
	defer w.close()
	p, ok, err := w.next()
	if !ok || err != nil || p.typ != pageDictionary {
		return err
	}
	width := int64(1)
	switch col := f.sch.Column(leaf); col.PhysicalType() {
	case pq.Types.Int32, pq.Types.Float, pq.Types.ByteArray:
		width = 4
	case pq.Types.Int64, pq.Types.Double:
		width = 8
	case pq.Types.Int96:
		width = 12
	case pq.Types.FixedLenByteArray:
		width = max(int64(col.TypeLength()), 1)
	}
	if p.numValues < 0 || int64(p.numValues)*width > int64(p.uncompressed) {
		return fmt.Errorf("dictionary page of %d bytes says it holds %d values", p.uncompressed, p.numValues)
	}
	return nil
}

// walkable reports whether the page walker can read the chunk of leaf in row group
// rg (see chunkWalker).
func (f *File) walkable(rg, leaf int) bool {
	ci := f.chunk(rg, leaf)
	if ci == nil || ci.encrypted || ci.oldWriter {
		return false
	}
	_, err := compress.GetCodec(ci.codec)
	return err == nil
}

// PassesOverPages reports whether rows of columns cols of row group rg can be passed
// over page by page, without decoding them: whether every one takes the page path.
// Reading a row group in parts pays only then.
func (f *File) PassesOverPages(rg int, cols []int) bool {
	if rg < 0 || rg >= len(f.groups) {
		return false
	}
	for _, c := range cols {
		if c < 0 || c >= len(f.cols) || f.pageKind(rg, c) == pageNone || !f.walkable(rg, f.cols[c].leaves[0]) {
			return false
		}
	}
	return true
}

// WholePages reports the compressed bytes of the chunks of columns cols in row group
// rg whose first data page holds all of the chunk's values — bytes that every part
// of the row group, however it is cut, reads and decompresses whole (a writer such
// as DuckDB puts a chunk in one page) — and the bytes of all of them. It reads the
// first page header of each chunk the page path reads.
func (f *File) WholePages(rg int, cols []int) (whole, total int64, err error) {
	for _, c := range cols {
		if c < 0 || c >= len(f.cols) {
			continue
		}
		for _, leaf := range f.cols[c].leaves {
			ci := f.chunk(rg, leaf)
			if ci == nil {
				continue
			}
			total += ci.compressed
			w, err := f.chunkWalker(rg, leaf)
			if err != nil {
				return 0, 0, err
			}
			if w == nil {
				continue
			}
			for {
				p, ok, err := w.next()
				if err != nil {
					w.close()
					return 0, 0, err
				}
				if !ok {
					break
				}
				if p.typ == pageDictionary {
					continue
				}
				if int64(p.numValues) >= ci.values {
					whole += ci.compressed
				}
				break
			}
			w.close()
		}
	}
	return whole, total, nil
}

// next reads the next page header; ok is false past the chunk's last data page.
// Index pages and page types this reader does not know are passed over.
func (w *pageWalker) next() (p pageAt, ok bool, err error) {
	for w.left > 0 && w.pos < w.end {
		h, n, err := w.header()
		if err != nil {
			return p, false, err
		}
		if h.compressed < 0 || h.uncompressed < 0 {
			return p, false, errors.New("page header with a negative size")
		}
		if h.compressed > maxCompressedPage || h.uncompressed > maxUncompressedPage {
			return p, false, fmt.Errorf("page of %d bytes (%d decompressed) is over the limit", h.compressed, h.uncompressed)
		}
		if int64(h.uncompressed) > w.most {
			return p, false, fmt.Errorf("page decompressing to %d bytes in a column chunk of %d", h.uncompressed, w.most)
		}
		body := w.pos + int64(n)
		if int64(h.compressed) > w.end-body {
			return p, false, errors.New("page body runs past its column chunk")
		}
		w.pos = body + int64(h.compressed)
		switch h.typ {
		case pageDictionary:
		case pageData, pageDataV2:
			if h.numValues < 0 {
				return p, false, errors.New("data page with a negative count")
			}
			w.left -= int64(h.numValues)
		default:
			continue
		}
		return pageAt{pageHeader: h, body: body}, true, nil
	}
	return p, false, nil
}

// header parses the header at w.pos, from the bytes read ahead when they hold it,
// reading more from the file otherwise.
func (w *pageWalker) header() (pageHeader, int, error) {
	if w.pos >= w.aheadAt && w.pos < w.aheadAt+int64(len(w.ahead)) {
		h, n, err := parsePageHeader(w.ahead[w.pos-w.aheadAt:])
		if err != errThriftShort {
			return h, n, err
		}
	}
	for size := int64(headerReadAhead); ; size *= 2 {
		size = min(size, w.end-w.pos)
		buf := make([]byte, size)
		if _, err := w.src.ReadAt(buf, w.pos); err != nil && err != io.EOF {
			return pageHeader{}, 0, err
		}
		h, n, err := parsePageHeader(buf)
		if err != errThriftShort {
			return h, n, err
		}
		if size == w.end-w.pos || size >= maxPageHeader {
			return pageHeader{}, 0, errors.New("page header runs past its column chunk")
		}
	}
}

// data reads the body of page p and decompresses it: for a V2 page, the levels (never
// compressed) and then the values. The bytes are valid until the next call (until
// the share is done with, for a page of a shared row group).
func (w *pageWalker) data(p pageAt) ([]byte, error) {
	if w.share != nil && w.decompresses(p) {
		return w.share.page(w, p)
	}
	return w.decode(p, &w.plain)
}

// decompresses reports whether the body of page p is compressed, rather than read
// as it is.
func (w *pageWalker) decompresses(p pageAt) bool {
	return w.codec != nil && (p.typ != pageDataV2 || p.v2Compressed)
}

// decode reads the body of page p and decompresses it into *buf, grown as the page
// needs (an uncompressed body is returned as read, in the walker's own buffer).
func (w *pageWalker) decode(p pageAt, buf *[]byte) ([]byte, error) {
	size := int(p.compressed)
	extra := int(min(headerReadAhead, w.end-(p.body+int64(size))))
	w.comp = growPage(w.comp, size+extra)
	if _, err := w.src.ReadAt(w.comp, p.body); err != nil && err != io.EOF {
		return nil, err
	}
	comp := w.comp[:size]
	w.ahead, w.aheadAt = w.comp[size:], p.body+int64(size)
	levels := 0
	if p.typ == pageDataV2 {
		if p.defLen < 0 || p.repLen < 0 || int(p.defLen)+int(p.repLen) > size {
			return nil, errors.New("data page shorter than its levels")
		}
		levels = int(p.defLen) + int(p.repLen)
	}
	if !w.decompresses(p) {
		if size != int(p.uncompressed) {
			return nil, fmt.Errorf("uncompressed page of %d bytes says it has %d", size, p.uncompressed)
		}
		return comp, nil
	}
	if levels > int(p.uncompressed) {
		return nil, errors.New("data page shorter than its levels")
	}
	// The room past the page is what its buffer's class leaves: the pure-Go
	// Zstandard decoder, which takes small pages, finds a block's worth there in
	// the smallest class; the system library, which takes the rest, needs none
	// (asking for a block more put a 983 KB page in a 1.25 MiB buffer, not 1 MiB).
	*buf = growPage(*buf, int(p.uncompressed))[:p.uncompressed]
	plain := *buf
	copy(plain, comp[:levels])
	out, err := compress.Decode(w.codec, plain[levels:], comp[levels:])
	if err != nil {
		return nil, fmt.Errorf("cannot decompress page: %w", err)
	}
	if levels+len(out) != int(p.uncompressed) {
		return nil, fmt.Errorf("page decompressed to %d bytes, its header says %d", levels+len(out), p.uncompressed)
	}
	if len(out) > 0 && &out[0] != &plain[levels] {
		copy(plain[levels:], out) // the codec did not decode in place
	}
	// The compressed body is done with: its buffer goes back to the pool at once
	// rather than wait, one per column, for the chunk's next page (a worker that
	// reads ten columns would hold ten), keeping only the bytes read past it.
	w.ahead = w.aheadBuf[:copy(w.aheadBuf[:], w.ahead)]
	putPage(w.comp)
	w.comp = nil
	return plain, nil
}

// close ends the walk; its buffers go back to the pool for other chunks (nothing
// read from a chunk keeps pointing into them: every decoder copies its values).
func (w *pageWalker) close() {
	putPage(w.comp)
	putPage(w.plain)
	*w = pageWalker{}
}

// pageBufs pools the buffers pages are read and decompressed into, by size class:
// a scan reads thousands of column chunks, each of which would otherwise allocate,
// and clear, buffers of its pages' size. The classes start at 64 KiB and step by a
// quarter of a power of two (64, 80, 96, 112, 128, 160 KiB, …): a page of 1 MiB and
// the decoder's headroom past it takes 1.25 MiB, not 2, and one of 9 MiB (a column
// chunk of long strings in one page) 10, not 16, per column a worker reads.
var pageBufs pagePool

const (
	pageClassMin = 16 // 64 KiB, the smallest class
	pageClasses  = 24*4 + 1
)

// pageClassOf is the smallest class holding n bytes: its index and size (index
// pageClasses when none does).
func pageClassOf(n int) (int, int) {
	if n <= 1<<pageClassMin {
		return 0, 1 << pageClassMin
	}
	e := bits.Len(uint(n-1)) - 1 // 2^e < n <= 2^(e+1)
	step := 1 << (e - 2)
	q := (n - 1<<e + step - 1) / step // 1 to 4 quarters past 2^e
	return (e-pageClassMin)*4 + q, 1<<e + q*step
}

// pageClassIn is the largest class a buffer of c bytes holds, or -1.
func pageClassIn(c int) int {
	if c < 1<<pageClassMin {
		return -1
	}
	e := bits.Len(uint(c)) - 1 // 2^e <= c < 2^(e+1)
	return (e-pageClassMin)*4 + (c-1<<e)/(1<<(e-2))
}

// growPage is grow for page buffers: a buffer too small goes back to the pool and
// one of a class large enough is taken from it.
func growPage(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	putPage(b)
	c, size := pageClassOf(n)
	if c >= pageClasses {
		return make([]byte, n)
	}
	if p := pageBufs.get(c); p != nil {
		return p[:n]
	}
	return make([]byte, n, size)
}

// putPage returns b to the pool of the largest class its capacity holds.
func putPage(b []byte) {
	c := pageClassIn(cap(b))
	if c < 0 || c >= pageClasses {
		return
	}
	pageBufs.put(c, b[:cap(b)])
}

// decodeHeadroom is the room past the output that lets the pure-Go Zstandard
// decoder take its fast path to the last block (a block is at most 128 KiB).
const decodeHeadroom = 160 << 10

// grow returns s resized to n elements, reallocated when too small.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/8)
	}
	return s[:n]
}

// Thrift compact protocol: just enough to read page headers.

var errThriftShort = errors.New("thrift structure ends early")

// Compact protocol type codes.
const (
	tStop   = 0
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
)

type thriftReader struct {
	b     []byte
	pos   int
	err   error
	depth int
}

func (r *thriftReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *thriftReader) byte() byte {
	if r.pos >= len(r.b) {
		r.fail(errThriftShort)
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

func (r *thriftReader) uvarint() uint64 {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	r.fail(errors.New("malformed varint in a page header"))
	return 0
}

func (r *thriftReader) varint() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (r *thriftReader) i32() int32 {
	v := r.varint()
	if v < -1<<31 || v >= 1<<31 {
		r.fail(errors.New("page header integer out of range"))
	}
	return int32(v)
}

// field reads a field header; typ is tStop at the end of a structure.
func (r *thriftReader) field(last int16) (id int16, typ byte) {
	c := r.byte()
	typ = c & 0x0f
	if typ == tStop || r.err != nil {
		return 0, tStop
	}
	if d := c >> 4; d != 0 {
		return last + int16(d), typ
	}
	return int16(r.varint()), typ
}

// skip passes over a value of type typ.
func (r *thriftReader) skip(typ byte) {
	if r.err != nil {
		return
	}
	switch typ {
	case tTrue, tFalse:
	case tByte:
		r.byte()
	case tI16, tI32, tI64:
		r.uvarint()
	case tDouble:
		r.bytes(8)
	case tBinary:
		r.bytes(r.uvarint())
	case tList, tSet:
		r.elements(r.listHeader())
	case tMap:
		n := r.uvarint()
		if n > uint64(len(r.b)-r.pos) {
			r.fail(errThriftShort)
			return
		}
		if n > 0 {
			c := r.byte()
			for i := uint64(0); i < n && r.err == nil; i++ {
				r.elements(1, c>>4)
				r.elements(1, c&0x0f)
			}
		}
	case tStruct:
		r.structure(func(int16, byte) bool { return false })
	default:
		r.fail(fmt.Errorf("unknown type %d in a page header", typ))
	}
}

// listHeader reads the header of a list or set: its length, which is no more than the
// bytes left (every element takes one at least), and its elements' type.
func (r *thriftReader) listHeader() (n uint64, typ byte) {
	c := r.byte()
	n, typ = uint64(c>>4), c&0x0f
	if n == 15 {
		n = r.uvarint()
	}
	if n > uint64(len(r.b)-r.pos) {
		r.fail(errThriftShort)
		return 0, typ
	}
	return n, typ
}

// elements passes over n values of type typ (booleans in containers take a byte).
func (r *thriftReader) elements(n uint64, typ byte) {
	if n > uint64(len(r.b)-r.pos) {
		r.fail(errThriftShort)
		return
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		if typ == tTrue || typ == tFalse {
			r.byte()
		} else {
			r.skip(typ)
		}
	}
}

func (r *thriftReader) bytes(n uint64) {
	if n > uint64(len(r.b)-r.pos) {
		r.fail(errThriftShort)
		return
	}
	r.pos += int(n)
}

// binary reads a string or binary value, a slice of the input.
func (r *thriftReader) binary() []byte {
	n := r.uvarint()
	at := r.pos
	if r.bytes(n); r.err != nil {
		return nil
	}
	return r.b[at:r.pos]
}

// structure reads the fields of a structure, handing each to fn, which reads it and
// returns true, or returns false to have it passed over.
func (r *thriftReader) structure(fn func(id int16, typ byte) bool) {
	if r.depth++; r.depth > 16 {
		r.fail(errors.New("page header nested too deeply"))
		return
	}
	defer func() { r.depth-- }()
	var last int16
	for r.err == nil {
		id, typ := r.field(last)
		if typ == tStop {
			return
		}
		if !fn(id, typ) {
			r.skip(typ)
		}
		last = id
	}
}

// parsePageHeader parses a page header at the start of b and returns it and its
// length; errThriftShort when b ends first.
func parsePageHeader(b []byte) (pageHeader, int, error) {
	r := &thriftReader{b: b}
	h := pageHeader{typ: -1, v2Compressed: true}
	var seen [3]bool // type, uncompressed size, compressed size
	var own [4]bool  // by page type: its own header
	i32 := func(typ byte, dst *int32) bool {
		if typ != tI32 {
			return false
		}
		*dst = r.i32()
		return true
	}
	r.structure(func(id int16, typ byte) bool {
		switch id {
		case 1:
			seen[0] = true
			return i32(typ, &h.typ)
		case 2:
			seen[1] = true
			return i32(typ, &h.uncompressed)
		case 3:
			seen[2] = true
			return i32(typ, &h.compressed)
		case 5, 7, 8: // data page, dictionary page, data page V2
			if typ != tStruct {
				return false
			}
			switch id {
			case 5:
				own[pageData] = true
			case 7:
				own[pageDictionary] = true
			case 8:
				own[pageDataV2] = true
			}
			r.structure(func(f int16, typ byte) bool {
				switch {
				case f == 1:
					return i32(typ, &h.numValues)
				case id == 5 && f == 2, id == 7 && f == 2, id == 8 && f == 4:
					return i32(typ, &h.encoding)
				case id == 5 && f == 3:
					return i32(typ, &h.defEncoding)
				case id == 8 && f == 5:
					return i32(typ, &h.defLen)
				case id == 8 && f == 6:
					return i32(typ, &h.repLen)
				case id == 8 && f == 7 && (typ == tTrue || typ == tFalse):
					h.v2Compressed = typ == tTrue
					return true
				}
				return false
			})
			return true
		}
		return false
	})
	if r.err != nil {
		return h, 0, r.err
	}
	if !seen[0] || !seen[1] || !seen[2] {
		return h, 0, errors.New("page header without its type or sizes")
	}
	if (h.typ == pageData || h.typ == pageDictionary || h.typ == pageDataV2) && !own[h.typ] {
		return h, 0, fmt.Errorf("page header of type %d without its own header", h.typ)
	}
	return h, r.pos, nil
}
