package deletes

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/loredb/lore/errs"
)

// encodeRoaring64 writes sorted, unique positions in the portable 64-bit Roaring format,
// choosing per container the smallest of array, bitmap and (when runs is set) run, as
// the Java and C writers do after runOptimize.
func encodeRoaring64(pos []int64, runs bool) []byte {
	var buckets [][]int64
	for i := 0; i < len(pos); {
		j := i + 1
		for j < len(pos) && pos[j]>>32 == pos[i]>>32 {
			j++
		}
		buckets = append(buckets, pos[i:j])
		i = j
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(buckets)))
	for _, b := range buckets {
		out = binary.LittleEndian.AppendUint32(out, uint32(b[0]>>32))
		out = append(out, encodeRoaring32(b, runs)...)
	}
	return out
}

type testContainer struct {
	key  uint16
	vals []uint16
	runs [][2]uint16 // (start, length-1)
	run  bool
}

func encodeRoaring32(pos []int64, runs bool) []byte {
	var cs []testContainer
	for i := 0; i < len(pos); {
		j := i + 1
		for j < len(pos) && pos[j]>>16 == pos[i]>>16 {
			j++
		}
		c := testContainer{key: uint16(pos[i] >> 16)}
		for _, p := range pos[i:j] {
			v := uint16(p)
			c.vals = append(c.vals, v)
			if n := len(c.runs); n > 0 && int(c.runs[n-1][0])+int(c.runs[n-1][1])+1 == int(v) {
				c.runs[n-1][1]++
			} else {
				c.runs = append(c.runs, [2]uint16{v, 0})
			}
		}
		plain := min(2*len(c.vals), 8192)
		c.run = runs && 2+4*len(c.runs) < plain
		cs = append(cs, c)
		i = j
	}
	anyRun := false
	for _, c := range cs {
		anyRun = anyRun || c.run
	}
	var out []byte
	if anyRun {
		out = binary.LittleEndian.AppendUint32(out, cookieRuns|uint32(len(cs)-1)<<16)
		flags := make([]byte, (len(cs)+7)/8)
		for i, c := range cs {
			if c.run {
				flags[i/8] |= 1 << (i % 8)
			}
		}
		out = append(out, flags...)
	} else {
		out = binary.LittleEndian.AppendUint32(out, cookieNoRuns)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(cs)))
	}
	for _, c := range cs {
		out = binary.LittleEndian.AppendUint16(out, c.key)
		out = binary.LittleEndian.AppendUint16(out, uint16(len(c.vals)-1))
	}
	var body []byte
	var sizes []int
	for _, c := range cs {
		start := len(body)
		switch {
		case c.run:
			body = binary.LittleEndian.AppendUint16(body, uint16(len(c.runs)))
			for _, r := range c.runs {
				body = binary.LittleEndian.AppendUint16(body, r[0])
				body = binary.LittleEndian.AppendUint16(body, r[1])
			}
		case len(c.vals) > arrayMax:
			words := make([]uint64, bitmapLen)
			for _, v := range c.vals {
				words[v/64] |= 1 << (v % 64)
			}
			for _, w := range words {
				body = binary.LittleEndian.AppendUint64(body, w)
			}
		default:
			for _, v := range c.vals {
				body = binary.LittleEndian.AppendUint16(body, v)
			}
		}
		sizes = append(sizes, len(body)-start)
	}
	if !anyRun || len(cs) >= noOffsetThreshold {
		off := len(out) + 4*len(cs)
		for _, s := range sizes {
			out = binary.LittleEndian.AppendUint32(out, uint32(off))
			off += s
		}
	}
	return append(out, body...)
}

// randomPositions makes a sorted set with a mix of sparse values, dense stretches (bitmap
// containers), long runs, values near chunk and bucket boundaries, and a high bucket.
func randomPositions(r *rand.Rand) []int64 {
	set := map[int64]bool{}
	add := func(p int64) {
		if p >= 0 {
			set[p] = true
		}
	}
	for range r.IntN(50) {
		add(r.Int64N(1 << 20))
	}
	if r.IntN(2) == 0 { // dense: a bitmap container
		base := r.Int64N(8) << 16
		for range 5000 + r.IntN(20000) {
			add(base + r.Int64N(chunkSize))
		}
	}
	if r.IntN(2) == 0 { // a long run across a chunk boundary
		start := r.Int64N(1<<18) + chunkSize - 100
		for p := start; p < start+int64(r.IntN(70000)); p++ {
			add(p)
		}
	}
	for range r.IntN(4) { // around boundaries
		b := int64(1+r.IntN(3)) << 16
		if r.IntN(3) == 0 {
			b = int64(1+r.IntN(3)) << 32
		}
		for d := int64(-2); d <= 2; d++ {
			add(b + d)
		}
	}
	if r.IntN(4) == 0 {
		add(math.MaxInt32<<32 | int64(r.Uint32()))
	}
	out := make([]int64, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// naiveLive is Live by definition over a sorted slice.
func naiveLive(pos []int64, first int64, n int) ([]int32, bool) {
	var out []int32
	any := false
	j, _ := slices.BinarySearch(pos, first)
	for i := 0; i < n; i++ {
		if j < len(pos) && pos[j] == first+int64(i) {
			any = true
			j++
			continue
		}
		out = append(out, int32(i))
	}
	return out, any
}

func naiveCount(pos []int64, first, n int64) int64 {
	lo, _ := slices.BinarySearch(pos, first)
	hi, _ := slices.BinarySearch(pos, first+n)
	return int64(hi - lo)
}

// checkPositions compares p with the reference set want on every method.
func checkPositions(t *testing.T, r *rand.Rand, p *Positions, want []int64) {
	t.Helper()
	if p.Len() != int64(len(want)) {
		t.Fatalf("Len = %d, want %d", p.Len(), len(want))
	}
	if got := p.AppendTo(nil); !slices.Equal(got, want) {
		t.Fatalf("AppendTo differs: %d values, want %d", len(got), len(want))
	}
	if m, ok := p.Max(); ok != (len(want) > 0) || ok && m != want[len(want)-1] {
		t.Fatalf("Max = %d, %v", m, ok)
	}
	probe := func(q int64) int64 {
		if len(want) > 0 && r.IntN(2) == 0 {
			q = want[r.IntN(len(want))] + r.Int64N(9) - 4
		}
		return q
	}
	for range 150 {
		q := probe(r.Int64N(1 << 21))
		_, in := slices.BinarySearch(want, q)
		if p.Contains(q) != in {
			t.Fatalf("Contains(%d) = %v, want %v", q, !in, in)
		}
		var n int
		switch r.IntN(6) {
		case 0:
			n = r.IntN(3 * chunkSize)
		case 1, 2:
			n = r.IntN(20)
		default:
			n = r.IntN(9000)
		}
		first := q - int64(r.IntN(n+1))
		if got, want := p.CountIn(first, int64(n)), naiveCount(want, first, int64(n)); got != want {
			t.Fatalf("CountIn(%d, %d) = %d, want %d", first, n, got, want)
		}
		wantLive, anyDeleted := naiveLive(want, first, n)
		dst := []int32{-7}
		got := p.Live(first, n, dst)
		if !anyDeleted {
			if got != nil {
				t.Fatalf("Live(%d, %d) = %d offsets, want nil (nothing deleted)", first, n, len(got))
			}
			continue
		}
		if got == nil || got[0] != -7 || !slices.Equal(got[1:], wantLive) {
			t.Fatalf("Live(%d, %d) wrong: %d offsets, want %d", first, n, len(got)-1, len(wantLive))
		}
	}
}

func TestPositionsAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 20 {
		want := randomPositions(r)
		p, err := FromSorted(want)
		if err != nil {
			t.Fatal(err)
		}
		checkPositions(t, r, p, want)
		for _, runs := range []bool{false, true} {
			d, err := DecodeRoaring64(encodeRoaring64(want, runs))
			if err != nil {
				t.Fatalf("iteration %d, runs %v: %v", iter, runs, err)
			}
			checkPositions(t, r, d, want)
		}
	}
}

func TestLiveEdges(t *testing.T) {
	p, err := FromSorted([]int64{0, 1, 2, 5})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Live(0, 3, nil); got == nil || len(got) != 0 {
		t.Errorf("all rows deleted: Live = %v, want an empty non-nil slice", got)
	}
	if got := p.Live(6, 100, []int32{1}); got != nil {
		t.Errorf("no deletes in range: Live = %v, want nil", got)
	}
	if got := p.Live(-3, 5, nil); !slices.Equal(got, []int32{0, 1, 2}) {
		t.Errorf("range from a negative start: Live = %v", got)
	}
	if got := p.Live(0, 0, nil); got != nil {
		t.Errorf("empty batch: Live = %v", got)
	}
	if got := p.Live(math.MaxInt64-3, 10, nil); got != nil {
		t.Errorf("batch at the top of int64: Live = %v", got)
	}
	var empty *Positions
	if empty.Len() != 0 || empty.Contains(0) || empty.Live(0, 10, nil) != nil || empty.CountIn(0, 10) != 0 {
		t.Error("a nil *Positions is not the empty set")
	}
	if p.CountIn(-10, 12) != 2 || p.CountIn(3, -1) != 0 || p.CountIn(math.MaxInt64-1, math.MaxInt64) != 0 {
		t.Error("CountIn at the edges")
	}
}

func TestUnion(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		var ps []*Positions
		set := map[int64]bool{}
		for range 1 + r.IntN(4) {
			pos := randomPositions(r)
			for _, v := range pos {
				set[v] = true
			}
			d, err := DecodeRoaring64(encodeRoaring64(pos, r.IntN(2) == 0))
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, d, nil)
		}
		var want []int64
		for v := range set {
			want = append(want, v)
		}
		slices.Sort(want)
		checkPositions(t, r, Union(ps...), want)
	}
	if Union() != nil || Union(nil, nil).Len() != 0 {
		t.Error("union of nothing is not empty")
	}
}

func TestFromSortedRejects(t *testing.T) {
	for _, pos := range [][]int64{{-1}, {3, 3}, {5, 4}, {0, 1 << 40, 7}} {
		if _, err := FromSorted(pos); !errors.Is(err, errs.ErrCorruptSource) {
			t.Errorf("FromSorted(%v) = %v, want CORRUPT_SOURCE", pos, err)
		}
	}
}

func BenchmarkLive(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	var pos []int64
	for p := int64(0); p < 1<<22; p += 1 + r.Int64N(200) {
		pos = append(pos, p)
	}
	p, err := FromSorted(pos)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]int32, 0, 8192)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		first := int64(i*8192) % (1 << 22)
		dst = p.Live(first, 8192, dst[:0])
	}
}
