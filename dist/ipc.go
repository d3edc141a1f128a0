package dist

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// ipcStream is the Arrow IPC stream of records recs of schema schema (none: the
// schema alone).
func ipcStream(schema *arrow.Schema, recs ...arrow.Record) ([]byte, error) {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			w.Close()
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// newIPCReader reads the Arrow IPC stream b, once checkIPC has found its messages
// whole: Arrow's reader trusts the lengths it reads, and allocates whatever a
// damaged one claims.
func newIPCReader(b []byte, opts ...ipc.Option) (*ipc.Reader, error) {
	if err := checkIPC(b); err != nil {
		return nil, err
	}
	return ipc.NewReader(bytes.NewReader(b), opts...)
}

// checkIPC checks what Arrow's reader of stream b takes on trust: that each
// message's metadata and body lie within b, and that every table, string and
// vector of the metadata (a flatbuffer) lies within the metadata. It checks only
// the parts of the metadata that the streams of this package hold — schemas and
// uncompressed record batches — and refuses any other message.
func checkIPC(b []byte) error {
	for len(b) >= 4 {
		n := binary.LittleEndian.Uint32(b)
		b = b[4:]
		if n == 0xFFFFFFFF && len(b) >= 4 {
			n = binary.LittleEndian.Uint32(b)
			b = b[4:]
		}
		if n == 0 {
			return nil // the end of the stream
		}
		if n > uint32(len(b)) {
			return fmt.Errorf("an Arrow message of %d bytes in %d", n, len(b))
		}
		c := &fbCheck{b: b[:n], visits: int(n) / 4}
		body := c.message()
		if !c.ok() || body < 0 || body > int64(len(b))-int64(n) {
			return fmt.Errorf("a damaged Arrow message")
		}
		b = b[int64(n)+body:]
	}
	return nil // Arrow's reader reports a stream cut short
}

// fbCheck checks a flatbuffer of Arrow IPC message metadata. Positions it returns
// are within b; 0 stands for an absent part, and once bad is set they mean nothing.
type fbCheck struct {
	b []byte
	// visits bounds the tables visited: entries of vectors naming one table must
	// not multiply the work (ours, then Arrow's).
	visits int
	bad    bool
}

func (c *fbCheck) ok() bool { return !c.bad }

// at is the position of n bytes at p, or 0 (and bad) when they are not all in b.
func (c *fbCheck) at(p, n int) int {
	if c.bad || p <= 0 || p > len(c.b)-n {
		c.bad = true
		return 0
	}
	return p
}

func (c *fbCheck) u16(p int) int { return int(binary.LittleEndian.Uint16(c.b[p:])) }
func (c *fbCheck) u32(p int) int { return int(binary.LittleEndian.Uint32(c.b[p:])) }

// table checks the table at p and its vtable.
func (c *fbCheck) table(p int) int {
	if c.visits--; c.visits < 0 || c.at(p, 4) == 0 {
		c.bad = true
		return 0
	}
	vt := c.at(p-int(int32(c.u32(p))), 4)
	if vt == 0 {
		return 0
	}
	vsize, tsize := c.u16(vt), c.u16(vt+2)
	if vsize < 4 || vsize%2 != 0 || c.at(vt, vsize) == 0 || tsize < 4 || c.at(p, tsize) == 0 {
		c.bad = true
		return 0
	}
	for i := vt + 4; i < vt+vsize; i += 2 {
		if o := c.u16(i); o != 0 && (o < 4 || o >= tsize) {
			c.bad = true
			return 0
		}
	}
	return p
}

// field is the position of field i of table t, 0 when absent.
func (c *fbCheck) field(t, i int) int {
	if c.bad || t == 0 {
		return 0
	}
	vt := t - int(int32(c.u32(t)))
	if 4+2*i >= c.u16(vt) {
		return 0
	}
	if o := c.u16(vt + 4 + 2*i); o != 0 {
		return t + o
	}
	return 0
}

// scalar is the value of field i of table t, n bytes little-endian (0 when absent).
func (c *fbCheck) scalar(t, i, n int) int64 {
	p := c.field(t, i)
	if p == 0 || c.at(p, n) == 0 {
		return 0
	}
	var v uint64
	for k := n - 1; k >= 0; k-- {
		v = v<<8 | uint64(c.b[p+k])
	}
	return int64(v)
}

// ref follows the offset in field i of table t to what it names.
func (c *fbCheck) ref(t, i int) int {
	p := c.field(t, i)
	if p == 0 || c.at(p, 4) == 0 {
		return 0
	}
	return c.at(p+c.u32(p), 4)
}

// vector checks the vector at v (0: none) of elements of size bytes, and returns
// its length.
func (c *fbCheck) vector(v, size int) int {
	if v == 0 || c.bad {
		return 0
	}
	n := c.u32(v)
	if n > (len(c.b)-v-4)/size {
		c.bad = true
		return 0
	}
	return n
}

// tables checks the vector of tables at v (0: none), each with check.
func (c *fbCheck) tables(v int, check func(t int)) {
	n := c.vector(v, 4)
	for i := 0; i < n && !c.bad; i++ {
		e := v + 4 + 4*i
		if t := c.table(c.at(e+c.u32(e), 4)); t != 0 {
			check(t)
		}
	}
}

// message checks a Message and returns its body's length.
func (c *fbCheck) message() int64 {
	if len(c.b) < 4 {
		c.bad = true
		return 0
	}
	m := c.table(c.u32(0))
	c.keyValues(c.ref(m, 4))
	header := c.ref(m, 2)
	switch c.scalar(m, 1, 1) {
	case 1: // Schema
		s := c.table(header)
		c.tables(c.ref(s, 1), c.arrowField)
		c.keyValues(c.ref(s, 2))
		c.vector(c.ref(s, 3), 8)
	case 2: // DictionaryBatch
		c.recordBatch(c.table(c.ref(c.table(header), 1)))
	case 3: // RecordBatch
		c.recordBatch(c.table(header))
	default:
		c.bad = true
	}
	return c.scalar(m, 3, 8)
}

func (c *fbCheck) arrowField(f int) {
	c.vector(c.ref(f, 0), 1)
	if ty := c.ref(f, 3); ty != 0 {
		t := c.table(ty)
		switch c.scalar(f, 2, 1) {
		case 10: // Timestamp: its time zone
			c.vector(c.ref(t, 1), 1)
		case 14: // Union: its type ids
			c.vector(c.ref(t, 1), 4)
		}
	}
	if d := c.ref(f, 4); d != 0 {
		if it := c.ref(c.table(d), 1); it != 0 {
			c.table(it)
		}
	}
	c.tables(c.ref(f, 5), c.arrowField)
	c.keyValues(c.ref(f, 6))
}

func (c *fbCheck) keyValues(v int) {
	c.tables(v, func(kv int) {
		c.vector(c.ref(kv, 0), 1)
		c.vector(c.ref(kv, 1), 1)
	})
}

// recordBatch checks a RecordBatch: its field nodes and buffers (structs of 16
// bytes) and variadic buffer counts. A compressed batch is refused: this package
// writes none, and decompressing allocates what the body claims.
func (c *fbCheck) recordBatch(r int) {
	if r == 0 || c.field(r, 3) != 0 {
		c.bad = true
		return
	}
	c.vector(c.ref(r, 1), 16)
	c.vector(c.ref(r, 2), 16)
	c.vector(c.ref(r, 4), 8)
}
