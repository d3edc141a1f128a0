package server

import (
	"bufio"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/jsontext"
	"github.com/loredb/lore/types"
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

func columnsOf(res *lore.Result) []column {
	out := []column{}
	if res.Schema == nil {
		return out
	}
	for _, f := range res.Schema.Fields() {
		out = append(out, column{Name: f.Name, Type: types.Name(f.Type)})
	}
	return out
}

// writeJSONResult writes {"query_id","columns","rows","record"} with every value in
// its lossless JSON form (appendValue). Rows are written as they are encoded.
func writeJSONResult(w io.Writer, id string, res *lore.Result) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	head, err := json.Marshal(struct {
		QueryID string   `json:"query_id"`
		Columns []column `json:"columns"`
	}{id, columnsOf(res)})
	if err != nil {
		return err
	}
	bw.Write(head[:len(head)-1])
	bw.WriteString(`,"rows":[`)
	var buf []byte
	first := true
	for _, b := range res.Batches {
		for i := 0; i < int(b.NumRows()); i++ {
			buf = buf[:0]
			if !first {
				buf = append(buf, ',')
			}
			first = false
			buf = append(buf, '[')
			for c := 0; c < int(b.NumCols()); c++ {
				if c > 0 {
					buf = append(buf, ',')
				}
				buf = appendValue(buf, b.Column(c), i)
			}
			buf = append(buf, ']')
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
	}
	rec, err := json.Marshal(res.Record)
	if err != nil {
		return err
	}
	bw.WriteString(`],"record":`)
	bw.Write(rec)
	bw.WriteString("}\n")
	return bw.Flush()
}

// writeNDJSON writes one JSON object per row, keys in column order, values as in
// the json format.
func writeNDJSON(w io.Writer, res *lore.Result) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var keys [][]byte
	if res.Schema != nil {
		for _, f := range res.Schema.Fields() {
			keys = append(keys, append(jsontext.AppendString(nil, f.Name), ':'))
		}
	}
	var buf []byte
	for _, b := range res.Batches {
		for i := 0; i < int(b.NumRows()); i++ {
			buf = append(buf[:0], '{')
			for c := range keys {
				if c > 0 {
					buf = append(buf, ',')
				}
				buf = append(buf, keys[c]...)
				buf = appendValue(buf, b.Column(c), i)
			}
			buf = append(buf, "}\n"...)
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// writeCSV writes a header line and RFC 4180 rows: values in their SQL text form
// (as lore sql --format csv), NULL as an empty field.
func writeCSV(w io.Writer, res *lore.Result) error {
	if res.Schema == nil || res.Schema.NumFields() == 0 {
		return nil
	}
	cw := csv.NewWriter(w)
	rec := make([]string, res.Schema.NumFields())
	for i, f := range res.Schema.Fields() {
		rec[i] = f.Name
	}
	if err := cw.Write(rec); err != nil {
		return err
	}
	for _, b := range res.Batches {
		for i := 0; i < int(b.NumRows()); i++ {
			for c := range rec {
				v := types.ValueAt(b.Column(c), i)
				rec[c] = ""
				if !v.Null {
					rec[c] = v.String()
				}
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeArrow writes the result as an Arrow IPC stream.
func writeArrow(w io.Writer, res *lore.Result) error {
	schema := res.Schema
	if schema == nil {
		schema = arrow.NewSchema(nil, nil)
	}
	iw := ipc.NewWriter(w, ipc.WithSchema(schema))
	for _, b := range res.Batches {
		if err := iw.Write(b); err != nil {
			iw.Close()
			return errs.New(errs.Internal, "cannot write an Arrow batch: %w", err)
		}
	}
	return iw.Close()
}

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
