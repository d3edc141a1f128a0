package sql

import (
	"reflect"
	"strings"
	"testing"

	"github.com/loredb/lore/errs"
)

// parseOne parses text that must hold exactly one statement.
func parseOne(t *testing.T, text string) Statement {
	t.Helper()
	sts, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, errs.Describe(err, text))
	}
	if len(sts) != 1 {
		t.Fatalf("Parse(%q): %d statements, want 1", text, len(sts))
	}
	return sts[0]
}

func str(pos int, s string) OptionValue { return OptionValue{Pos: pos, Kind: ValueString, Str: s} }

// at is the byte offset of the n-th (0-based) occurrence of sub in s.
func at(s, sub string, n int) int {
	off := 0
	for ; n > 0; n-- {
		i := strings.Index(s[off:], sub)
		off += i + len(sub)
	}
	return off + strings.Index(s[off:], sub)
}

func cols(c ...string) *[]string {
	if c == nil {
		c = []string{}
	}
	return &c
}

func TestLoreStatements(t *testing.T) {
	const create = "CREATE TABLE IF NOT EXISTS Sales.\"Daily\" WITH (location = 'data/sales', Format = 'parquet', clustered_by = ARRAY['a', 'b'], bloom = ARRAY['c'])"
	tests := []struct {
		text string
		want Statement
	}{
		{create, &CreateTable{Start: 0, End: len(create), Name: "sales.Daily", IfNotExists: true, Options: []Option{
			{Key: "location", KeyPos: at(create, "location", 0), Value: str(at(create, "'data", 0), "data/sales")},
			{Key: "format", KeyPos: at(create, "Format", 0), Value: str(at(create, "'parquet'", 0), "parquet")},
			{Key: "clustered_by", KeyPos: at(create, "clustered_by", 0), Value: OptionValue{Pos: at(create, "ARRAY", 0), Kind: ValueArray,
				Array: []OptionValue{str(at(create, "'a'", 0), "a"), str(at(create, "'b'", 0), "b")}}},
			{Key: "bloom", KeyPos: at(create, "bloom", 0), Value: OptionValue{Pos: at(create, "ARRAY", 1), Kind: ValueArray,
				Array: []OptionValue{str(at(create, "'c'", 0), "c")}}},
		}}},
		{"create table t with ()", &CreateTable{End: 22, Name: "t"}},
		{"DROP TABLE t", &DropTable{End: 12, Name: "t"}},
		{"drop table if exists s.t", &DropTable{End: 24, Name: "s.t", IfExists: true}},
		{`DROP TABLE "My ""Table"""`, &DropTable{End: 25, Name: `My "Table"`}},
		{"ALTER TABLE t SET CLUSTERED BY (a, \"B\")", &AlterTable{End: 39, Name: "t", ClusteredBy: cols("a", "B")}},
		{"alter table t set clustered by ()", &AlterTable{End: 33, Name: "t", ClusteredBy: cols()}},
		{"ALTER TABLE t SET BLOOM (user_id)", &AlterTable{End: 33, Name: "t", Bloom: cols("user_id")}},
		{"SHOW TABLES", &ShowTables{End: 11}},
		{"show tables;", &ShowTables{End: 11}},
		{"DESCRIBE t", &Describe{End: 10, Name: "t"}},
		{"desc Events", &Describe{End: 11, Name: "events"}},
		{"DESCRIBE detail", &Describe{End: 15, Name: "detail"}},
		{"DESCRIBE DETAIL t", &DescribeDetail{End: 17, Name: "t"}},
		{"desc detail s.t", &DescribeDetail{End: 15, Name: "s.t"}},
		{"DESCRIBE detail.x", &Describe{End: 17, Name: "detail.x"}},
		{"\uFEFFSHOW TABLES", &ShowTables{Start: 3, End: 14}},
		{"SHOW CREATE TABLE t", &ShowCreateTable{End: 19, Name: "t"}},
		{"ANALYZE t", &Analyze{End: 9, Name: "t"}},
		{"ANALYZE t WITH (sketches = true, distinct = false, columns = ARRAY['a'])", &Analyze{End: 72, Name: "t", Options: []Option{
			{Key: "sketches", KeyPos: 16, Value: OptionValue{Pos: 27, Kind: ValueBool, Bool: true}},
			{Key: "distinct", KeyPos: 33, Value: OptionValue{Pos: 44, Kind: ValueBool}},
			{Key: "columns", KeyPos: 51, Value: OptionValue{Pos: 61, Kind: ValueArray, Array: []OptionValue{str(67, "a")}}},
		}}},
		{"SHOW STATS FOR t", &ShowStats{End: 16, Name: "t"}},
		{"OPTIMIZE t", &Optimize{End: 10, Name: "t"}},
		{"OPTIMIZE t WITH (target_file_mb = 128, ratio = 0.5, mode = auto)", &Optimize{End: 64, Name: "t", Options: []Option{
			{Key: "target_file_mb", KeyPos: 17, Value: OptionValue{Pos: 34, Kind: ValueInt, Int: 128}},
			{Key: "ratio", KeyPos: 39, Value: OptionValue{Pos: 47, Kind: ValueFloat, Float: 0.5}},
			{Key: "mode", KeyPos: 52, Value: OptionValue{Pos: 59, Kind: ValueIdent, Str: "auto"}},
		}}},
		{"SET SESSION use_statistics = false", &SetSession{End: 34, Key: "use_statistics", Value: OptionValue{Pos: 29, Kind: ValueBool}}},
		{"set session late_materialisation = auto", &SetSession{End: 39, Key: "late_materialisation", Value: OptionValue{Pos: 35, Kind: ValueIdent, Str: "auto"}}},
		{"SET SESSION Late_Materialisation TO 'Auto'", &SetSession{End: 42, Key: "late_materialisation", Value: str(36, "Auto")}},
		{"SET SESSION x = -0x10", &SetSession{End: 21, Key: "x", Value: OptionValue{Pos: 16, Kind: ValueInt, Int: -16}}},
		{"SET SESSION x = 1_000", &SetSession{End: 21, Key: "x", Value: OptionValue{Pos: 16, Kind: ValueInt, Int: 1000}}},
		{"SET SESSION x = 017", &SetSession{End: 19, Key: "x", Value: OptionValue{Pos: 16, Kind: ValueInt, Int: 17}}},
		{"SET SESSION x = 5000000000", &SetSession{End: 26, Key: "x", Value: OptionValue{Pos: 16, Kind: ValueInt, Int: 5000000000}}},
		{"SET SESSION x = 1e3", &SetSession{End: 19, Key: "x", Value: OptionValue{Pos: 16, Kind: ValueFloat, Float: 1000}}},
		{"SET SESSION x = 'it''s'", &SetSession{End: 23, Key: "x", Value: str(16, "it's")}},
		{"SET SESSION x = 'a'\n'b'", &SetSession{End: 23, Key: "x", Value: str(16, "ab")}},
		{"SET SESSION x = $$a'b$$", &SetSession{End: 23, Key: "x", Value: str(16, "a'b")}},
		{"SET SESSION x = \"Mixed\"", &SetSession{End: 23, Key: "x", Value: OptionValue{Pos: 16, Kind: ValueIdent, Str: "Mixed"}}},
		{"SET SESSION x = ARRAY[]", &SetSession{End: 23, Key: "x", Value: OptionValue{Pos: 16, Kind: ValueArray, Array: []OptionValue{}}}},
		{"  -- leading comment\n  SHOW TABLES /* trailing */ ;", &ShowTables{Start: 23, End: 34}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got := parseOne(t, tt.text)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestOptimizeWhere(t *testing.T) {
	const text = "SELECT 1;\nOPTIMIZE events WITH (k = 1) WHERE day >= DATE '2024-01-01' AND (kind = 'x' OR n IN (1, 2)) -- done"
	sts, err := Parse(text)
	if err != nil {
		t.Fatal(errs.Describe(err, text))
	}
	o, ok := sts[1].(*Optimize)
	if !ok {
		t.Fatalf("got %T, want *Optimize", sts[1])
	}
	wantWhere := "day >= DATE '2024-01-01' AND (kind = 'x' OR n IN (1, 2))"
	if o.Where != wantWhere || o.WhereStart != strings.Index(text, "day") {
		t.Errorf("Where = %q at %d, want %q at %d", o.Where, o.WhereStart, wantWhere, strings.Index(text, "day"))
	}
	if o.End != strings.Index(text, " -- done") {
		t.Errorf("End = %d, want %d", o.End, strings.Index(text, " -- done"))
	}
	b := o.WhereExpr.GetBoolExpr()
	if b == nil || len(b.Args) != 2 {
		t.Fatalf("WhereExpr = %v, want an AND of two terms", o.WhereExpr)
	}
	// Locations are offsets into the whole request.
	ge := b.Args[0].GetAExpr()
	if ge == nil || int(ge.Lexpr.GetColumnRef().Location) != strings.Index(text, "day") {
		t.Errorf("left term %v: column location should be %d", ge, strings.Index(text, "day"))
	}
	if int(ge.Location) != strings.Index(text, ">=") {
		t.Errorf("operator location %d, want %d", ge.Location, strings.Index(text, ">="))
	}
	// Deparse renders PostgreSQL's canonical spelling of the same predicate.
	const canonical = "day >= '2024-01-01'::date AND (kind = 'x' OR n IN (1, 2))"
	if got, err := Deparse(o.WhereExpr); err != nil || got != canonical {
		t.Errorf("Deparse(WhereExpr) = %q, %v; want %q", got, err, canonical)
	}
}

func TestLoreStatementErrors(t *testing.T) {
	tests := []struct {
		text string
		at   string // the error is at the first occurrence of at; "" means end of statement
		msg  string // a part of the message
	}{
		{"CREATE TABLE WITH (location = 'x')", "WITH", "expected a table name"},
		{"CREATE TABLE t", "", "syntax error at end of input: expected WITH"},
		{"CREATE TABLE t (a int)", "(", `at or near "("`},
		{"CREATE TABLE t WITH location = 'x'", "location", `expected "(" after WITH`},
		{"CREATE TABLE t WITH (location 'x')", "'x'", `expected "=" after option location`},
		{"CREATE TABLE t WITH (location = 'x'", "", "expected \",\" or \")\""},
		{"CREATE TABLE t WITH (location = 'x',)", ")", "expected an option name"},
		{"CREATE TABLE t WITH (location = )", ")", "expected a value"},
		{"CREATE TABLE t WITH (location = 1 + 2)", "+", "expected \",\" or \")\""},
		{"CREATE TABLE t WITH (c = ARRAY['a', ])", "]", "expected a literal"},
		{"CREATE TABLE t WITH (c = ARRAY['a' 'b'])", "'b'", "expected \",\" or \"]\""},
		{"CREATE TABLE t WITH (c = ARRAY[ARRAY['a']])", "ARRAY['a']", "array elements must be literals"},
		{"CREATE TABLE t WITH (c = ARRAY[x])", "x", "expected a literal"},
		{"CREATE TABLE t WITH (c = ARRAY('a'))", "('a'", `expected "[" after ARRAY`},
		{"CREATE TABLE t WITH (c = E'x')", "E'x'", "only plain"},
		{"CREATE TABLE t WITH (n = 99999999999999999999)", "999", "out of range"},
		{"CREATE TABLE t WITH (n = - 'x')", "'x'", "expected a number"},
		{"CREATE TABLE t WITH (a = 1) extra", "extra", "expected end of statement"},
		{"CREATE TABLE IF EXISTS t WITH ()", "EXISTS", "expected NOT"},
		{"DROP TABLE", "", "expected a table name"},
		{"DROP TABLE IF t", "t", "expected EXISTS"},
		{"DROP TABLE t, u", ",", "expected end of statement"},
		{"DROP TABLE s.", "", "expected a table name"},
		{"ALTER TABLE t SET FOO", "FOO", "expected CLUSTERED BY (…) or BLOOM (…)"},
		{"ALTER TABLE t SET CLUSTERED (a)", "(", "expected BY"},
		{"ALTER TABLE t SET CLUSTERED BY a", "a", `expected "("`},
		{"ALTER TABLE t SET CLUSTERED BY (a, b", "", `expected "," or ")"`},
		{"ALTER TABLE t SET CLUSTERED BY (a,)", ")", "expected a column name"},
		{"ALTER TABLE t SET BLOOM ((a))", "(a", "expected a column name"},
		{"ALTER TABLE t ADD COLUMN a", "ADD", "expected SET"},
		{"SHOW", "", "expected TABLES, CREATE TABLE or STATS FOR"},
		{"SHOW search_path", "search_path", "expected TABLES"},
		{"SHOW STATS t", "t", "expected FOR"},
		{"SHOW CREATE TABLE", "", "expected a table name"},
		{"SHOW TABLES t", "t", "expected end of statement"},
		{"DESCRIBE", "", "expected a table name"},
		{"DESCRIBE DETAIL t u", "u", "expected end of statement"},
		{"DESCRIBE select", "select", "expected a table name"},
		{"ANALYZE WITH (a = 1)", "WITH", "expected a table name"},
		{"ANALYZE t WITH sketches", "sketches", `expected "(" after WITH`},
		{"OPTIMIZE t WHERE", "", "expected a predicate"},
		{"OPTIMIZE t WHERE a >", "", "syntax error at end of input"},
		{"OPTIMIZE t WHERE a > 1 ORDER BY a", "ORDER", "predicate only"},
		{"OPTIMIZE t WHERE a > 1 UNION SELECT 1", "UNION", "predicate only"},
		{"OPTIMIZE t WHERE a > 1 FROM u", "FROM", "predicate only"},
		{"OPTIMIZE t WHERE a = = 1", "= 1", `syntax error at or near "="`},
		{"OPTIMIZE t WITH (a = 1) WITH (b = 2)", "WITH (b", "expected end of statement"},
		{"SET use_statistics = false", "use_statistics", "expected SESSION"},
		{"SET SESSION = 1", "=", "expected a setting name"},
		{"SET SESSION x 1", "1", `expected "=" or TO`},
		{"SET SESSION x =", "", "expected a value"},
		{"SET SESSION x = (1)", "(", "expected a value"},
		{"SET SESSION x = 1 2", "2", "expected end of statement"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			_, err := Parse(tt.text)
			if err == nil {
				t.Fatalf("no error")
			}
			want := len(tt.text)
			if tt.at != "" {
				want = strings.Index(tt.text, tt.at)
			}
			if errs.CodeOf(err) != errs.Syntax || errs.PositionOf(err) != want || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("got %s at %d: %v\nwant %s at %d containing %q\n%s", errs.CodeOf(err), errs.PositionOf(err), err,
					errs.Syntax, want, tt.msg, errs.Describe(err, tt.text))
			}
		})
	}
}

func TestIdentifierTruncation(t *testing.T) {
	long := strings.Repeat("x", 62) + "éz" // é straddles byte 63
	st := parseOne(t, "DESCRIBE "+long)
	if got := st.(*Describe).Name; got != strings.Repeat("x", 62) {
		t.Errorf("name %q, want the 62 x's PostgreSQL keeps", got)
	}
	// A query names the same table the same way.
	q := parseOne(t, "SELECT * FROM "+long).(*Query)
	if got := q.Select.FromClause[0].GetRangeVar().Relname; got != strings.Repeat("x", 62) {
		t.Errorf("query relname %q differs from the statement's name", got)
	}
}
