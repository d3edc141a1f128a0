// Package pgtree parses SQL text into the trees of package pgast, and decodes,
// encodes, walks and copies those trees, without the protobuf runtime.
//
// pg_query hands its trees over as protobuf bytes and takes them back the same way
// to deparse. Doing that with the protobuf library and pg_query_go's types costs a
// fresh process their descriptors' registration before main and, on first use, the
// reflection tables of all 273 messages of pg_query's schema: about 2 ms of CPU for
// a parser whose own work on a statement takes 50 µs. The decoders and encoders here
// are generated from those descriptors once (gen.go, tree_gen.go) and fill and read
// pgast's structs directly; Walk and Clone follow the same generated field lists.
//
// The trees hold what proto.Unmarshal would put in pg_query_go's types, field for
// field, and encode to what proto.Marshal would make of those (both tested).
package pgtree

//go:generate go run gen.go

import (
	"fmt"
	"math"
	"reflect"
	"sync"

	"github.com/pganalyze/pg_query_go/v6/parser"
	"google.golang.org/protobuf/encoding/protowire"

	pg "github.com/loredb/lore/sql/pgast"
)

// MaxDepth bounds the nesting of messages a decode accepts; deeper input is an
// error, not a stack overflow.
const MaxDepth = 1 << 20

// DecodeParse decodes pg_query's protobuf parse result.
func DecodeParse(b []byte) (*pg.ParseResult, error) {
	m := &pg.ParseResult{}
	if err := decodeParseResult(&decoder{}, b, m); err != nil {
		return nil, err
	}
	return m, nil
}

// Parse parses text with PostgreSQL's parser; its errors are the parser's
// (*parser.Error for a syntax error).
func Parse(text string) (*pg.ParseResult, error) {
	b, err := parser.ParseToProtobuf(text)
	if err != nil {
		return nil, err
	}
	return DecodeParse(b)
}

// Deparse renders tree as SQL text with PostgreSQL's deparser.
func Deparse(tree *pg.ParseResult) (string, error) {
	return parser.DeparseFromProtobuf(Encode(tree))
}

// Encode is tree's protobuf encoding, the form pg_query reads.
func Encode(tree *pg.ParseResult) []byte { return encodeParseResult(nil, tree) }

// EncodeSelect is the protobuf encoding of one SELECT statement's tree: the same
// tree gives the same bytes.
func EncodeSelect(m *pg.SelectStmt) []byte { return encodeSelectStmt(nil, m) }

// DecodeScan decodes pg_query's protobuf scan result.
func DecodeScan(b []byte) (*pg.ScanResult, error) {
	m := &pg.ScanResult{}
	if err := decodeScanResult(&decoder{}, b, m); err != nil {
		return nil, err
	}
	return m, nil
}

// Walk calls fn on m (a pointer to a pg_query message) and, where fn returns
// true, on the messages below it: depth first, in the order of their fields'
// declaration, nil children skipped.
func Walk(m any, fn func(any) bool) {
	if fn(m) {
		children(m, func(c any) bool {
			Walk(c, fn)
			return true
		})
	}
}

// Locations calls fn with a pointer to every location field of m itself (not of
// the messages below it): own is true for the field named "location", the
// offset of m's own text; the others are named "…_location".
func Locations(m any, fn func(own bool, p *int32)) { eachLocation(m, fn) }

// Inner returns the message a Node holds, nil for an empty Node.
func Inner(n *pg.Node) any {
	if n == nil {
		return nil
	}
	var inner any
	children(n, func(c any) bool {
		inner = c
		return false
	})
	return inner
}

// Clone returns a deep copy of m, a pointer to a pg_query message.
func Clone[T any](m *T) *T {
	if m == nil {
		return nil
	}
	return cloneValue(reflect.ValueOf(m)).Interface().(*T)
}

// cloneFields lists, per message struct type, the exported fields Clone copies;
// the protobuf runtime's own unexported state stays zero, as in a new message.
var cloneFields sync.Map // reflect.Type → []int

func exportedFields(t reflect.Type) []int {
	if v, ok := cloneFields.Load(t); ok {
		return v.([]int)
	}
	var out []int
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).IsExported() {
			out = append(out, i)
		}
	}
	cloneFields.Store(t, out)
	return out
}

// cloneValue copies v: pointers to structs (messages and oneof wrappers),
// slices, interfaces (oneofs) deeply; strings and numbers by value.
func cloneValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		src, dst := v.Elem(), out.Elem()
		for _, i := range exportedFields(src.Type()) {
			dst.Field(i).Set(cloneValue(src.Field(i)))
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		if k := v.Type().Elem().Kind(); k != reflect.Pointer && k != reflect.Slice && k != reflect.Interface {
			reflect.Copy(out, v)
			return out
		}
		for i := 0; i < v.Len(); i++ {
			out.Index(i).Set(cloneValue(v.Index(i)))
		}
		return out
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(cloneValue(v.Elem()))
		return out
	default:
		return v
	}
}

// decoder carries a decode's nesting depth.
type decoder struct{ depth int }

// field is one decoded field: its number and wire type, and its value (u for
// varints and fixed-width values, b for length-delimited ones).
type field struct {
	num  protowire.Number
	wire protowire.Type
	u    uint64
	b    []byte
}

// next consumes the field at the start of *b.
func (d *decoder) next(b *[]byte) (field, error) {
	num, wire, n := protowire.ConsumeTag(*b)
	if n < 0 {
		return field{}, protowire.ParseError(n)
	}
	*b = (*b)[n:]
	f := field{num: num, wire: wire}
	switch wire {
	case protowire.VarintType:
		f.u, n = protowire.ConsumeVarint(*b)
	case protowire.Fixed64Type:
		f.u, n = protowire.ConsumeFixed64(*b)
	case protowire.Fixed32Type:
		var u uint32
		u, n = protowire.ConsumeFixed32(*b)
		f.u = uint64(u)
	case protowire.BytesType:
		f.b, n = protowire.ConsumeBytes(*b)
	default:
		// Groups are not in pg_query's schema; skip one whole if it ever comes.
		n = protowire.ConsumeFieldValue(num, wire, *b)
	}
	if n < 0 {
		return field{}, protowire.ParseError(n)
	}
	*b = (*b)[n:]
	return f, nil
}

// message decodes the fields of one message, handing each to set.
func (d *decoder) message(b []byte, set func(field) error) error {
	if d.depth++; d.depth > MaxDepth {
		return fmt.Errorf("parse tree nested deeper than %d messages", MaxDepth)
	}
	for len(b) > 0 {
		f, err := d.next(&b)
		if err != nil {
			return err
		}
		if err := set(f); err != nil {
			return err
		}
	}
	d.depth--
	return nil
}

func setInt[T ~int32 | ~int64 | ~uint32 | ~uint64](f field, dst *T) {
	if f.wire == protowire.VarintType {
		*dst = T(f.u)
	}
}

func setBool(f field, dst *bool) {
	if f.wire == protowire.VarintType {
		*dst = f.u != 0
	}
}

func setDouble(f field, dst *float64) {
	if f.wire == protowire.Fixed64Type {
		*dst = math.Float64frombits(f.u)
	}
}

func setString(f field, dst *string) {
	if f.wire == protowire.BytesType {
		*dst = string(f.b)
	}
}

func appendString(f field, dst *[]string) {
	if f.wire == protowire.BytesType {
		*dst = append(*dst, string(f.b))
	}
}

// oneof decodes a member of a oneof and sets it, replacing any other member.
func oneof[T any](d *decoder, f field, set func(*T), dec func(*decoder, []byte, *T) error) error {
	if f.wire != protowire.BytesType {
		return nil
	}
	x := new(T)
	if err := dec(d, f.b, x); err != nil {
		return err
	}
	set(x)
	return nil
}

// one decodes a singular message field into *dst, merging into what is there as
// protobuf does when a field repeats.
func one[T any](d *decoder, f field, dst **T, dec func(*decoder, []byte, *T) error) error {
	if f.wire != protowire.BytesType {
		return nil
	}
	if *dst == nil {
		*dst = new(T)
	}
	return dec(d, f.b, *dst)
}

// list decodes one element of a repeated message field.
func list[T any](d *decoder, f field, dst *[]*T, dec func(*decoder, []byte, *T) error) error {
	if f.wire != protowire.BytesType {
		return nil
	}
	x := new(T)
	if err := dec(d, f.b, x); err != nil {
		return err
	}
	*dst = append(*dst, x)
	return nil
}

// varints decodes a repeated uint64 field, packed or not.
func varints(f field, dst *[]uint64) error {
	switch f.wire {
	case protowire.VarintType:
		*dst = append(*dst, f.u)
	case protowire.BytesType:
		for b := f.b; len(b) > 0; {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			*dst = append(*dst, v)
			b = b[n:]
		}
	}
	return nil
}

func visitOne[T any](m *T, visit func(any) bool) bool { return m == nil || visit(m) }

func visitAll[T any](ms []*T, visit func(any) bool) bool {
	for _, m := range ms {
		if m != nil && !visit(m) {
			return false
		}
	}
	return true
}

// putVarint appends field num as a varint.
func putVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// putDouble appends field num as a 64-bit float, unless v is zero (positive zero
// only: proto3 keeps a negative zero).
func putDouble(b []byte, num protowire.Number, v float64) []byte {
	if math.Float64bits(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(v))
}

// putString appends field num as a string.
func putString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// putPacked appends a repeated uint64 field num in packed form, nothing when empty.
func putPacked(b []byte, num protowire.Number, vs []uint64) []byte {
	if len(vs) == 0 {
		return b
	}
	n := 0
	for _, v := range vs {
		n += protowire.SizeVarint(v)
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	for _, v := range vs {
		b = protowire.AppendVarint(b, v)
	}
	return b
}

// putMessage appends message m (an empty one when nil) as field num. Its length
// is known only once it is encoded: one byte is set aside for it, and the encoding
// moves along when the length needs more.
func putMessage[T any](b []byte, num protowire.Number, m *T, enc func([]byte, *T) []byte) []byte {
	if m == nil {
		m = new(T)
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	at := len(b)
	b = enc(append(b, 0), m)
	n := len(b) - at - 1
	if n < 0x80 {
		b[at] = byte(n)
		return b
	}
	k := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, k-1)...)
	copy(b[at+k:], b[at+1:at+1+n])
	protowire.AppendVarint(b[:at], uint64(n))
	return b
}
