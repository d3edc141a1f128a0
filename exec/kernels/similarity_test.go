package kernels

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

func TestDistances(t *testing.T) {
	for _, c := range []struct {
		a, b          string
		lev, dl, hamm int64
	}{
		{"kitten", "sitting", 3, 3, -1}, {"", "abc", 3, 3, -1}, {"é", "e", 2, 2, -1}, {"CA", "ABC", 3, 2, -1},
		{"ab", "ba", 2, 1, 2}, {"abcdef", "badcfe", 4, 3, 6}, {"abc", "abc", 0, 0, 0}, {"é", "è", 1, 1, 1},
	} {
		if got, _ := levenshtein(c.a, c.b); got != c.lev {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.lev)
		}
		if got, _ := damerauLevenshtein(c.a, c.b); got != c.dl {
			t.Errorf("damerau_levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.dl)
		}
		got, err := hamming(c.a, c.b)
		if c.hamm < 0 {
			if errs.CodeOf(err) != errs.Analysis {
				t.Errorf("hamming(%q, %q): %v, want an error", c.a, c.b, err)
			}
		} else if err != nil || got != c.hamm {
			t.Errorf("hamming(%q, %q) = %d, %v", c.a, c.b, got, err)
		}
	}
}

func TestSimilarities(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	for _, c := range []struct {
		a, b    string
		jaro    float64
		winkler float64
	}{
		{"martha", "marhta", 0.9444444444444445, 0.9611111111111111}, {"", "", 0, 0}, {"a", "", 0, 0},
		{"dixon", "dicksonx", 0.7666666666666666, 0.8133333333333332}, {"ab", "ba", 0, 0}, {"aaaa", "aa", 0.8333333333333334, 0.8666666666666667},
	} {
		if got, _ := jaro(c.a, c.b); !near(got, c.jaro) {
			t.Errorf("jaro(%q, %q) = %v, want %v", c.a, c.b, got, c.jaro)
		}
		if got, _ := jaroWinkler(c.a, c.b); !near(got, c.winkler) {
			t.Errorf("jaro_winkler(%q, %q) = %v, want %v", c.a, c.b, got, c.winkler)
		}
	}
	if got, _ := jaccard("é", "è"); !near(got, 1.0/3) {
		t.Errorf("jaccard of bytes: %v", got)
	}
	if _, err := jaccard("", "a"); errs.CodeOf(err) != errs.Analysis {
		t.Errorf("jaccard of an empty string: %v", err)
	}
}

func TestSimilarityFunctions(t *testing.T) {
	s := mk(t, types.String, "apple", "", nil, "äpfel")
	n := s.Len()
	for _, c := range []struct {
		name string
		args []arrow.Array
		want string
	}{
		{"levenshtein", []arrow.Array{s, constStr("apple", n)}, "0,5,NULL,4"},
		{"damerau_levenshtein", []arrow.Array{s, constStr("paple", n)}, "1,5,NULL,4"},
		{"jaro_similarity", []arrow.Array{s, constStr("apple", n)}, "1.0,0.0,NULL,0.5888888888888889"},
		{"jaro_winkler_similarity", []arrow.Array{s, constStr("apple", n), ConstArray(types.FloatValue(0.9), n)}, "1.0,0.0,NULL,0.0"},
	} {
		if got := mustCall(t, c.name, c.args...); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
		plain := append([]arrow.Array{Decode(dict(t, "apple", "", nil, "äpfel"))}, c.args[1:]...)
		over := append([]arrow.Array{dict(t, "apple", "", nil, "äpfel")}, c.args[1:]...)
		if a, b := mustCall(t, c.name, plain...), mustCall(t, c.name, over...); a != b {
			t.Errorf("%s over dictionary = %s, plain = %s", c.name, b, a)
		}
	}
}
