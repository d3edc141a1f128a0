package parquet

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore/errs"
)

// arrowSchemaFile is a Parquet file written with its Arrow schema stored: a timestamp
// in a time zone only the Arrow schema knows, a list of int32 and a string.
func arrowSchemaFile(t testing.TB) []byte {
	mem := memory.DefaultAllocator
	tz := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"}
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "ts", Type: tz},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(mem, sch)
	defer b.Release()
	for i := 0; i < 20; i++ {
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1e6))
		lb := b.Field(1).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Int32Builder).Append(int32(i))
		b.Field(2).(*array.StringBuilder).Append(strings.Repeat("x", i%5))
	}
	rec := b.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	err := pqarrow.WriteTable(array.NewTableFromRecords(sch, []arrow.Record{rec}), &buf, 10,
		pq.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// withArrowSchema returns data with its ARROW:schema message changed by edit, which
// keeps its length (so that the footer's does not change).
func withArrowSchema(t *testing.T, data []byte, edit func(t *testing.T, msg []byte, fb *flatbuf)) []byte {
	key := []byte("ARROW:schema")
	i := bytes.LastIndex(data, key)
	if i < 0 {
		t.Fatal("no ARROW:schema in the file")
	}
	// The key is followed by the value's field header and length, then the value.
	r := &thriftReader{b: data[i+len(key)+1:]}
	value := r.binary()
	if r.err != nil {
		t.Fatal(r.err)
	}
	msg, err := base64.StdEncoding.DecodeString(string(value))
	if err != nil {
		t.Fatal(err)
	}
	if binary.LittleEndian.Uint32(msg) != 0xFFFFFFFF {
		t.Fatal("ARROW:schema without a continuation marker")
	}
	n := int(binary.LittleEndian.Uint32(msg[4:]))
	edit(t, msg, &flatbuf{b: msg[8 : 8+n], budget: 1 << 20})
	enc := base64.StdEncoding.EncodeToString(msg)
	if len(enc) != len(value) {
		t.Fatalf("re-encoded ARROW:schema is %d bytes, was %d", len(enc), len(value))
	}
	out := bytes.Clone(data)
	copy(out[i+len(key)+1+r.pos-len(value):], enc)
	return out
}

// schemaTables finds the Message, the Schema and its first field with children in fb.
func schemaTables(t *testing.T, fb *flatbuf) (msg, sch, field fbTable) {
	root, _ := fb.u32(0)
	msg, err := fb.table(root)
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := fb.ref(msg, 2)
	if err != nil {
		t.Fatal(err)
	}
	if sch, err = fb.table(p); err != nil {
		t.Fatal(err)
	}
	err = fb.tables(sch, 1, func(f fbTable) error {
		if n, _, _ := fb.vector(f, 5, 4); n > 0 && field.pos == 0 {
			field = f
		}
		return nil
	})
	if err != nil || field.pos == 0 {
		t.Fatalf("no nested field in the Arrow schema (%v)", err)
	}
	return msg, sch, field
}

// TestCorruptArrowSchema opens files whose stored Arrow schema claims huge vectors, a
// huge message body or a field that is its own child: each is CORRUPT_SOURCE, where
// the library alone would attempt an allocation that kills the process (or recurse
// until the stack does).
func TestCorruptArrowSchema(t *testing.T) {
	good := arrowSchemaFile(t)
	f, err := Open(context.Background(), newMem(good), "good.parquet")
	if err != nil {
		t.Fatal(err)
	}
	// The Arrow schema is still used: its time zone is one Parquet cannot store.
	if tz := f.Schema().Field(0).Type.(*arrow.TimestampType).TimeZone; tz != "Europe/Paris" {
		t.Errorf("time zone %q, want Europe/Paris from the stored Arrow schema", tz)
	}
	setLength := func(t *testing.T, fb *flatbuf, tb fbTable, field int, n uint32) {
		p, _, err := fb.ref(tb, field)
		if err != nil {
			t.Fatal(err)
		}
		binary.LittleEndian.PutUint32(fb.b[p:], n)
	}
	cases := map[string]func(t *testing.T, msg []byte, fb *flatbuf){
		"fields": func(t *testing.T, msg []byte, fb *flatbuf) {
			_, sch, _ := schemaTables(t, fb)
			setLength(t, fb, sch, 1, 0x7fffffff)
		},
		"children": func(t *testing.T, msg []byte, fb *flatbuf) {
			_, _, field := schemaTables(t, fb)
			setLength(t, fb, field, 5, 0x10000000)
		},
		"name": func(t *testing.T, msg []byte, fb *flatbuf) {
			_, _, field := schemaTables(t, fb)
			setLength(t, fb, field, 0, 0x7ffffff0)
		},
		"cycle": func(t *testing.T, msg []byte, fb *flatbuf) {
			_, _, field := schemaTables(t, fb)
			_, at, err := fb.vector(field, 5, 4)
			if err != nil {
				t.Fatal(err)
			}
			// Offsets are unsigned 32-bit and wrap: the child points back at its parent.
			binary.LittleEndian.PutUint32(fb.b[at:], uint32(field.pos-at))
		},
		"message length": func(t *testing.T, msg []byte, fb *flatbuf) {
			binary.LittleEndian.PutUint32(msg[4:], 0x7ffffff0)
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			bad := withArrowSchema(t, good, edit)
			_, err := Open(context.Background(), newMem(bad), "bad.parquet")
			if errs.CodeOf(err) != errs.CorruptSource || !strings.Contains(err.Error(), "bad.parquet") {
				t.Fatalf("got %v, want CORRUPT_SOURCE naming the file", err)
			}
		})
	}
}

// withFooter returns data with its footer replaced by edit's result.
func withFooter(t *testing.T, data []byte, edit func(footer []byte) []byte) []byte {
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	start := len(data) - 8 - n
	footer := edit(bytes.Clone(data[start : len(data)-8]))
	out := append(bytes.Clone(data[:start]), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

// schemaField finds the i32 field id of schema element elem in a footer: where its
// value starts and ends.
func schemaField(t *testing.T, footer []byte, elem int, id int16) (int, int) {
	r := &thriftReader{b: footer}
	from, to := -1, -1
	r.structure(func(fid int16, typ byte) bool {
		if fid != 2 || typ != tList {
			return false
		}
		n, _ := r.listHeader()
		for i := 0; i < int(n); i++ {
			r.structure(func(f int16, typ byte) bool {
				if i == elem && f == id && typ == tI32 {
					from = r.pos
					r.i32()
					to = r.pos
					return true
				}
				return false
			})
		}
		return true
	})
	if r.err != nil || from < 0 {
		t.Fatalf("no field %d in schema element %d (%v)", id, elem, r.err)
	}
	return from, to
}

// TestCorruptSchemaElement opens files whose schema elements claim a huge number of
// children or a huge fixed length: CORRUPT_SOURCE, not an allocation of that size.
func TestCorruptSchemaElement(t *testing.T) {
	zigzag := func(v int64) []byte { return binary.AppendUvarint(nil, uint64(v<<1^v>>63)) }
	for name, v := range map[string]int64{"huge": 1<<31 - 1, "negative": -5, "one too many": 4} {
		t.Run(name, func(t *testing.T) {
			bad := withFooter(t, smallFile(t), func(footer []byte) []byte {
				from, to := schemaField(t, footer, 0, 5) // the root's num_children (3)
				return append(append(footer[:from:from], zigzag(v)...), footer[to:]...)
			})
			_, err := Open(context.Background(), newMem(bad), "bad.parquet")
			if errs.CodeOf(err) != errs.CorruptSource || !strings.Contains(err.Error(), "bad.parquet") {
				t.Fatalf("got %v, want CORRUPT_SOURCE naming the file", err)
			}
		})
	}
}
