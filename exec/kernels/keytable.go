package kernels

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/loredb/lore/internal/pages"
	"github.com/loredb/lore/types"
)

// NotFound is the id Find reports for a key that is not in the table.
const NotFound = ^uint32(0)

const (
	// ktMinSlots is the initial number of slots of a table.
	ktMinSlots = 64
	// ktSparseSlots is the size up to which a table is kept at most a quarter full;
	// larger ones grow at 70 %.
	ktSparseSlots = 1 << 14
	// ktTagMask selects the part of a slot that holds the top 32 bits of the key's hash;
	// the low 32 bits hold id+1, so an empty slot is 0.
	ktTagMask = uint64(0xffffffff00000000)
)

// KeyTable maps multi-column keys to dense ids 0, 1, 2, … in first-seen order, and
// stores the distinct keys columnar. It is the hash table of group-by, distinct and
// join builds.
//
// The table is open addressing with linear probing over a power-of-two array of slots,
// grown when more than 70 % full (25 % while small). A slot is one uint64: the top half of the key's hash
// (checked before comparing keys) and id+1. Keys are stored per column in their
// normalised form (see hash.go): words, word pairs, or a byte arena with offsets, plus
// a NULL flag per key, and the full hash per id so that growing never rehashes keys.
// Keys of several fixed-width columns are stored row-major instead, with a mask of
// their NULL columns, so that comparing or adding one touches one place in memory.
// A table of a single fixed-width column (the commonest GROUP BY) uses 16-byte slots
// holding the key itself, so a probe touches one cache line, keeps NULL out of the
// slots, and rehashes its keys when growing instead of storing hashes; plain integer
// columns without NULLs are hashed and probed in one pass.
// A single fixed-width column whose keys fill a range densely (surrogate keys, dates)
// drops the slots for an array indexed by the key's offset in the range.
// A single dictionary-encoded column is looked up once per distinct entry of a batch,
// and a key made only of small dictionary columns once per distinct combination.
// Leading string columns that are dictionaries indexed alike (a join's build columns)
// are hashed once per dictionary entry, and compared by entry (see ktDictGroup).
//
// NULL is a key value equal to itself (GROUP BY semantics); floats compare -0 equal to
// +0 and NaN equal to NaN. A KeyTable is not safe for concurrent use: use one per
// worker and combine them with Merge.
type KeyTable struct {
	types []arrow.DataType
	cols  []ktColumn
	slots []uint64
	mask  uint64
	// A table of one fixed-width column keeps the key inside its slot instead, so
	// a lookup touches one cache line, and keeps NULL out of the slots (nullID).
	wordSlots []ktWordSlot
	nullID    uint32
	// A one-word table whose keys are integers of a dense range keeps no slots but
	// direct[w-base] = id+1 for the key of word w (0: absent), 4 bytes per value of
	// the range against 16 per slot (see goDirect). dlo, dhi are the least and
	// greatest keys held (signed); reserve is the most keys Reserve announced.
	direct   []uint32
	base     uint64
	dlo, dhi int64
	reserve  int
	growAt   int
	dense    bool     // no sparse small sizes (see Dense)
	hashes   []uint64 // per id; one-word tables keep none (their keys rehash cheaply)
	n        int
	// A table of several fixed-width columns stores its keys row-major instead of in
	// cols: key id is rows[id*stride : (id+1)*stride], the words of each column in
	// order and then a mask of its NULL columns, so that comparing a key touches one
	// place in memory rather than one per column, and adding one appends once.
	stride int // 0: keys are stored per column
	rows   []uint64
	// srcs[id] is epoch<<32 | entry+1 when key id was added from entry of the
	// dictionaries of grp at that epoch, else 0; it may be shorter than n (zeros).
	srcs []uint64
	grp  *ktDictGroup

	// per-batch scratch, reused
	vecs    []hashKeyVec
	hbuf    []uint64
	pos     []int32
	memo    []uint32 // per dictionary entry (or combination): ordinal+1; all zero between calls
	entries []int32
	dpos    []int32 // lookupDicts: the entry of each row, column after column
	epos    []int32
	entIDs  []uint32
	kbuf    []uint64 // the batch's keys row-major (stride > 0)
	touched uint64   // what ktTouchWords read, kept so that its loads are made
}

// ktWordSlot is a slot of a one-word-key table: the key and id+1 (0: empty).
type ktWordSlot struct {
	key uint64
	ref uint64
}

// ktColumn is one key column of a table in normalised form.
type ktColumn struct {
	kind    hashKind
	words   []uint64 // hashKindWord: per key; hashKindWide: low, high per key
	offs    []int    // hashKindBytes: key i is data[offs[i]:offs[i+1]]
	data    []byte
	nulls   []bool // per key
	hasNull bool
}

// NewKeyTable returns an empty table for keys of the given column types (dictionary
// types stand for their value type). It panics if a type is not a valid key type:
// callers check ValidKeyType first.
func NewKeyTable(keyTypes []arrow.DataType) *KeyTable {
	t := &KeyTable{
		types:  make([]arrow.DataType, len(keyTypes)),
		cols:   make([]ktColumn, len(keyTypes)),
		nullID: NotFound,
	}
	for j, dt := range keyTypes {
		if d, ok := dt.(*arrow.DictionaryType); ok {
			dt = d.ValueType
		}
		kind, ok := hashKindOf(dt)
		if !ok {
			panic(fmt.Sprintf("BUG: %s is not a valid key type", dt))
		}
		t.types[j] = dt
		t.cols[j].kind = kind
		if kind == hashKindBytes {
			t.cols[j].offs = []int{0}
		}
	}
	t.stride = ktRowStride(t.cols)
	t.resize(ktMinSlots)
	return t
}

// ktRowStride returns the words of a row-major key for the columns, or 0 when the
// keys are better stored per column: a single column (see wordSlots), a string
// column, or more columns than the NULL mask has bits.
func ktRowStride(cols []ktColumn) int {
	if len(cols) < 2 || len(cols) > 64 {
		return 0
	}
	stride := 1 // the NULL mask
	for _, c := range cols {
		switch c.kind {
		case hashKindWord:
			stride++
		case hashKindWide:
			stride += 2
		default:
			return 0
		}
	}
	return stride
}

// Len is the number of distinct keys.
func (t *KeyTable) Len() int { return t.n }

// Insert finds or adds the key of each selected row: ids[k] receives the id of the key
// at row sel[k] (sel nil = rows 0..len(ids)-1). New keys get the next ids in row order.
func (t *KeyTable) Insert(cols []arrow.Array, sel []int32, ids []uint32) {
	t.lookup(cols, sel, ids, true)
}

// Find looks the keys of the selected rows up without inserting them; ids[k] is
// NotFound when the key at row sel[k] is absent.
func (t *KeyTable) Find(cols []arrow.Array, sel []int32, ids []uint32) {
	t.lookup(cols, sel, ids, false)
}

func (t *KeyTable) lookup(cols []arrow.Array, sel []int32, ids []uint32, insert bool) {
	if len(cols) != len(t.cols) {
		panic(fmt.Sprintf("BUG: %d key columns for a table of %d", len(cols), len(t.cols)))
	}
	n := len(ids)
	if n == 0 {
		return
	}
	if len(cols) == 0 {
		// The key of no columns: every row has the one empty key.
		if insert && t.n == 0 {
			t.hashes = append(t.hashes, hashNull)
			t.n = 1
		}
		id := uint32(0)
		if t.n == 0 {
			id = NotFound
		}
		for k := range ids {
			ids[k] = id
		}
		return
	}
	if d, ok := cols[0].(*array.Dictionary); ok && len(cols) == 1 {
		t.lookupDict(d, sel, ids, insert)
		return
	}
	if len(cols) > 1 && t.lookupDicts(cols, sel, ids, insert) {
		return
	}
	if t.wordKeyed() && t.lookupRawInts(cols[0], sel, ids, insert) {
		return
	}
	if insert && len(cols) > 1 && t.lookupGroup(cols, sel, ids) {
		return
	}
	t.vecs = hashGrow(t.vecs, len(cols))
	for j, c := range cols {
		hashNormalize(c, sel, n, &t.vecs[j])
	}
	t.hbuf = hashGrow(t.hbuf, n)
	hashVecs(t.vecs, t.hbuf)
	t.probe(t.vecs, t.hbuf, ids, insert)
	t.dropRefs()
}

// lookupDict handles a single dictionary-encoded key column: each distinct dictionary
// entry of the batch is looked up once, in first-seen order, and rows take their
// entry's id. Two passes over the rows: the first collects the distinct entries in
// first-seen order (memo marks them) and stops as soon as every entry a row can name
// has been seen, which for a small dictionary is within the first rows; once the
// entries are looked up, memo holds each one's id and the second pass gives every row
// its entry's id. memo is all zeros again on return.
func (t *KeyTable) lookupDict(d *array.Dictionary, sel []int32, ids []uint32, insert bool) {
	n := len(ids)
	dict := d.Dictionary()
	nullEntry := dict.Len() // the memo slot of a NULL index
	if len(t.memo) < nullEntry+1 {
		t.memo = make([]uint32, nullEntry+1)
	}
	memo := t.memo
	pos, inRoom := DictEntries(d, t.pos)
	if inRoom {
		t.pos = pos
	}
	row := func(k int) int {
		if sel != nil {
			return int(sel[k])
		}
		return k
	}
	slot := func(p int32) int {
		if p < 0 {
			return nullEntry
		}
		return int(p)
	}
	reach := nullEntry // how many distinct slots the rows can name
	if d.Indices().NullN() > 0 {
		reach++
	}
	entries := t.entries[:0] // each distinct entry's dictionary index, -1 for NULL
	for k := 0; k < n && len(entries) < reach; k++ {
		p := pos[row(k)]
		if e := slot(p); memo[e] == 0 {
			entries = append(entries, p)
			memo[e] = uint32(len(entries))
		}
	}
	t.entries = entries
	m := len(entries)
	t.vecs = hashGrow(t.vecs, 1)
	hashGather(dict, entries, m, &t.vecs[0])
	t.vecs[0].hashes = nil
	t.hbuf = hashGrow(t.hbuf, m)
	hashVecs(t.vecs[:1], t.hbuf)
	t.entIDs = hashGrow(t.entIDs, m)
	t.probe(t.vecs[:1], t.hbuf, t.entIDs, insert)
	t.dropRefs()
	for j, p := range entries {
		memo[slot(p)] = t.entIDs[j]
	}
	switch {
	case sel == nil && d.Indices().NullN() == 0:
		for k, p := range pos[:n] {
			ids[k] = memo[p]
		}
	default:
		for k := range ids {
			ids[k] = memo[slot(pos[row(k)])]
		}
	}
	for _, p := range entries {
		memo[slot(p)] = 0
	}
}

// ktMaxCombos bounds the number of combinations of dictionary entries (NULL counted
// as an entry) for which lookupDicts keeps a memo slot.
const ktMaxCombos = 1 << 16

// lookupDicts handles keys whose columns are all dictionary-encoded with few entries
// (GROUP BY returnflag, linestatus): each row's combination of entries is numbered,
// each distinct combination of the batch is looked up once, in first-seen order, and
// rows take their combination's id. ok is false when the columns do not qualify.
func (t *KeyTable) lookupDicts(cols []arrow.Array, sel []int32, ids []uint32, insert bool) (ok bool) {
	n := len(ids)
	combos := 1
	for _, c := range cols {
		d, isDict := c.(*array.Dictionary)
		if !isDict {
			return false
		}
		if combos *= d.Dictionary().Len() + 1; combos > ktMaxCombos {
			return false
		}
	}
	// code[k] numbers row k's combination: a mixed-radix number of its entries, with
	// the NULL index as the last digit value of each column.
	t.pos = hashGrow(t.pos, n)
	code := t.pos
	clear(code)
	t.dpos = hashGrow(t.dpos, len(cols)*n)
	stride := int32(1)
	for j, c := range cols {
		d := c.(*array.Dictionary)
		pos := t.dpos[j*n : (j+1)*n]
		hashDictIndices(d, sel, pos)
		null := int32(d.Dictionary().Len())
		for k, p := range pos {
			if p < 0 {
				p = null
			}
			code[k] += p * stride
		}
		stride *= null + 1
	}
	if len(t.memo) < combos {
		t.memo = make([]uint32, combos)
	}
	memo := t.memo
	first := t.entries[:0] // the first row of each distinct combination
	for k, cd := range code {
		if memo[cd] == 0 {
			first = append(first, int32(k))
			memo[cd] = uint32(len(first))
		}
	}
	for k, cd := range code {
		code[k] = int32(memo[cd] - 1) // now the combination's ordinal
	}
	for _, k := range first {
		memo[t.comboOf(cols, k, n)] = 0
	}
	t.entries = first
	m := len(first)
	// Normalise the distinct combinations, column by column, from their first rows.
	t.vecs = hashGrow(t.vecs, len(cols))
	t.epos = hashGrow(t.epos, m)
	for j, c := range cols {
		pos := t.dpos[j*n : (j+1)*n]
		for i, k := range first {
			t.epos[i] = pos[k]
		}
		hashGather(c.(*array.Dictionary).Dictionary(), t.epos, m, &t.vecs[j])
		t.vecs[j].hashes = nil
	}
	t.hbuf = hashGrow(t.hbuf, m)
	hashVecs(t.vecs, t.hbuf)
	t.entIDs = hashGrow(t.entIDs, m)
	t.probe(t.vecs, t.hbuf, t.entIDs, insert)
	t.dropRefs()
	for k, o := range code {
		ids[k] = t.entIDs[o]
	}
	return true
}

// comboOf recomputes the combination number of row k from the saved entry positions
// (the code slice has been overwritten with ordinals by then).
func (t *KeyTable) comboOf(cols []arrow.Array, k int32, n int) int32 {
	cd, stride := int32(0), int32(1)
	for j, c := range cols {
		null := int32(c.(*array.Dictionary).Dictionary().Len())
		p := t.dpos[j*n+int(k)]
		if p < 0 {
			p = null
		}
		cd += p * stride
		stride *= null + 1
	}
	return cd
}

// ktDictGroup is the leading key columns of a batch when they are dictionaries of
// strings over equally long dictionaries and every row indexes the same entry of each
// (the build columns of a join, which a join hands on as dictionaries indexed by the
// build row). The group's part of a key is then a function of that one entry: its
// hash is computed once per entry, and a key added from the same entry of the same
// dictionaries is equal without comparing the strings.
type ktDictGroup struct {
	p     int               // the group is key columns 0..p-1
	dicts []arrow.ArrayData // held, so that no other array takes their addresses
	arrs  []arrow.Array
	nulls []bool // per column: whether its dictionary has NULL entries
	offs  [][]int32
	data  [][]byte
	epoch uint32
	// hashes holds, per entry and last for the entry standing for all NULL, the hash
	// of columns 0..p-1; valid when hashed.
	hashes []uint64
	hashed bool
	codes  []int32 // per row of the batch: its entry (len(hashes)-1: all NULL)
	ent    hashKeyVec
	// the batch's indices, and the columns with NULL indices
	idx      []*array.Int32
	nullCols []int
}

// ktGroupColumns returns how many leading columns of cols can form a ktDictGroup:
// dictionaries with int32 indices of plain strings or binaries, all of the same
// length.
func ktGroupColumns(cols []arrow.Array) int {
	p, size := 0, -1
	for _, c := range cols {
		d, ok := c.(*array.Dictionary)
		if !ok || d.Indices().DataType().ID() != arrow.INT32 {
			break
		}
		dict := d.Dictionary()
		if id := dict.DataType().ID(); id != arrow.STRING && id != arrow.BINARY {
			break
		}
		if size >= 0 && dict.Len() != size {
			break
		}
		size = dict.Len()
		p++
	}
	return p
}

// lookupGroup is Insert for a batch whose leading columns form a ktDictGroup (see
// there); ok is false when they do not, or when their dictionaries are new and
// larger than the batch (hashing every entry would cost more than the rows: the
// group is remembered, and the next batch over the same dictionaries takes this way).
func (t *KeyTable) lookupGroup(cols []arrow.Array, sel []int32, ids []uint32) (ok bool) {
	p := ktGroupColumns(cols)
	if p < 2 {
		return false
	}
	n := len(ids)
	g := t.grp
	same := g != nil && g.p == p
	for j := 0; same && j < p; j++ {
		same = cols[j].(*array.Dictionary).Dictionary().Data() == g.dicts[j]
	}
	size := cols[0].(*array.Dictionary).Dictionary().Len()
	if !same {
		if g == nil {
			g = new(ktDictGroup)
			t.grp = g
		}
		g.p, g.epoch, g.hashed = p, g.epoch+1, false
		g.dicts, g.arrs, g.nulls, g.offs, g.data = g.dicts[:0], g.arrs[:0], g.nulls[:0], g.offs[:0], g.data[:0]
		for _, c := range cols[:p] {
			dict := c.(*array.Dictionary).Dictionary()
			var data []byte
			if b := dict.Data().Buffers()[2]; b != nil {
				data = b.Bytes()
			}
			g.dicts = append(g.dicts, dict.Data())
			g.arrs = append(g.arrs, dict)
			g.nulls = append(g.nulls, dict.NullN() > 0)
			g.offs = append(g.offs, hashOffsets[int32](dict.Data()))
			g.data = append(g.data, data)
		}
		if size > n {
			return false
		}
	}
	ok = g.rowCodes(cols, sel, n)
	clear(g.idx) // the batch's arrays are not kept
	if !ok {
		return false
	}
	if !g.hashed {
		g.hashes = hashGrow(g.hashes, size+1)
		for j := 0; j < p; j++ {
			hashGather(g.arrs[j], nil, size, &g.ent)
			hashVecInto(&g.ent, g.hashes[:size], j > 0)
		}
		clear(g.ent.strBuf) // the hashes are kept, not the views of the strings
		h := uint64(hashNull)
		for j := 1; j < p; j++ {
			h = hashCombine(h, hashNull)
		}
		g.hashes[size] = h
		g.hashed = true
	}
	t.hbuf = hashGrow(t.hbuf, n)
	for k, e := range g.codes[:n] {
		t.hbuf[k] = g.hashes[e]
	}
	t.vecs = hashGrow(t.vecs, len(cols))
	for j := p; j < len(cols); j++ {
		hashNormalize(cols[j], sel, n, &t.vecs[j])
		hashVecInto(&t.vecs[j], t.hbuf, true)
	}
	t.probeGroup(g, t.vecs, t.hbuf, ids)
	t.dropRefs()
	return true
}

// rowCodes finds the entry of each selected row (g.codes), and reports whether every
// row indexes the same entry in all the group's columns. A NULL index is taken as
// the entry of the other columns when that entry is NULL in its own column too, and a
// row of only NULL indices as the extra all-NULL entry.
func (g *ktDictGroup) rowCodes(cols []arrow.Array, sel []int32, n int) bool {
	g.codes = hashGrow(g.codes, n)
	codes := g.codes
	g.idx, g.nullCols = g.idx[:0], g.nullCols[:0]
	for j, c := range cols[:g.p] {
		idx := c.(*array.Dictionary).Indices().(*array.Int32)
		g.idx = append(g.idx, idx)
		if idx.NullN() > 0 {
			g.nullCols = append(g.nullCols, j)
		}
	}
	hashIndices(g.idx[0].Int32Values(), sel, codes)
	for _, idx := range g.idx[1:] {
		vals := idx.Int32Values()
		if sel == nil {
			if !slices.Equal(vals[:n], codes) {
				return false
			}
			continue
		}
		for k, i := range sel[:n] {
			if vals[i] != codes[k] {
				return false
			}
		}
	}
	size := int32(g.arrs[0].Len())
	for _, e := range codes {
		if e < 0 || e >= size {
			return false
		}
	}
	if len(g.nullCols) == 0 {
		return true
	}
	for k, e := range codes {
		i := k
		if sel != nil {
			i = int(sel[k])
		}
		nulls := 0
		for _, j := range g.nullCols {
			if g.idx[j].IsNull(i) {
				nulls++
			}
		}
		switch {
		case nulls == 0:
			continue
		case nulls == g.p:
			codes[k] = size
			continue
		}
		for _, j := range g.nullCols {
			if g.idx[j].IsNull(i) && !(g.nulls[j] && g.arrs[j].IsNull(int(e))) {
				return false
			}
		}
	}
	return true
}

// entry returns the value of the group's column j at entry e.
func (g *ktDictGroup) entry(j int, e int32) (b []byte, isNull bool) {
	if int(e) == len(g.hashes)-1 || g.nulls[j] && g.arrs[j].IsNull(int(e)) {
		return nil, true
	}
	return g.data[j][g.offs[j][e]:g.offs[j][e+1]], false
}

// probeGroup is probe for a batch whose columns 0..g.p-1 are the group g at the
// entries g.codes, and whose other columns are normalised in vecs.
func (t *KeyTable) probeGroup(g *ktDictGroup, vecs []hashKeyVec, hashes []uint64, ids []uint32) {
	for len(t.srcs) < t.n {
		t.srcs = append(t.srcs, 0)
	}
	base := uint64(g.epoch) << 32
	slots, mask := t.slots, t.mask
	for k, h := range hashes[:len(ids)] {
		e := g.codes[k]
		src := base | uint64(e+1)
		tag := h & ktTagMask
		i := h & mask
		for {
			s := slots[i]
			if s == 0 {
				id := uint32(t.n)
				for j := 0; j < g.p; j++ {
					c := &t.cols[j]
					b, isNull := g.entry(j, e)
					c.data = append(c.data, b...)
					c.offs = append(c.offs, len(c.data))
					c.nulls = append(c.nulls, isNull)
					c.hasNull = c.hasNull || isNull
				}
				t.addCols(g.p, vecs, k)
				t.hashes = append(t.hashes, h)
				t.srcs = append(t.srcs, src)
				t.n++
				ids[k] = id
				if t.occupy(i, tag, id) {
					slots, mask = t.slots, t.mask
				}
				break
			}
			if s&ktTagMask == tag {
				id := uint32(s) - 1
				if (t.srcs[id] == src || t.groupEqual(g, id, e)) && t.equalFrom(g.p, id, vecs, k) {
					ids[k] = id
					break
				}
			}
			i = (i + 1) & mask
		}
	}
}

// groupEqual reports whether columns 0..g.p-1 of stored key id are entry e of g.
func (t *KeyTable) groupEqual(g *ktDictGroup, id uint32, e int32) bool {
	for j := 0; j < g.p; j++ {
		c := &t.cols[j]
		b, isNull := g.entry(j, e)
		if c.nulls[id] != isNull || string(c.data[c.offs[id]:c.offs[id+1]]) != string(b) {
			return false
		}
	}
	return true
}

// dropRefs forgets the views into the caller's arrays, so the scratch does not keep
// them alive.
func (t *KeyTable) dropRefs() {
	for j := range t.vecs {
		if t.vecs[j].kind == hashKindBytes {
			clear(t.vecs[j].strBuf)
		}
		t.vecs[j].strs = nil
	}
}

// occupy puts key id in slot i under tag, and grows the table once it holds as many
// keys as it may; it reports whether the slots moved (the caller reloads them).
func (t *KeyTable) occupy(i, tag uint64, id uint32) bool {
	t.slots[i] = tag | uint64(id+1)
	if t.n >= t.growAt {
		t.resize(2 * len(t.slots))
		return true
	}
	return false
}

// probe looks up (and with insert, adds) the keys of vecs, whose hashes are given.
func (t *KeyTable) probe(vecs []hashKeyVec, hashes []uint64, ids []uint32, insert bool) {
	if t.stride > 0 {
		t.kbuf = ktRowKeys(vecs, t.stride, len(ids), t.kbuf)
		t.probeRows(t.kbuf, hashes, ids, insert)
		return
	}
	if len(t.cols) == 1 {
		switch t.cols[0].kind {
		case hashKindWord:
			t.probeWord(&vecs[0], hashes, ids, insert)
			return
		case hashKindBytes:
			t.probeBytes(&vecs[0], hashes, ids, insert)
			return
		}
	}
	slots, mask := t.slots, t.mask
	t.touchSlots(hashes, len(ids))
	for k, h := range hashes[:len(ids)] {
		tag := h & ktTagMask
		i := h & mask
		for {
			e := slots[i]
			if e == 0 {
				if !insert {
					ids[k] = NotFound
					break
				}
				ids[k] = t.add(vecs, k, h)
				if t.occupy(i, tag, ids[k]) {
					slots, mask = t.slots, t.mask
				}
				break
			}
			if e&ktTagMask == tag && t.equal(uint32(e)-1, vecs, k) {
				ids[k] = uint32(e) - 1
				break
			}
			i = (i + 1) & mask
		}
	}
}

// ktRowKeys lays the first n keys of fixed-width vecs out row-major (see
// KeyTable.rows) in buf, grown as needed, and returns it.
func ktRowKeys(vecs []hashKeyVec, stride, n int, buf []uint64) []uint64 {
	buf = hashGrow(buf, n*stride)
	nullAt := stride - 1
	for k := 0; k < n; k++ {
		buf[k*stride+nullAt] = 0
	}
	o := 0
	for j := range vecs {
		v := &vecs[j]
		if v.kind == hashKindWide {
			for k, w := range v.words[:2*n] {
				buf[(k>>1)*stride+o+k&1] = w
			}
			o += 2
		} else {
			for k, w := range v.words[:n] {
				buf[k*stride+o] = w
			}
			o++
		}
		if v.nulls != nil {
			// NULL rows already hold a zero value; the mask tells them from a zero.
			for k, isNull := range v.nulls[:n] {
				if isNull {
					buf[k*stride+nullAt] |= 1 << j
				}
			}
		}
	}
	return buf
}

// probeRows is probe for a table of row-major keys: the key of row k is
// keys[k*stride : (k+1)*stride].
func (t *KeyTable) probeRows(keys []uint64, hashes []uint64, ids []uint32, insert bool) {
	s := t.stride
	slots, mask := t.slots, t.mask
	if t.touchSlots(hashes, len(ids)) {
		// The key a slot points at is a second miss: its first word is read ahead
		// too, a load per row that depends only on that row's slot.
		var sum uint64
		for _, h := range hashes[:len(ids)] {
			if e := slots[h&mask]; e != 0 && e&ktTagMask == h&ktTagMask {
				sum += t.rows[int(uint32(e)-1)*s]
			}
		}
		t.touched += sum
	}
	for k, h := range hashes[:len(ids)] {
		key := keys[k*s : k*s+s]
		tag := h & ktTagMask
		i := h & mask
		for {
			e := slots[i]
			if e == 0 {
				if !insert {
					ids[k] = NotFound
					break
				}
				id := uint32(t.n)
				t.rows = append(t.rows, key...)
				t.hashes = append(t.hashes, h)
				t.n++
				ids[k] = id
				if t.occupy(i, tag, id) {
					slots, mask = t.slots, t.mask
				}
				break
			}
			if e&ktTagMask == tag {
				id := int(uint32(e) - 1)
				if ktWordsEqual(t.rows[id*s:id*s+s], key) {
					ids[k] = uint32(id)
					break
				}
			}
			i = (i + 1) & mask
		}
	}
}

// ktWordsEqual reports whether two keys of the same stride are equal.
func ktWordsEqual(a, b []uint64) bool {
	b = b[:len(a)]
	for i, w := range a {
		if w != b[i] {
			return false
		}
	}
	return true
}

// probeWord is probe for a table of one fixed-width column, whose slots hold the keys.
func (t *KeyTable) probeWord(v *hashKeyVec, hashes []uint64, ids []uint32, insert bool) {
	ktProbeWords(t, v.words, nil, v.nulls, hashes, ids, insert)
}

// ktProbeWords looks up (and with insert, adds) one-word keys: the value of row k is
// vals[sel[k]] (sel nil: vals[k]) converted to uint64, which is its normalised form for
// integer types; nulls[k] marks a NULL (nulls nil: none). hashes nil means hash here,
// in the same pass, which saves the scratch passes for plain integer columns.
func ktProbeWords[T hashInteger](t *KeyTable, vals []T, sel []int32, nulls []bool, hashes []uint64, ids []uint32, insert bool) {
	if t.direct != nil {
		ktDirectWords(t, vals, sel, nulls, ids, insert)
		return
	}
	slots, mask := t.wordSlots, t.mask
	if 16*len(slots) >= touchBytes && len(ids) >= touchRows {
		hashes = ktTouchWords(t, vals, sel, hashes, len(ids))
	}
	// The previous row's key and id: clustered or sorted input repeats keys in runs,
	// which then skip the probe (a well-predicted branch on unclustered input).
	lastX, lastID := uint64(0), NotFound
	for k := range ids {
		x := ktWord(vals, sel, k)
		if nulls != nil && nulls[k] {
			ids[k] = t.nullKey(insert)
			continue
		}
		if x == lastX && lastID != NotFound {
			ids[k] = lastID
			continue
		}
		var h uint64
		if hashes == nil {
			h = hashWord(x)
		} else {
			h = hashes[k]
		}
		i := h & mask
		for {
			e := &slots[i]
			if e.ref == 0 {
				if !insert {
					ids[k] = NotFound
					break
				}
				id := t.addWord(x)
				ids[k] = id
				e.key, e.ref = x, uint64(id)+1
				if t.n >= t.growAt {
					if t.goDirect() {
						vals, sel, nulls := ktRest(vals, sel, nulls, k+1)
						ktDirectWords(t, vals, sel, nulls, ids[k+1:], insert)
						return
					}
					t.resize(2 * len(slots))
					slots, mask = t.wordSlots, t.mask
				}
				break
			}
			if e.key == x {
				ids[k] = uint32(e.ref - 1)
				break
			}
			i = (i + 1) & mask
		}
		lastX, lastID = x, ids[k]
	}
}

// ktDirectWords is ktProbeWords for a table in direct mode: a key's id is read from
// the array at the key's offset in the range, with no hash and no probing. A key
// beyond the array widens it, or, when the keys would no longer be dense, turns the
// table back to hashing for the rest of the batch.
func ktDirectWords[T hashInteger](t *KeyTable, vals []T, sel []int32, nulls []bool, ids []uint32, insert bool) {
	dir, base := t.direct, t.base
	for k := range ids {
		x := ktWord(vals, sel, k)
		if nulls != nil && nulls[k] {
			ids[k] = t.nullKey(insert)
			continue
		}
		// Unsigned arithmetic: a word below base wraps around to beyond the array.
		if i := x - base; i < uint64(len(dir)) {
			if ref := dir[i]; ref != 0 || !insert {
				ids[k] = ref - 1 // NotFound for 0
				continue
			}
		} else if !insert {
			ids[k] = NotFound
			continue
		} else if !t.widen(int64(x)) {
			vals, sel, nulls := ktRest(vals, sel, nulls, k)
			ktProbeWords(t, vals, sel, nulls, nil, ids[k:], insert)
			return
		} else {
			dir, base = t.direct, t.base
		}
		id := t.addWord(x)
		dir[x-base] = id + 1
		ids[k] = id
		t.dlo, t.dhi = min(t.dlo, int64(x)), max(t.dhi, int64(x))
	}
}

// ktWord is the key of row k of ktProbeWords' arguments: vals[sel[k]] (sel nil:
// vals[k]) as a word.
func ktWord[T hashInteger](vals []T, sel []int32, k int) uint64 {
	if sel == nil {
		return uint64(vals[k])
	}
	return uint64(vals[sel[k]])
}

// ktRest returns the arguments of ktProbeWords for its rows from k on.
func ktRest[T hashInteger](vals []T, sel []int32, nulls []bool, k int) ([]T, []int32, []bool) {
	if sel == nil {
		vals = vals[k:]
	} else {
		sel = sel[k:]
	}
	if nulls != nil {
		nulls = nulls[k:]
	}
	return vals, sel, nulls
}

// Direct mode is taken for keys within ±directBound (so that no offset arithmetic
// overflows) whose range spans at most directLimit values.
const directBound = int64(1) << 62

// directLimit is the widest range a table of n keys (or of the keys Reserve
// announced, if more) keeps in direct mode: four values per key, 16 bytes per key
// in all, which is no more than the 20–40 bytes per key of 16-byte slots at 40–80 %
// full; small tables may span 4,096 values (16 KiB).
func (t *KeyTable) directLimit(n int) int64 {
	return int64(max(4*max(n, t.reserve), 1<<12))
}

// goDirect turns a one-word table that is hashing into a direct one when its keys
// are integers of a range dense enough (see directLimit), and reports whether it did.
// It is asked when the table would grow, where rehashing its keys would cost as
// much as finding their range. Floating-point keys are never direct.
func (t *KeyTable) goDirect() bool {
	if !t.wordKeyed() || !arrow.IsInteger(t.types[0].ID()) && !ktDirectType(t.types[0]) {
		return false
	}
	lo, hi, some := int64(math.MaxInt64), int64(math.MinInt64), false
	for id, w := range t.cols[0].words[:t.n] {
		if uint32(id) != t.nullID {
			lo, hi, some = min(lo, int64(w)), max(hi, int64(w)), true
		}
	}
	if !some || lo < -directBound || hi > directBound {
		return false
	}
	limit := t.directLimit(t.n)
	span := hi - lo + 1
	if span > limit {
		return false
	}
	// Room to grow upwards: keys commonly arrive from the low end of their range.
	dir := make([]uint32, min(limit, max(2*span, 64)))
	for id, w := range t.cols[0].words[:t.n] {
		if uint32(id) != t.nullID {
			dir[w-uint64(lo)] = uint32(id) + 1
		}
	}
	t.direct, t.base, t.dlo, t.dhi = dir, uint64(lo), lo, hi
	t.wordSlots, t.mask, t.growAt = nil, 0, 0
	return true
}

// ktDirectType reports the fixed-width types other than integers whose values are
// integers: dates, times, timestamps, durations and 64-bit decimals.
func ktDirectType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION, arrow.DECIMAL64:
		return true
	}
	return false
}

// widen makes the direct array cover key x, reallocating it at least twice as
// large with the room on the side it grew, and reports false after turning the
// table back to hashing when the keys with x would span more than directLimit.
func (t *KeyTable) widen(x int64) bool {
	keysLo, keysHi := min(t.dlo, x), max(t.dhi, x)
	limit := t.directLimit(t.n + 1)
	if x < -directBound || x > directBound || keysHi-keysLo+1 > limit {
		t.toHashing()
		return false
	}
	old, oldBase := t.direct, int64(t.base)
	lo, hi := min(keysLo, oldBase), max(keysHi, oldBase+int64(len(old))-1)
	if hi-lo+1 > limit {
		// The array's own room is what does not fit: keep only the keys' range.
		lo, hi = keysLo, keysHi
	}
	size := min(limit, max(hi-lo+1, 2*int64(len(old))))
	if x < oldBase {
		lo = hi - size + 1 // the room goes below, where the keys grew
	}
	dir := make([]uint32, size)
	// Copy the occupied part of the old array to its place in the new one.
	from, to := t.dlo-oldBase, t.dhi-oldBase+1
	copy(dir[t.dlo-lo:], old[from:to])
	t.direct, t.base = dir, uint64(lo)
	return true
}

// toHashing turns a direct table back to hashing, with slots for its keys (or the
// keys Reserve announced).
func (t *KeyTable) toHashing() {
	t.direct = nil
	size := ktMinSlots
	for t.growth(size) <= max(t.n, t.reserve) {
		size *= 2
	}
	t.resize(size)
}

// A table whose slots take at least touchBytes is probed in two passes when a batch
// has at least touchRows rows (see ktTouchWords and touchSlots).
const (
	touchBytes = 1 << 20
	touchRows  = 256
)

// ktTouchWords reads the first slot of each of n rows' keys before they are looked
// up: in a table larger than the caches every lookup misses, and these loads, which
// depend on nothing but the hashes, let the processor fetch many lines at once
// instead of one lookup's at a time; the lookups that follow find them cached. It
// returns the rows' hashes (computed into the table's scratch when hashes is nil).
func ktTouchWords[T hashInteger](t *KeyTable, vals []T, sel []int32, hashes []uint64, n int) []uint64 {
	if hashes == nil {
		t.hbuf = hashGrow(t.hbuf, n)
		hashes = t.hbuf
		if sel == nil {
			for k, v := range vals[:n] {
				hashes[k] = hashWord(uint64(v))
			}
		} else {
			for k, i := range sel[:n] {
				hashes[k] = hashWord(uint64(vals[i]))
			}
		}
	}
	slots, mask := t.wordSlots, t.mask
	var sum uint64
	for _, h := range hashes[:n] {
		sum += slots[h&mask].key
	}
	t.touched = sum
	return hashes
}

// touchSlots is ktTouchWords for a table of tagged slots (t.slots): when the table
// and the batch are large enough it reads the first slot of each of the n rows'
// hashes, and reports whether it did.
func (t *KeyTable) touchSlots(hashes []uint64, n int) bool {
	slots, mask := t.slots, t.mask
	if 8*len(slots) < touchBytes || n < touchRows {
		return false
	}
	var sum uint64
	for _, h := range hashes[:n] {
		sum += slots[h&mask]
	}
	t.touched = sum
	return true
}

// addWord appends a non-NULL key to a one-word table and returns its id.
func (t *KeyTable) addWord(x uint64) uint32 {
	c := &t.cols[0]
	c.words = append(c.words, x)
	c.nulls = append(c.nulls, false)
	t.n++
	return uint32(t.n - 1)
}

// nullKey returns the id of the NULL key of a one-word table, adding it with insert.
func (t *KeyTable) nullKey(insert bool) uint32 {
	if t.nullID == NotFound && insert {
		c := &t.cols[0]
		t.nullID = uint32(t.n)
		c.words = append(c.words, 0)
		c.nulls = append(c.nulls, true)
		c.hasNull = true
		t.n++
	}
	return t.nullID
}

// lookupRawInts is lookup for a one-word table given a plain integer column without
// NULLs: no normalisation pass, no hash scratch. ok is false for other columns.
func (t *KeyTable) lookupRawInts(col arrow.Array, sel []int32, ids []uint32, insert bool) (ok bool) {
	if col.NullN() > 0 {
		return false
	}
	switch a := col.(type) {
	case *array.Int64:
		ktProbeWords(t, a.Int64Values(), sel, nil, nil, ids, insert)
	case *array.Int32:
		ktProbeWords(t, a.Int32Values(), sel, nil, nil, ids, insert)
	case *array.Date32:
		ktProbeWords(t, a.Date32Values(), sel, nil, nil, ids, insert)
	case *array.Timestamp:
		ktProbeWords(t, a.TimestampValues(), sel, nil, nil, ids, insert)
	case *array.Decimal64:
		ktProbeWords(t, int64sOf(a), sel, nil, nil, ids, insert)
	case *array.Uint64:
		ktProbeWords(t, a.Uint64Values(), sel, nil, nil, ids, insert)
	case *array.Uint32:
		ktProbeWords(t, a.Uint32Values(), sel, nil, nil, ids, insert)
	case *array.Int16:
		ktProbeWords(t, a.Int16Values(), sel, nil, nil, ids, insert)
	case *array.Int8:
		ktProbeWords(t, a.Int8Values(), sel, nil, nil, ids, insert)
	case *array.Uint16:
		ktProbeWords(t, a.Uint16Values(), sel, nil, nil, ids, insert)
	case *array.Uint8:
		ktProbeWords(t, a.Uint8Values(), sel, nil, nil, ids, insert)
	default:
		return false
	}
	return true
}

// probeBytes is probe for a table of one string or binary column.
func (t *KeyTable) probeBytes(v *hashKeyVec, hashes []uint64, ids []uint32, insert bool) {
	slots, mask := t.slots, t.mask
	t.touchSlots(hashes, len(ids))
	c := &t.cols[0]
	strs, nulls := v.strs[:len(ids)], v.nulls
	for k, h := range hashes[:len(ids)] {
		s := strs[k]
		isNull := nulls != nil && nulls[k]
		tag := h & ktTagMask
		i := h & mask
		for {
			e := slots[i]
			if e == 0 {
				if !insert {
					ids[k] = NotFound
					break
				}
				id := uint32(t.n)
				c.data = append(c.data, s...)
				c.offs = append(c.offs, len(c.data))
				c.nulls = append(c.nulls, isNull)
				c.hasNull = c.hasNull || isNull
				t.hashes = append(t.hashes, h)
				t.n++
				ids[k] = id
				if t.occupy(i, tag, id) {
					slots, mask = t.slots, t.mask
				}
				break
			}
			if e&ktTagMask == tag {
				id := uint32(e) - 1
				if (!(isNull || c.hasNull) || c.nulls[id] == isNull) && string(c.data[c.offs[id]:c.offs[id+1]]) == s {
					ids[k] = id
					break
				}
			}
			i = (i + 1) & mask
		}
	}
}

// equal reports whether stored key id equals row k of vecs.
func (t *KeyTable) equal(id uint32, vecs []hashKeyVec, k int) bool {
	return t.equalFrom(0, id, vecs, k)
}

// equalFrom is equal for the key columns from the given one on.
func (t *KeyTable) equalFrom(from int, id uint32, vecs []hashKeyVec, k int) bool {
	for j := from; j < len(t.cols); j++ {
		c, v := &t.cols[j], &vecs[j]
		// Without NULLs on either side the flags need no look (a cache miss saved).
		if vn := v.nulls != nil && v.nulls[k]; (vn || c.hasNull) && c.nulls[id] != vn {
			return false
		}
		switch c.kind {
		case hashKindWord:
			if c.words[id] != v.words[k] {
				return false
			}
		case hashKindWide:
			if c.words[2*id] != v.words[2*k] || c.words[2*id+1] != v.words[2*k+1] {
				return false
			}
		case hashKindBytes:
			if string(c.data[c.offs[id]:c.offs[id+1]]) != v.strs[k] {
				return false
			}
		}
	}
	return true
}

// add appends row k of vecs as a new key and returns its id.
func (t *KeyTable) add(vecs []hashKeyVec, k int, h uint64) uint32 {
	t.addCols(0, vecs, k)
	t.hashes = append(t.hashes, h)
	t.n++
	return uint32(t.n - 1)
}

// addCols appends the key columns from the given one on of row k of vecs.
func (t *KeyTable) addCols(from int, vecs []hashKeyVec, k int) {
	for j := from; j < len(t.cols); j++ {
		c, v := &t.cols[j], &vecs[j]
		isNull := v.nulls != nil && v.nulls[k]
		c.nulls = append(c.nulls, isNull)
		c.hasNull = c.hasNull || isNull
		switch c.kind {
		case hashKindWord:
			c.words = append(c.words, v.words[k])
		case hashKindWide:
			c.words = append(c.words, v.words[2*k], v.words[2*k+1])
		case hashKindBytes:
			c.data = append(c.data, v.strs[k]...)
			c.offs = append(c.offs, len(c.data))
		}
	}
}

// Dense makes the table fill its slots to the same share at every size: a small
// table is otherwise kept sparse, which pays when it is the only one, in cache, but
// not when it is one of many partitions whose slots together outgrow the caches.
func (t *KeyTable) Dense() {
	t.dense = true
	t.growAt = t.growth(t.slotCount())
}

// Reserve makes room for n keys in all, so that adding them does not grow the
// table step by step (a join's build side of n rows, whose keys are mostly
// distinct): the slots are sized once and the key columns allocated once.
func (t *KeyTable) Reserve(n int) {
	// A dense range of keys needs no slots: a one-word table goes direct now if its
	// keys so far tell it will (see goDirect), and stays so while they do.
	t.reserve = max(t.reserve, n)
	if !t.wordKeyed() || t.direct == nil && !t.goDirect() {
		size := t.slotCount()
		want := size
		for t.growth(want) <= n {
			want *= 2
		}
		if want > size {
			t.resize(want)
		}
	}
	if t.stride > 0 {
		t.rows = slices.Grow(t.rows, max(0, n*t.stride-len(t.rows)))
	} else {
		for j := range t.cols {
			if c := &t.cols[j]; c.kind == hashKindWord {
				c.words = slices.Grow(c.words, max(0, n-len(c.words)))
				c.nulls = slices.Grow(c.nulls, max(0, n-len(c.nulls)))
			}
		}
	}
	if !t.wordKeyed() {
		t.hashes = slices.Grow(t.hashes, max(0, n-len(t.hashes)))
	}
}

// slotCount is the number of slots the table has now.
func (t *KeyTable) slotCount() int {
	if t.wordKeyed() {
		return len(t.wordSlots)
	}
	return len(t.slots)
}

// growth is the number of keys at which a table of size slots grows.
func (t *KeyTable) growth(size int) int {
	if size <= ktSparseSlots && !t.dense {
		// Small tables stay sparse: fewer collisions mean fewer mispredicted branches
		// in the probe loop (measured: 1K int64 keys 11 ms → 6 ms per 1M rows), for
		// at most a few hundred KiB.
		return size / 4
	}
	// Four fifths: a table of 1.5M keys (TPC-H's orders and customers at SF 1 and
	// 10) fits in 2M slots rather than 4M. At seven tenths it took twice the slots,
	// 32 MiB more per table of one-word keys, at no measurable gain in probe time
	// (Q18's aggregate, Q13's join and aggregate).
	return size / 5 * 4
}

// resize rebuilds the slots with the given power-of-two size from the stored hashes.
func (t *KeyTable) resize(size int) {
	t.mask = uint64(size - 1)
	t.growAt = t.growth(size)
	mask := t.mask
	if t.wordKeyed() {
		slots := make([]ktWordSlot, size)
		pages.Writable(slots) // probed before written
		// One-word keys are rehashed from the keys: cheaper than storing the hashes.
		for id, w := range t.cols[0].words {
			if uint32(id) == t.nullID {
				continue
			}
			i := hashWord(w) & mask
			for slots[i].ref != 0 {
				i = (i + 1) & mask
			}
			slots[i] = ktWordSlot{key: w, ref: uint64(id) + 1}
		}
		t.wordSlots = slots
		return
	}
	slots := make([]uint64, size)
	pages.Writable(slots)
	for id, h := range t.hashes {
		i := h & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = h&ktTagMask | uint64(id+1)
	}
	t.slots = slots
}

// wordKeyed reports a table of one fixed-width key column (see wordSlots).
func (t *KeyTable) wordKeyed() bool { return len(t.cols) == 1 && t.cols[0].kind == hashKindWord }

// Merge inserts every key of other (a table with the same key types) and returns
// mapping, where mapping[j] is this table's id for other's id j. Keys new to this
// table get ids in other's id order.
func (t *KeyTable) Merge(other *KeyTable) (mapping []uint32) {
	if len(other.cols) != len(t.cols) {
		panic(fmt.Sprintf("BUG: merging a table of %d key columns into one of %d", len(other.cols), len(t.cols)))
	}
	mapping = make([]uint32, other.n)
	if other.n == 0 {
		return mapping
	}
	if len(t.cols) == 0 {
		if t.n == 0 {
			t.hashes = append(t.hashes, hashNull)
			t.n = 1
		}
		return mapping // all zero
	}
	if t.wordKeyed() {
		oc := &other.cols[0]
		var nulls []bool
		if oc.hasNull {
			nulls = oc.nulls
		}
		ktProbeWords(t, oc.words[:other.n], nil, nulls, nil, mapping, true)
		return mapping
	}
	if t.stride > 0 {
		t.probeRows(other.rows, other.hashes[:other.n], mapping, true)
		return mapping
	}
	vecs := make([]hashKeyVec, len(t.cols))
	for j := range vecs {
		oc, v := &other.cols[j], &vecs[j]
		v.kind = oc.kind
		if oc.hasNull {
			v.nulls = oc.nulls
		}
		switch oc.kind {
		case hashKindWord, hashKindWide:
			v.words = oc.words
		case hashKindBytes:
			v.strs = make([]string, other.n)
			for i := range v.strs {
				v.strs[i] = hashBytesString(oc.data[oc.offs[i]:oc.offs[i+1]])
			}
		}
	}
	t.probe(vecs, other.hashes[:other.n], mapping, true)
	return mapping
}

// Keys returns the distinct keys as arrays: column j has the table's j-th key type
// and row i is the key of id i. The arrays are copies; the table stays usable.
func (t *KeyTable) Keys() []arrow.Array {
	out := make([]arrow.Array, len(t.cols))
	if t.stride > 0 {
		o := 0
		for j := range t.cols {
			c := ktColumn{kind: t.cols[j].kind, nulls: make([]bool, t.n)}
			width := 1
			if c.kind == hashKindWide {
				width = 2
			}
			c.words = make([]uint64, 0, width*t.n)
			for id := 0; id < t.n; id++ {
				row := t.rows[id*t.stride : (id+1)*t.stride]
				c.words = append(c.words, row[o:o+width]...)
				if row[t.stride-1]&(1<<j) != 0 {
					c.nulls[id], c.hasNull = true, true
				}
			}
			out[j] = c.array(t.types[j], t.n)
			o += width
		}
		return out
	}
	for j := range t.cols {
		out[j] = t.cols[j].array(t.types[j], t.n)
	}
	return out
}

// MemoryUsage estimates the bytes the table holds, scratch included.
func (t *KeyTable) MemoryUsage() int64 {
	b := 8*cap(t.slots) + 16*cap(t.wordSlots) + 4*cap(t.direct) + 8*cap(t.hashes) + 8*cap(t.hbuf) + 4*cap(t.pos) + 4*cap(t.memo) +
		4*cap(t.entries) + 4*cap(t.entIDs) + 4*cap(t.dpos) + 4*cap(t.epos) + 8*cap(t.rows) + 8*cap(t.kbuf) + 8*cap(t.srcs)
	if g := t.grp; g != nil {
		b += 8*cap(g.hashes) + 4*cap(g.codes) + 8*cap(g.ent.hashBuf) + 16*cap(g.ent.strBuf) + cap(g.ent.nullBuf)
	}
	for j := range t.cols {
		c := &t.cols[j]
		b += 8*cap(c.words) + 8*cap(c.offs) + cap(c.data) + cap(c.nulls)
	}
	for j := range t.vecs {
		v := &t.vecs[j]
		b += 8*cap(v.wordBuf) + 16*cap(v.strBuf) + cap(v.nullBuf) + 8*cap(v.hashBuf) +
			4*cap(v.posBuf) + 8*cap(v.entBuf)
	}
	return int64(b)
}

// array builds the column's keys as an array of type dt.
func (c *ktColumn) array(dt arrow.DataType, n int) arrow.Array {
	var validity *memory.Buffer
	nullCount := 0
	if c.hasNull {
		bm := make([]byte, (n+7)/8)
		for i, isNull := range c.nulls[:n] {
			if isNull {
				nullCount++
			} else {
				bm[i/8] |= 1 << (i % 8)
			}
		}
		validity = memory.NewBufferBytes(bm)
	}
	build := func(values ...*memory.Buffer) arrow.Array {
		data := array.NewData(dt, n, append([]*memory.Buffer{validity}, values...), nil, nullCount, 0)
		defer data.Release()
		return array.MakeFromData(data)
	}
	if types.IsNested(dt) {
		var nulls []bool
		if c.hasNull {
			nulls = c.nulls
		}
		return nestedKeyArray(dt, n, func(i int) []byte { return c.data[c.offs[i]:c.offs[i+1]] }, nulls)
	}
	w := c.words
	switch dt.ID() {
	case arrow.NULL:
		return array.NewNull(n)
	case arrow.BOOL:
		bm := make([]byte, (n+7)/8)
		for i, x := range w[:n] {
			if x != 0 {
				bm[i/8] |= 1 << (i % 8)
			}
		}
		return build(memory.NewBufferBytes(bm))
	case arrow.INT8:
		return build(ktWordsBuffer[int8](w[:n]))
	case arrow.INT16:
		return build(ktWordsBuffer[int16](w[:n]))
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return build(ktWordsBuffer[int32](w[:n]))
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION, arrow.DECIMAL64:
		return build(ktWordsBuffer[int64](w[:n]))
	case arrow.UINT8:
		return build(ktWordsBuffer[uint8](w[:n]))
	case arrow.UINT16:
		return build(ktWordsBuffer[uint16](w[:n]))
	case arrow.UINT32:
		return build(ktWordsBuffer[uint32](w[:n]))
	case arrow.UINT64:
		return build(ktWordsBuffer[uint64](w[:n]))
	case arrow.FLOAT32:
		vals := make([]float32, n)
		for i, x := range w[:n] {
			vals[i] = float32(math.Float64frombits(x))
		}
		return build(memory.NewBufferBytes(ktBytesOf(vals)))
	case arrow.FLOAT64:
		vals := make([]float64, n)
		for i, x := range w[:n] {
			vals[i] = math.Float64frombits(x)
		}
		return build(memory.NewBufferBytes(ktBytesOf(vals)))
	case arrow.DECIMAL128:
		vals := make([]decimal128.Num, n)
		for i := range vals {
			vals[i] = decimal128.New(int64(w[2*i+1]), w[2*i])
		}
		return build(memory.NewBufferBytes(ktBytesOf(vals)))
	case arrow.STRING, arrow.BINARY:
		if c.offs[n] > math.MaxInt32 {
			panic(fmt.Sprintf("BUG: %d bytes of %s keys exceed 32-bit offsets", c.offs[n], dt))
		}
		offs := make([]int32, n+1)
		for i, o := range c.offs[:n+1] {
			offs[i] = int32(o)
		}
		return build(memory.NewBufferBytes(ktBytesOf(offs)), memory.NewBufferBytes(append([]byte(nil), c.data[:c.offs[n]]...)))
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		offs := make([]int64, n+1)
		for i, o := range c.offs[:n+1] {
			offs[i] = int64(o)
		}
		return build(memory.NewBufferBytes(ktBytesOf(offs)), memory.NewBufferBytes(append([]byte(nil), c.data[:c.offs[n]]...)))
	}
	panic(fmt.Sprintf("BUG: no key array for %s", dt))
}

// ktWordsBuffer narrows normalised integer words back to their storage type.
func ktWordsBuffer[T hashInteger](w []uint64) *memory.Buffer {
	vals := make([]T, len(w))
	for i, x := range w {
		vals[i] = T(x)
	}
	return memory.NewBufferBytes(ktBytesOf(vals))
}

// ktBytesOf views a slice of fixed-size values as its bytes.
func ktBytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}

// Reader returns a view of t for lookups (Find) from another goroutine: it shares
// t's slots and keys, which must not change while readers are in use, and has its
// own scratch. Readers serve the workers that probe a join's build table.
func (t *KeyTable) Reader() *KeyTable {
	r := *t
	r.vecs, r.hbuf, r.pos, r.memo, r.entries, r.dpos, r.epos, r.entIDs, r.kbuf = nil, nil, nil, nil, nil, nil, nil, nil, nil
	r.grp = nil // Find does not use it, and it is scratch
	return &r
}
