package kernels

import (
	"testing"

	"github.com/loredb/lore/types"
)

func TestBitCount(t *testing.T) {
	for _, c := range []struct {
		arr  []any
		typ  string
		want string
	}{
		{[]any{-1, 3, nil}, "TINYINT", "8,2,NULL"},
		{[]any{-1, 0}, "INTEGER", "32,0"},
		{[]any{-1, 1 << 40}, "BIGINT", "64,1"},
		{[]any{65535}, "USMALLINT", "16"},
	} {
		dt, err := types.Parse(c.typ)
		if err != nil {
			t.Fatal(err)
		}
		if got := mustCall(t, "bit_count", mk(t, dt, c.arr...)); got != c.want {
			t.Errorf("bit_count of %s: %s, want %s", c.typ, got, c.want)
		}
	}
}
