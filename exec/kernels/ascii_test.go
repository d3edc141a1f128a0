package kernels

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestASCIIChecks: the word-at-a-time check finds a non-ASCII byte wherever it is
// (in a 32-byte block, an 8-byte word or the tail), and length() counts characters
// whether a batch is all ASCII or not.
func TestASCIIChecks(t *testing.T) {
	for n := 0; n <= 80; n++ {
		s := strings.Repeat("a", n)
		if !isASCII(s) {
			t.Fatalf("%d ASCII bytes reported as not ASCII", n)
		}
		for at := 0; at < n; at++ {
			b := []byte(s)
			b[at] = 0x80 | byte(at)
			if asciiBytes(b) || isASCII(string(b)) {
				t.Fatalf("a non-ASCII byte at %d of %d was missed", at, n)
			}
		}
	}
	for _, batch := range [][]string{
		{"", "abc", strings.Repeat("x", 70)},
		{"abc", "héllo", "日本語", strings.Repeat("é", 20), ""},
	} {
		bd := array.NewStringBuilder(memory.DefaultAllocator)
		bd.AppendValues(batch, nil)
		bd.AppendNull()
		arr := bd.NewStringArray()
		got := strLength(arr).(*array.Int64)
		for i, s := range batch {
			if want := int64(utf8.RuneCountInString(s)); got.Value(i) != want {
				t.Errorf("length(%q) = %d, want %d", s, got.Value(i), want)
			}
		}
		if !got.IsNull(len(batch)) {
			t.Errorf("length(NULL) is not NULL")
		}
	}
}
