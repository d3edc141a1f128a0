package kernels

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// StringList is the type of the lists of strings that string_split,
// regexp_extract_all and regexp_split_to_array return: VARCHAR[].
var StringList = arrow.ListOf(arrow.BinaryTypes.String)

// listBuilder collects the rows of a VARCHAR[] result: each row is opened, given
// its elements (strings or NULLs) and closed, or is NULL.
type listBuilder struct {
	offs  []int32
	elems *strBuilder
	valid []byte
	nulls int
}

func newListBuilder(n, sizeHint int) *listBuilder {
	return &listBuilder{offs: make([]int32, 1, n+1), elems: newStrBuilder(n, sizeHint)}
}

// add appends one element to the open row.
func (b *listBuilder) add(s string) { b.elems.add(s) }

// addNullElem appends a NULL element to the open row.
func (b *listBuilder) addNullElem() { b.elems.addNull() }

// end closes the row whose elements were added since the last one.
func (b *listBuilder) end() { b.offs = append(b.offs, int32(len(b.elems.offs)-1)) }

// addNull appends a NULL row.
func (b *listBuilder) addNull() {
	b.valid = nullAt(b.valid, len(b.offs)-1)
	b.nulls++
	b.end()
}

// nullAt marks row i NULL in a validity bitmap that is grown, all rows valid, as
// rows are added.
func nullAt(valid []byte, i int) []byte {
	if bitmapLen(i+1) > len(valid) {
		grown := make([]byte, 2*bitmapLen(i+1)+8)
		bitutil.SetBitsTo(grown, 0, int64(8*len(grown)), true)
		copy(grown, valid)
		valid = grown
	}
	bitutil.ClearBit(valid, i)
	return valid
}

// validRows is a bitmap grown by nullAt cut, or padded with valid rows, to n rows:
// rows after the last NULL may lie beyond what it has grown to.
func validRows(valid []byte, n int) []byte {
	if len(valid) >= bitmapLen(n) {
		return valid[:bitmapLen(n)]
	}
	grown := make([]byte, bitmapLen(n))
	bitutil.SetBitsTo(grown, 0, int64(8*len(grown)), true)
	copy(grown, valid)
	return grown
}

func (b *listBuilder) finish() arrow.Array {
	n := len(b.offs) - 1
	var valid []byte
	if b.nulls > 0 {
		valid = validRows(b.valid, n)
	}
	child := b.elems.finish()
	data := array.NewData(StringList, n, []*memory.Buffer{validBuf(valid), memory.NewBufferBytes(bytesOf(b.offs))},
		[]arrow.ArrayData{child.Data()}, b.nulls, 0)
	return array.MakeFromData(data)
}

// evalLists runs f over rows where every argument is non-NULL, producing VARCHAR[];
// f adds the row's elements and the row is closed after it.
func evalLists(args []arrow.Array, n int, f func(i int, b *listBuilder) error) (arrow.Array, error) {
	valid, _ := andValidity(n, args...)
	b := newListBuilder(n, 16*n)
	for i := 0; i < n; i++ {
		if !isValid(valid, 0, i) {
			b.addNull()
			continue
		}
		if err := f(i, b); err != nil {
			return nil, err
		}
		b.end()
	}
	return b.finish(), nil
}
