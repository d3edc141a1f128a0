package kernels

import (
	"testing"

	"github.com/loredb/lore/types"
)

// TestLikeMiddleSegments covers patterns with several literal segments between %
// signs, whose middle segments are found by substring search.
func TestLikeMiddleSegments(t *testing.T) {
	cases := []struct {
		s, p string
		want bool
	}{
		{"carefully special final requests", "%special%requests%", true},
		{"requests special", "%special%requests%", false},
		{"specialrequests", "%special%requests%", true},
		{"special", "%special%requests%", false},
		{"aab", "%ab%", true}, {"abab", "%ab%ab%", true}, {"aba", "%ab%ab%", false},
		{"ababab", "a%bab%b", true}, {"abab", "a%bab%b", false},
		{"xñyñz", "%ñ%ñ%", true}, {"xñy", "%ñ%ñ%", false},
		{"a-b-c", "a%-%-%c", true}, {"a-bc", "a%-%-%c", false},
		{"one two three", "%one%two%thr_e", true}, {"one three two", "%one%two%thr_e", false},
	}
	for _, c := range cases {
		got := mustCall(t, "like", mk(t, types.String, c.s), constStr(c.p, 1))
		if got != types.BoolValue(c.want).String() {
			t.Errorf("%q LIKE %q = %s, want %v", c.s, c.p, got, c.want)
		}
	}
}
