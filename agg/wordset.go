package agg

// wordSet is a set of 64-bit words that defers its deduplication: words are appended
// as they come, and once those added since the last settling are as many as the
// distinct words it holds (and at least wordSetSlack), all are radix-sorted and the
// repeats dropped. An insert is then an append, not a probe of a table that
// outgrows the caches, and a set of n distinct words holds at most about 2n words
// and a scratch of as many. Words come out sorted (settled).
type wordSet struct {
	words   []uint64
	settled int // words[:settled] are sorted and distinct
	tmp     []uint64
}

// wordSetSlack is the fewest words appended before a set settles them.
const wordSetSlack = 1 << 14

// add adds ws to the set.
func (s *wordSet) add(ws []uint64) {
	s.words = append(s.words, ws...)
	if len(s.words)-s.settled >= max(s.settled, wordSetSlack) {
		s.settle()
	}
}

// distinct settles the set and returns its words in ascending order. They are the
// set's own: valid until the next add.
func (s *wordSet) distinct() []uint64 {
	if s.settled < len(s.words) {
		s.settle()
	}
	return s.words
}

// settle sorts the words and drops the repeats.
func (s *wordSet) settle() {
	s.tmp = grow(s.tmp, len(s.words))
	sorted := sortWords(s.words, s.tmp[:len(s.words)])
	if &sorted[0] != &s.words[0] {
		s.words, s.tmp = sorted, s.words
	}
	n := 1
	for _, w := range s.words[1:] {
		if w != s.words[n-1] {
			s.words[n] = w
			n++
		}
	}
	s.words = s.words[:n]
	s.settled = n
}

// memory is the bytes the set holds.
func (s *wordSet) memory() int64 { return 8 * int64(cap(s.words)+cap(s.tmp)) }

// sortWords sorts w, using tmp (as long as w) as scratch, and returns whichever of
// the two holds the result: a least-significant-digit radix sort over the bytes in
// which the words differ.
func sortWords(w, tmp []uint64) []uint64 {
	if len(w) < 2 {
		return w
	}
	or, and := uint64(0), ^uint64(0)
	for _, x := range w {
		or |= x
		and &= x
	}
	differ := or ^ and
	var count [256]int
	for shift := uint(0); shift < 64; shift += 8 {
		if byte(differ>>shift) == 0 {
			continue // every word has the same byte here
		}
		count = [256]int{}
		for _, x := range w {
			count[byte(x>>shift)]++
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for _, x := range w {
			d := byte(x >> shift)
			tmp[count[d]] = x
			count[d]++
		}
		w, tmp = tmp, w
	}
	return w
}
