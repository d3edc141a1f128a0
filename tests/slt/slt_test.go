package slt

import (
	"strings"
	"testing"
)

const sample = `# a comment
statement ok
CREATE TABLE t WITH (location = 'x')

statement error TABLE_NOT_FOUND
SELECT * FROM nope

onlyif lore
query ITR rowsort
SELECT a, b,
       c FROM t
----
2	x	1.5
1	(empty)	NULL

skipif duckdb
statement error
SELECT 1 +

query T
SELECT 1
----

halt

query I
SELECT 2
`

func TestParse(t *testing.T) {
	f, err := Parse("sample.slt", sample)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Records) != 7 {
		t.Fatalf("got %d records, want 7", len(f.Records))
	}
	r := f.Records
	if r[0].Kind != Statement || r[0].ExpectError || r[0].Line != 2 {
		t.Errorf("record 0: %+v", r[0])
	}
	if !r[1].ExpectError || r[1].ErrorCode != "TABLE_NOT_FOUND" {
		t.Errorf("record 1: %+v", r[1])
	}
	q := r[2]
	if q.Kind != Query || q.Types != "ITR" || q.Sort != RowSort || q.Line != 9 {
		t.Errorf("record 2: %+v", q)
	}
	if q.SQL != "SELECT a, b,\n       c FROM t" {
		t.Errorf("record 2 SQL %q", q.SQL)
	}
	if len(q.Expected) != 2 || q.Expected[1] != "1\t(empty)\tNULL" {
		t.Errorf("record 2 expected %q", q.Expected)
	}
	if !q.Runs("lore") || q.Runs("duckdb") {
		t.Errorf("onlyif lore: runs(lore)=%v runs(duckdb)=%v", q.Runs("lore"), q.Runs("duckdb"))
	}
	if !r[3].Runs("lore") || r[3].Runs("duckdb") || r[3].ErrorCode != "" {
		t.Errorf("record 3: %+v", r[3])
	}
	if r[4].Kind != Query || len(r[4].Expected) != 0 {
		t.Errorf("record 4: %+v", r[4])
	}
	if r[5].Kind != Halt {
		t.Errorf("record 5: %+v", r[5])
	}
}

func TestParseErrors(t *testing.T) {
	for _, text := range []string{
		"statement maybe\nSELECT 1\n",
		"query X\nSELECT 1\n",
		"query I sideways\nSELECT 1\n",
		"statement ok\n\n",
		"statement ok\nSELECT 1\n----\n1\n",
		"frobnicate\n",
		"onlyif lore\n",
	} {
		if _, err := Parse("bad.slt", text); err == nil {
			t.Errorf("no error for %q", text)
		}
	}
}

func TestCompare(t *testing.T) {
	rec := &Record{Kind: Query, Types: "ITR", Sort: RowSort,
		Expected: []string{"2\tx\t1.5", "1\t(empty)\tNULL", "3\ty\t0.30000000000000004"}}
	ok := [][]string{{"1", "(empty)", "NULL"}, {"3", "y", "0.3"}, {"2", "x", "1.50"}}
	if d := Compare(rec, ok); d != "" {
		t.Errorf("unexpected difference: %s", d)
	}
	for name, rows := range map[string][][]string{
		"float off":    {{"1", "(empty)", "NULL"}, {"3", "y", "0.3001"}, {"2", "x", "1.5"}},
		"text differs": {{"1", "", "NULL"}, {"3", "y", "0.3"}, {"2", "x", "1.5"}},
		"int as float": {{"1.0", "(empty)", "NULL"}, {"3", "y", "0.3"}, {"2", "x", "1.5"}},
		"missing row":  {{"1", "(empty)", "NULL"}, {"2", "x", "1.5"}},
		"wide row":     {{"1", "(empty)", "NULL", "9"}, {"3", "y", "0.3"}, {"2", "x", "1.5"}},
	} {
		if d := Compare(rec, rows); d == "" {
			t.Errorf("%s: no difference found", name)
		}
	}
	ordered := &Record{Kind: Query, Types: "I", Sort: NoSort, Expected: []string{"1", "2"}}
	if d := Compare(ordered, [][]string{{"2"}, {"1"}}); d == "" {
		t.Error("nosort accepted rows out of order")
	}
	values := &Record{Kind: Query, Types: "IR", Sort: ValueSort, Expected: []string{"1\t2.5", "3\tnan"}}
	if d := Compare(values, [][]string{{"nan", "3"}, {"2.5", "1.0"}}); d != "" {
		t.Errorf("valuesort: %s", d)
	}
}

func TestFloatsEqual(t *testing.T) {
	nan := func() float64 { var z float64; return z / z }()
	for _, c := range []struct {
		a, b float64
		eq   bool
	}{{1, 1, true}, {0.1 + 0.2, 0.3, true}, {1, 1.001, false}, {nan, nan, true}, {nan, 1, false}, {0, -0.0, true}, {1e300, 1e300 * (1 + 1e-12), true}} {
		if got := FloatsEqual(c.a, c.b); got != c.eq {
			t.Errorf("FloatsEqual(%v, %v) = %v", c.a, c.b, got)
		}
	}
}

func TestRewrite(t *testing.T) {
	f, err := Parse("sample.slt", sample)
	if err != nil {
		t.Fatal(err)
	}
	out := f.Rewrite(map[int]Result{
		2: {Types: "IIT", Lines: []string{"9\t9\tz"}},
		4: {Lines: []string{"1"}},
		6: {Types: "I", Lines: []string{"2"}},
	})
	for _, want := range []string{
		"onlyif lore\nquery IIT rowsort\nSELECT a, b,\n       c FROM t\n----\n9\t9\tz\n\nskipif duckdb",
		"query T\nSELECT 1\n----\n1\n\nhalt",
		"query I\nSELECT 2\n----\n2\n",
		"# a comment\nstatement ok\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rewritten file lacks %q:\n%s", want, out)
		}
	}
	if _, err := Parse("again.slt", out); err != nil {
		t.Errorf("rewritten file does not parse: %v", err)
	}
}
