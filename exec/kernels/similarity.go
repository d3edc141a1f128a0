package kernels

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// String similarity as DuckDB defines it. Every one compares bytes, not
// characters, as DuckDB's do: levenshtein('é', 'e') is 2.

// bindDistance binds a BIGINT distance of two strings.
func bindDistance(dist func(a, b string) (int64, error)) binder {
	return bindSig([]argClass{clsStr, clsStr}, types.Int64, func(in []arrow.Array, n int) (arrow.Array, error) {
		x, y := str(in[0]), str(in[1])
		var bad error
		out := evalInts(in, n, func(i int) int64 {
			d, err := dist(x.Value(i), y.Value(i))
			if err != nil && bad == nil {
				bad = err
			}
			return d
		})
		if bad != nil {
			return nil, bad
		}
		return out, nil
	})
}

// levenshtein is the number of single-byte insertions, deletions and substitutions
// that turn a into b.
func levenshtein(a, b string) (int64, error) {
	if len(a) < len(b) {
		a, b = b, a
	}
	prev := make([]int64, len(b)+1)
	cur := make([]int64, len(b)+1)
	for j := range prev {
		prev[j] = int64(j)
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = int64(i)
		for j := 1; j <= len(b); j++ {
			cost := int64(1)
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)], nil
}

// damerauLevenshtein is levenshtein that also counts swapping two adjacent bytes
// as one edit, with no restriction on editing a swapped pair again (the
// unrestricted distance, as DuckDB computes it).
func damerauLevenshtein(a, b string) (int64, error) {
	la, lb := len(a), len(b)
	if la == 0 || lb == 0 {
		return int64(la + lb), nil
	}
	inf := int64(la + lb)
	w := lb + 2
	d := make([]int64, (la+2)*w)
	at := func(i, j int) *int64 { return &d[i*w+j] }
	*at(0, 0) = inf
	for i := 0; i <= la; i++ {
		*at(i+1, 0) = inf
		*at(i+1, 1) = int64(i)
	}
	for j := 0; j <= lb; j++ {
		*at(0, j+1) = inf
		*at(1, j+1) = int64(j)
	}
	var last [256]int
	for i := 1; i <= la; i++ {
		db := 0
		for j := 1; j <= lb; j++ {
			i1, j1 := last[b[j-1]], db
			cost := int64(1)
			if a[i-1] == b[j-1] {
				cost, db = 0, j
			}
			*at(i+1, j+1) = min(*at(i, j)+cost, *at(i+1, j)+1, *at(i, j+1)+1,
				*at(i1, j1)+int64(i-i1-1)+1+int64(j-j1-1))
		}
		last[a[i-1]] = i
	}
	return *at(la+1, lb+1), nil
}

// hamming is the number of positions at which two strings of the same length
// differ; both must be non-empty, as DuckDB requires.
func hamming(a, b string) (int64, error) {
	if len(a) == 0 || len(b) == 0 {
		return 0, errs.New(errs.Analysis, "hamming: the strings must not be empty")
	}
	if len(a) != len(b) {
		return 0, errs.New(errs.Analysis, "hamming: the strings must be of equal length, not %d and %d bytes", len(a), len(b))
	}
	var d int64
	for i := 0; i < len(a); i++ {
		if a[i] != b[i] {
			d++
		}
	}
	return d, nil
}

// bindSimilarity binds a DOUBLE similarity of two strings; with cutoff, a third
// argument below which the score is 0.
func bindSimilarity(sim func(a, b string) (float64, error), cutoff bool) binder {
	k := func(in []arrow.Array, n int) (arrow.Array, error) {
		x, y := str(in[0]), str(in[1])
		var cut *array.Float64
		if len(in) > 2 {
			cut = in[2].(*array.Float64)
		}
		valid, nulls := andValidity(n, in...)
		out := make([]float64, n)
		for i := 0; i < n; i++ {
			if !isValid(valid, 0, i) {
				continue
			}
			v, err := sim(x.Value(i), y.Value(i))
			if err != nil {
				return nil, err
			}
			if cut != nil && v < cut.Value(i) {
				v = 0
			}
			out[i] = v
		}
		return fixedArray(types.Float64, out, valid, nulls), nil
	}
	return func(c *call) (*Function, error) {
		if cutoff && len(c.args) == 3 {
			return bindSig([]argClass{clsStr, clsStr, clsDouble}, types.Float64, k)(c)
		}
		return bindSig([]argClass{clsStr, clsStr}, types.Float64, k)(c)
	}
}

// jaccard is the size of the intersection of the two strings' sets of bytes over
// the size of their union; both must be non-empty.
func jaccard(a, b string) (float64, error) {
	if len(a) == 0 || len(b) == 0 {
		return 0, errs.New(errs.Analysis, "jaccard: the strings must not be empty")
	}
	var sa, sb [256]bool
	for i := 0; i < len(a); i++ {
		sa[a[i]] = true
	}
	for i := 0; i < len(b); i++ {
		sb[b[i]] = true
	}
	var inter, union int
	for c := range sa {
		if sa[c] && sb[c] {
			inter++
		}
		if sa[c] || sb[c] {
			union++
		}
	}
	return float64(inter) / float64(union), nil
}

// jaro is the Jaro similarity of two byte strings: matches are equal bytes at most
// max(len)/2-1 apart, t half the matches out of order,
// (m/|a| + m/|b| + (m-t)/m) / 3; 0 when either string is empty.
func jaro(a, b string) (float64, error) {
	if len(a) == 0 || len(b) == 0 {
		return 0, nil
	}
	window := max(max(len(a), len(b))/2-1, 0)
	ma := make([]bool, len(a))
	mb := make([]bool, len(b))
	m := 0
	for i := 0; i < len(a); i++ {
		lo, hi := max(0, i-window), min(len(b)-1, i+window)
		for j := lo; j <= hi; j++ {
			if !mb[j] && a[i] == b[j] {
				ma[i], mb[j] = true, true
				m++
				break
			}
		}
	}
	if m == 0 {
		return 0, nil
	}
	t, j := 0, 0
	for i := 0; i < len(a); i++ {
		if !ma[i] {
			continue
		}
		for !mb[j] {
			j++
		}
		if a[i] != b[j] {
			t++
		}
		j++
	}
	fm := float64(m)
	return (fm/float64(len(a)) + fm/float64(len(b)) + (fm-float64(t)/2)/fm) / 3, nil
}

// jaroWinkler raises a Jaro similarity above 0.7 for a common prefix of up to four
// bytes, by 0.1 of the remaining distance per byte.
func jaroWinkler(a, b string) (float64, error) {
	s, _ := jaro(a, b)
	if s <= 0.7 {
		return s, nil
	}
	p := 0
	for p < 4 && p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	return s + float64(p)*0.1*(1-s), nil
}
