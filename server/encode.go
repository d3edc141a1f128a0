package server

import (
	"bufio"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/jsontext"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// Formats a statement's result can take, with their content types.
var formatTypes = map[string]string{
	"json":   "application/json",
	"ndjson": "application/x-ndjson",
	"csv":    "text/csv; charset=utf-8",
	"arrow":  "application/vnd.apache.arrow.stream",
}

// column is one result column as the JSON formats name it.
type column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

func columnsOf(schema *arrow.Schema) []column {
	out := []column{}
	if schema == nil {
		return out
	}
	for _, f := range schema.Fields() {
		out = append(out, column{Name: f.Name, Type: types.Name(f.Type)})
	}
	return out
}

// appendJSONRow appends row i of b as a JSON array of its values in their lossless
// form (appendValue).
func appendJSONRow(buf []byte, b arrow.Record, i int) []byte {
	buf = append(buf, '[')
	for c := 0; c < int(b.NumCols()); c++ {
		if c > 0 {
			buf = append(buf, ',')
		}
		buf = appendValue(buf, b.Column(c), i)
	}
	return append(buf, ']')
}

// encoder writes a streamed result in one format: begin with the schema, batch for
// each batch, then end for a complete result or fail for one that stopped.
type encoder interface {
	begin(schema *arrow.Schema) error
	batch(b arrow.Record) error
	// end completes the stream (Arrow's end-of-stream marker).
	end() error
	// fail writes the error frame of a stream that stopped after it began, if the
	// format has one; the response is then aborted.
	fail(eb *errorBody)
}

// newEncoder returns the encoder of a streaming format (arrow, ndjson, csv) over w.
func newEncoder(format string, w *bufio.Writer) encoder {
	switch format {
	case "arrow":
		return &arrowEncoder{w: w}
	case "ndjson":
		return &ndjsonEncoder{w: w}
	}
	return &csvEncoder{w: w}
}

// ndjsonEncoder writes one JSON object per row, keys in column order, values as in
// the json format. Its error frame is a last line {"error": {...}}.
type ndjsonEncoder struct {
	w    *bufio.Writer
	keys [][]byte
	buf  []byte
}

var _ encoder = (*ndjsonEncoder)(nil)

func (e *ndjsonEncoder) begin(schema *arrow.Schema) error {
	if schema != nil {
		for _, f := range schema.Fields() {
			e.keys = append(e.keys, append(jsontext.AppendString(nil, f.Name), ':'))
		}
	}
	return nil
}

func (e *ndjsonEncoder) batch(b arrow.Record) error {
	for i := 0; i < int(b.NumRows()); i++ {
		buf := append(e.buf[:0], '{')
		for c := range e.keys {
			if c > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, e.keys[c]...)
			buf = appendValue(buf, b.Column(c), i)
		}
		buf = append(buf, "}\n"...)
		e.buf = buf
		if _, err := e.w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

func (e *ndjsonEncoder) end() error { return nil }

func (e *ndjsonEncoder) fail(eb *errorBody) {
	line, err := json.Marshal(struct {
		Error *errorBody `json:"error"`
	}{eb})
	if err == nil {
		e.w.Write(append(line, '\n'))
	}
}

// csvEncoder writes a header line and RFC 4180 rows: values in their SQL text form
// (as lore sql --format csv), NULL as an empty field. CSV has no error frame: a
// stream that stops is aborted, so the client sees an incomplete response.
type csvEncoder struct {
	w   *bufio.Writer
	cw  *csv.Writer
	rec []string
}

var _ encoder = (*csvEncoder)(nil)

func (e *csvEncoder) begin(schema *arrow.Schema) error {
	if schema == nil || schema.NumFields() == 0 {
		return nil
	}
	// Not e.w itself: csv would take our buffer as its own and its Flush would flush
	// it, beginning the response at the first row.
	e.cw = csv.NewWriter(writerOnly{e.w})
	e.rec = make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		e.rec[i] = f.Name
	}
	if err := e.cw.Write(e.rec); err != nil {
		return err
	}
	e.cw.Flush()
	return e.cw.Error()
}

func (e *csvEncoder) batch(b arrow.Record) error {
	if e.cw == nil {
		return nil
	}
	for i := 0; i < int(b.NumRows()); i++ {
		for c := range e.rec {
			v := types.ValueAt(b.Column(c), i)
			e.rec[c] = ""
			if !v.Null {
				e.rec[c] = v.String()
			}
		}
		if err := e.cw.Write(e.rec); err != nil {
			return err
		}
	}
	e.cw.Flush()
	return e.cw.Error()
}

// writerOnly hides all but Write of a writer.
type writerOnly struct{ w *bufio.Writer }

func (w writerOnly) Write(p []byte) (int, error) { return w.w.Write(p) }

func (e *csvEncoder) end() error      { return nil }
func (e *csvEncoder) fail(*errorBody) {}

// arrowEncoder writes an Arrow IPC stream. A stream that stops never gets its
// end-of-stream marker and is aborted: a reader sees an unexpected end, not a
// shorter result.
type arrowEncoder struct {
	w  *bufio.Writer
	iw *ipc.Writer
}

var _ encoder = (*arrowEncoder)(nil)

func (e *arrowEncoder) begin(schema *arrow.Schema) error {
	if schema == nil {
		schema = arrow.NewSchema(nil, nil)
	}
	// Decimals go out in 128 bits, which every Arrow reader takes.
	e.iw = ipc.NewWriter(e.w, ipc.WithSchema(vector.WideSchema(schema)))
	return nil
}

func (e *arrowEncoder) batch(b arrow.Record) error {
	if err := e.iw.Write(vector.WideRecord(b)); err != nil {
		return errs.New(errs.Internal, "cannot write an Arrow batch: %w", err)
	}
	return nil
}

func (e *arrowEncoder) end() error {
	if e.iw == nil {
		if err := e.begin(nil); err != nil {
			return err
		}
	}
	return e.iw.Close()
}

func (e *arrowEncoder) fail(*errorBody) {}

// appendValue appends row i of arr as lossless typed JSON:
//
//   - 8- to 32-bit integers and finite floats as JSON numbers;
//   - BIGINT, UBIGINT, HUGEINT and DECIMAL as strings holding the exact value, since
//     many JSON readers turn every number into a float64;
//   - NaN, Infinity and -Infinity as those strings;
//   - DATE as "YYYY-MM-DD"; TIMESTAMP WITH TIME ZONE as RFC 3339 in UTC ("Z"),
//     TIMESTAMP as RFC 3339 without an offset (a local date-time); infinite dates
//     and timestamps as "infinity"/"-infinity"; TIME and INTERVAL as their SQL text;
//   - BLOB as base64 (standard alphabet, padded); UUID as its text;
//   - lists as arrays, structs as objects, maps as arrays of {"key","value"}.
func appendValue(dst []byte, arr arrow.Array, i int) []byte {
	if arr.DataType().ID() == arrow.NULL || arr.IsNull(i) {
		return append(dst, "null"...)
	}
	switch a := arr.(type) {
	case *array.Dictionary:
		return appendValue(dst, a.Dictionary(), a.GetValueIndex(i))
	case *array.Boolean:
		return strconv.AppendBool(dst, a.Value(i))
	case *array.Int8:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Int32:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Uint8:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10)
	case *array.Uint16:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10)
	case *array.Uint32:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10)
	case *array.Int64:
		return quoted(dst, strconv.AppendInt(nil, a.Value(i), 10))
	case *array.Uint64:
		return quoted(dst, strconv.AppendUint(nil, a.Value(i), 10))
	case *array.Float16:
		return appendFloat(dst, float64(a.Value(i).Float32()), 32)
	case *array.Float32:
		return appendFloat(dst, float64(a.Value(i)), 32)
	case *array.Float64:
		return appendFloat(dst, a.Value(i), 64)
	case *array.Decimal128:
		return jsontext.AppendString(dst, types.FormatDecimal(a.Value(i), a.DataType().(arrow.DecimalType).GetScale()))
	case *array.Decimal64:
		return jsontext.AppendString(dst, types.FormatDecimal(decimal128.FromI64(int64(a.Value(i))), a.DataType().(arrow.DecimalType).GetScale()))
	case *array.Decimal256:
		return jsontext.AppendString(dst, a.ValueStr(i))
	case *array.String:
		return jsontext.AppendString(dst, a.Value(i))
	case *array.LargeString:
		return jsontext.AppendString(dst, a.Value(i))
	case *array.StringView:
		return jsontext.AppendString(dst, a.Value(i))
	case *array.Date32:
		return jsontext.AppendString(dst, types.FormatDate(int32(a.Value(i))))
	case *array.Date64:
		return jsontext.AppendString(dst, types.FormatDate(int32(int64(a.Value(i))/86400000)))
	case *array.Timestamp:
		return appendTimestamp(dst, int64(a.Value(i)), a.DataType().(*arrow.TimestampType))
	case *array.List:
		return appendList(dst, a, i)
	case *array.LargeList:
		return appendList(dst, a, i)
	case *array.FixedSizeList:
		return appendList(dst, a, i)
	case *array.Map:
		return appendMap(dst, a, i)
	case *array.Struct:
		return appendStruct(dst, a, i)
	}
	dt := arr.DataType()
	switch {
	case types.IsUUID(dt), types.IsTime(dt), dt.ID() == arrow.INTERVAL_MONTH_DAY_NANO:
		return jsontext.AppendString(dst, types.ValueAt(arr, i).String())
	case types.IsBinary(dt):
		return jsontext.AppendString(dst, base64.StdEncoding.EncodeToString([]byte(types.ValueAt(arr, i).S)))
	}
	return jsontext.AppendString(dst, arr.ValueStr(i))
}

func quoted(dst, digits []byte) []byte {
	dst = append(dst, '"')
	dst = append(dst, digits...)
	return append(dst, '"')
}

func appendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

func appendTimestamp(dst []byte, v int64, t *arrow.TimestampType) []byte {
	if s := types.TimestampInfSign(v); s != 0 {
		if s > 0 {
			return append(dst, `"infinity"`...)
		}
		return append(dst, `"-infinity"`...)
	}
	tm := types.TimeOf(v, t.Unit)
	layout := "2006-01-02T15:04:05.999999999"
	if t.TimeZone != "" {
		layout += "Z07:00"
	}
	dst = append(dst, '"')
	dst = tm.AppendFormat(dst, layout)
	return append(dst, '"')
}

// listLike is what the list arrays share.
type listLike interface {
	arrow.Array
	ValueOffsets(i int) (start, end int64)
	ListValues() arrow.Array
}

func appendList(dst []byte, a listLike, i int) []byte {
	start, end := a.ValueOffsets(i)
	vals := a.ListValues()
	dst = append(dst, '[')
	for j := start; j < end; j++ {
		if j > start {
			dst = append(dst, ',')
		}
		dst = appendValue(dst, vals, int(j))
	}
	return append(dst, ']')
}

func appendMap(dst []byte, a *array.Map, i int) []byte {
	start, end := a.ValueOffsets(i)
	keys, items := a.Keys(), a.Items()
	dst = append(dst, '[')
	for j := start; j < end; j++ {
		if j > start {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"key":`...)
		dst = appendValue(dst, keys, int(j))
		dst = append(dst, `,"value":`...)
		dst = appendValue(dst, items, int(j))
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

func appendStruct(dst []byte, a *array.Struct, i int) []byte {
	st := a.DataType().(*arrow.StructType)
	dst = append(dst, '{')
	for f := 0; f < a.NumField(); f++ {
		if f > 0 {
			dst = append(dst, ',')
		}
		dst = jsontext.AppendString(dst, st.Field(f).Name)
		dst = append(dst, ':')
		dst = appendValue(dst, a.Field(f), i)
	}
	return append(dst, '}')
}

// asciiJSON rewrites JSON text so that every character beyond ASCII is a \u escape:
// the record travels in a header (X-Lore-Record), where only ASCII is safe.
func asciiJSON(b []byte) string {
	out := make([]byte, 0, len(b))
	const hex = "0123456789abcdef"
	esc := func(r rune) {
		out = append(out, '\\', 'u', hex[r>>12&0xF], hex[r>>8&0xF], hex[r>>4&0xF], hex[r&0xF])
	}
	for _, r := range string(b) {
		switch {
		case r < utf8.RuneSelf:
			out = append(out, byte(r))
		case r > 0xFFFF:
			r -= 0x10000
			esc(0xD800 + (r>>10)&0x3FF)
			esc(0xDC00 + r&0x3FF)
		default:
			esc(r)
		}
	}
	return string(out)
}
