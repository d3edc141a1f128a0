package jsontext

import (
	"encoding/json"
	"testing"
)

// TestAppendStringReadsBack: every string reads back as itself through
// encoding/json, invalid UTF-8 as U+FFFD, and <, > and & are left as they are.
func TestAppendStringReadsBack(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ back`, "tab\tnew\nline\rcr\x00\x1f", "<a & b>", "é 漢字 🚀", "\u2028\u2029", "bad \xff byte"} {
		b := AppendString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q: %s does not parse: %v", s, b, err)
		}
		want := s
		if s == "bad \xff byte" {
			want = "bad \ufffd byte"
		}
		if got != want {
			t.Errorf("%q: read back as %q", s, got)
		}
	}
	if got := string(AppendString(nil, "<&>")); got != `"<&>"` {
		t.Errorf("HTML characters escaped: %s", got)
	}
}
