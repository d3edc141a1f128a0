package sql

import (
	"testing"

	pg "github.com/loredb/lore/sql/pgast"
)

// TestNestedTypeNames checks that STRUCT(…) and MAP(…) type names after :: and AS
// parse, and that their TypeName carries the name as written, at its offset.
func TestNestedTypeNames(t *testing.T) {
	text := `SELECT NULL::STRUCT(a INTEGER, "b c" VARCHAR[])[], CAST(x AS map(VARCHAR, STRUCT(k INT))), map(1, 2), [1][1] FROM t`
	sts, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	q := sts[0].(*Query)
	got := map[int32]string{}
	walk(q.Select, func(m any) {
		if tn, ok := m.(*pg.TypeName); ok {
			got[tn.Location] = tn.Names[len(tn.Names)-1].GetString_().GetSval()
		}
	})
	want := map[int32]string{
		13: `STRUCT(a INTEGER, "b c" VARCHAR[])[]`,
		61: "map(VARCHAR, STRUCT(k INT))",
	}
	if len(got) != len(want) {
		t.Fatalf("type names %v, want %v", got, want)
	}
	for at, name := range want {
		if got[at] != name {
			t.Errorf("type name at %d is %q, want %q", at, got[at], name)
		}
	}
}
