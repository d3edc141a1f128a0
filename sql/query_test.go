package sql

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/loredb/lore/errs"
	pg "github.com/loredb/lore/sql/pgast"
)

func TestMultiStatementSpans(t *testing.T) {
	const text = "SET SESSION use_statistics = false; SELECT 1"
	sts, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 2 {
		t.Fatalf("%d statements, want 2", len(sts))
	}
	if s, e := sts[0].Span(); text[s:e] != "SET SESSION use_statistics = false" {
		t.Errorf("first span %q", text[s:e])
	}
	q, ok := sts[1].(*Query)
	if !ok {
		t.Fatalf("second statement is %T", sts[1])
	}
	if s, e := q.Span(); text[s:e] != "SELECT 1" || q.Text != "SELECT 1" {
		t.Errorf("second span %q, Text %q", text[s:e], q.Text)
	}
	if c := q.Select.TargetList[0].GetResTarget().Val.GetAConst(); c == nil || c.GetIval().GetIval() != 1 || int(c.Location) != len(text)-1 {
		t.Errorf("constant %v: want 1 at %d", c, len(text)-1)
	}
}

// A location at the very start of a statement (relative offset 0) moves too.
func TestLocationAtStatementStart(t *testing.T) {
	const text = "SELECT 1; WITH x AS (SELECT 1) SELECT * FROM x"
	sts, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	q := sts[1].(*Query)
	if w := q.Select.WithClause; w == nil || int(w.Location) != strings.Index(text, "WITH") {
		t.Errorf("WITH clause %v, want location %d", w, strings.Index(text, "WITH"))
	}
	if cte := q.Select.WithClause.Ctes[0].GetCommonTableExpr(); int(cte.Location) != strings.Index(text, "x AS") {
		t.Errorf("CTE location %d, want %d", cte.Location, strings.Index(text, "x AS"))
	}
}

func TestEmptyStatementsDropped(t *testing.T) {
	for _, text := range []string{"", " ", ";", " ;; \n", "-- only a comment", "/* c */ ; -- d\n;"} {
		sts, err := Parse(text)
		if err != nil || len(sts) != 0 {
			t.Errorf("Parse(%q) = %d statements, %v; want none", text, len(sts), err)
		}
	}
	sts, err := Parse(";;SHOW TABLES;;; DESCRIBE t;")
	if err != nil || len(sts) != 2 {
		t.Fatalf("got %d statements, %v; want 2", len(sts), err)
	}
}

// Every Location in a query's tree is an offset into the whole text, even for the
// third statement after multibyte text and comments.
func TestQueryLocationsAreOriginalOffsets(t *testing.T) {
	const text = "SHOW TABLES; -- é\n/* ü */ SELECT 1;\n\tSELECT ünïcode, b + 1 AS c FROM tbl WHERE b > 2"
	sts, err := Parse(text)
	if err != nil {
		t.Fatal(errs.Describe(err, text))
	}
	q := sts[2].(*Query)
	if q.Start != strings.Index(text, "SELECT ünïcode") || q.End != len(text) {
		t.Errorf("span [%d,%d)", q.Start, q.End)
	}
	col := q.Select.TargetList[0].GetResTarget().Val.GetColumnRef()
	if got := col.Fields[0].GetString_().Sval; got != "ünïcode" || int(col.Location) != strings.Index(text, "ünïcode") {
		t.Errorf("column %q at %d, want at %d", got, col.Location, strings.Index(text, "ünïcode"))
	}
	rv := q.Select.FromClause[0].GetRangeVar()
	if rv.Relname != "tbl" || int(rv.Location) != strings.Index(text, "tbl") {
		t.Errorf("table %q at %d", rv.Relname, rv.Location)
	}
	w := q.Select.WhereClause.GetAExpr()
	if int(w.Location) != strings.Index(text, "> 2") {
		t.Errorf("where operator at %d, want %d", w.Location, strings.Index(text, "> 2"))
	}
}

func TestQueryForms(t *testing.T) {
	for _, text := range []string{
		"SELECT 1",
		"select a, count(*) from t group by a having count(*) > 1 order by 2 desc limit 5 offset 1",
		"WITH x AS (SELECT 1 AS a) SELECT a FROM x",
		"VALUES (1, 'a'), (2, 'b')",
		"(SELECT 1) UNION ALL (SELECT 2)",
		"TABLE t",
		"SELECT approx_percentile(x, ARRAY[0.5, 0.9]) FROM t",
		"SELECT row_number() OVER (PARTITION BY a ORDER BY b) FROM t",
		"SELECT * FROM a LEFT JOIN b ON a.k = b.k FULL JOIN c USING (k) CROSS JOIN d",
		"SELECT DATE '2024-01-01', TIMESTAMP '2024-01-01 00:00', INTERVAL '1 day', CAST(x AS int), y::text FROM t",
	} {
		q, ok := parseOne(t, text).(*Query)
		if !ok || q.Select == nil || q.Explain || q.Analyze {
			t.Errorf("Parse(%q) = %#v, want a plain query", text, q)
		}
	}
}

func TestExplain(t *testing.T) {
	tests := []struct {
		text             string
		explain, analyze bool
	}{
		{"EXPLAIN SELECT 1", true, false},
		{"explain analyze select * from t", true, true},
		{"EXPLAIN ANALYZE VERBOSE SELECT 1", true, true},
		{"EXPLAIN (ANALYZE) SELECT 1", true, true},
		{"EXPLAIN (ANALYZE false) SELECT 1", true, false},
		{"EXPLAIN (ANALYZE on, VERBOSE) SELECT 1", true, true},
		{"EXPLAIN WITH x AS (SELECT 1) SELECT * FROM x", true, false},
	}
	for _, tt := range tests {
		q, ok := parseOne(t, tt.text).(*Query)
		if !ok || q.Select == nil || q.Explain != tt.explain || q.Analyze != tt.analyze {
			t.Errorf("Parse(%q) = %+v, want explain=%v analyze=%v", tt.text, q, tt.explain, tt.analyze)
		}
		if q.Start != 0 || q.End != len(tt.text) {
			t.Errorf("Parse(%q) span [%d,%d)", tt.text, q.Start, q.End)
		}
	}
}

func TestPathRewrite(t *testing.T) {
	const text = "SELECT * FROM 'a/b.parquet' WHERE x = 'str'"
	q := parseOne(t, text).(*Query)
	rv := q.Select.FromClause[0].GetRangeVar()
	if rv == nil || rv.Relname != "a/b.parquet" || int(rv.Location) != strings.Index(text, "'a/b") {
		t.Fatalf("from item %v, want RangeVar a/b.parquet at %d", q.Select.FromClause[0], strings.Index(text, "'a/b"))
	}
	if !q.Paths[int(rv.Location)] || len(q.Paths) != 1 {
		t.Errorf("Paths = %v", q.Paths)
	}
	if c := q.Select.WhereClause.GetAExpr().Rexpr.GetAConst(); c == nil || c.GetSval().GetSval() != "str" {
		t.Errorf("WHERE literal became %v, want the string 'str'", q.Select.WhereClause.GetAExpr().Rexpr)
	}
	if q.Text != text {
		t.Errorf("Text %q was rewritten", q.Text)
	}
}

// rangeVars collects every RangeVar of a query.
func rangeVars(q *Query) map[string]int {
	out := map[string]int{}
	walkNodes(q, func(rv *pg.RangeVar) { out[rv.Relname] = int(rv.Location) })
	return out
}

func walkNodes(q *Query, fn func(*pg.RangeVar)) {
	walk(q.Select, func(m any) {
		if rv, ok := m.(*pg.RangeVar); ok {
			fn(rv)
		}
	})
}

func TestPathRewriteContexts(t *testing.T) {
	long := "data/" + strings.Repeat("deep/", 20) + "part-0.parquet" // longer than an identifier may be
	text := "WITH c AS (SELECT * FROM 'w.parquet') " +
		"SELECT extract(year FROM '2020-01-01'::date), substring('abc' FROM 2), 'lit' " +
		"FROM 'a.parquet' a, 'b/*.parquet' b JOIN '" + long + "' l ON l.k = 'k' LEFT JOIN (SELECT 1 FROM 'sub.parquet') s ON true " +
		"WHERE a.x IN (SELECT y FROM 'in.parquet') AND a.z IN ('p', 'q') ORDER BY 'o', 1"
	q := parseOne(t, text).(*Query)
	got := rangeVars(q)
	for _, p := range []string{"w.parquet", "a.parquet", "b/*.parquet", long, "sub.parquet", "in.parquet"} {
		pos, ok := got[p]
		if !ok || pos != strings.Index(text, "'"+p+"'") || !q.Paths[pos] {
			t.Errorf("path %q: RangeVar at %d (found %v), want at %d and in Paths", p, pos, ok, strings.Index(text, "'"+p+"'"))
		}
	}
	if len(got) != 6 || len(q.Paths) != 6 {
		t.Errorf("RangeVars %v, Paths %v", got, q.Paths)
	}
	// The literals in expressions stayed strings.
	sel := q.Select
	ex := sel.TargetList[0].GetResTarget().Val.GetFuncCall()
	if ex == nil || ex.Args[1].GetTypeCast().Arg.GetAConst().GetSval().GetSval() != "2020-01-01" {
		t.Errorf("extract argument changed: %v", sel.TargetList[0])
	}
	if sel.TargetList[2].GetResTarget().Val.GetAConst().GetSval().GetSval() != "lit" {
		t.Errorf("select literal changed: %v", sel.TargetList[2])
	}
}

func TestPathRewriteErrors(t *testing.T) {
	tests := []struct{ text, at, msg string }{
		{"SELECT * FROM 'it''s.parquet'", "''", "single quote"},
		{`SELECT * FROM 'a"b.parquet'`, `"`, "double quote"},
		{"SELECT * FROM 'a'\n'b'", "'\n", "single quote"},
		{"SELECT * FROM ''", "''", "empty path"},
		{"SELECT * FROM 'a' 'b'", "'b'", "syntax error"},
		{"SELECT * FROM t JOIN 'x.parquet'", "", "syntax error at end of input"},
		{"SELECT * FROM 'x'.y", "'x'", "syntax error"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.text)
		want := len(tt.text)
		if tt.at != "" {
			want = strings.Index(tt.text, tt.at)
		}
		if errs.CodeOf(err) != errs.Syntax || errs.PositionOf(err) != want || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Parse(%q): %v at %d, want SYNTAX_ERROR at %d containing %q", tt.text, err, errs.PositionOf(err), want, tt.msg)
		}
	}
}

func TestUnsupportedStatements(t *testing.T) {
	tests := []struct{ text, name string }{
		{"INSERT INTO t VALUES (1)", "INSERT"},
		{"update t set a = 1", "UPDATE"},
		{"DELETE FROM t", "DELETE"},
		{"WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", "INSERT"},
		{"CREATE INDEX i ON t (a)", "CREATE INDEX"},
		{"create unique index i on t (a)", "CREATE UNIQUE INDEX"},
		{"CREATE VIEW v AS SELECT 1", "CREATE VIEW"},
		{"DROP VIEW v", "DROP VIEW"},
		{"TRUNCATE t", "TRUNCATE"},
		{"GRANT SELECT ON t TO u", "GRANT"},
		{"SELECT 1 INTO t2", "SELECT INTO"},
		{"EXPLAIN INSERT INTO t VALUES (1)", "EXPLAIN INSERT"},
		{"EXPLAIN ANALYZE CREATE TABLE t2 AS SELECT 1", "EXPLAIN CREATE TABLE"},
	}
	for _, tt := range tests {
		text := "SELECT 1;\n  " + tt.text
		_, err := Parse(text)
		if errs.CodeOf(err) != errs.Analysis || errs.PositionOf(err) != 12 || err.Error() != "unsupported statement: "+tt.name {
			t.Errorf("Parse(%q): %s %v at %d, want ANALYSIS_ERROR \"unsupported statement: %s\" at 12",
				tt.text, errs.CodeOf(err), err, errs.PositionOf(err), tt.name)
		}
	}
	_, err := Parse("EXPLAIN (FORMAT JSON) SELECT 1")
	if errs.CodeOf(err) != errs.Analysis || errs.PositionOf(err) != 9 {
		t.Errorf("EXPLAIN (FORMAT JSON): %v at %d, want ANALYSIS_ERROR at 9", err, errs.PositionOf(err))
	}
}

// Syntax errors found by PostgreSQL's parser carry byte offsets into the whole text,
// and errs.Describe shows the user's line with a caret under the right place.
func TestSyntaxErrorPositions(t *testing.T) {
	tests := []struct {
		text, at, msg string
		line, col     int
	}{
		{"SELECT x fro t", "t", `syntax error at or near "t"`, 1, 14},
		{"SHOW TABLES;\nSELECT a,\n\tb fro t", "t", `syntax error at or near "t"`, 3, 8},
		{"SELECT 'é', 'ü' FROM t;\nSELECT 'ß' fro t2", "t2", `syntax error at or near "t2"`, 2, 17},
		{"SELECT 1;\n\tSELECT 'ä€𝄞' + fro) ;", ") ;", `syntax error at or near ")"`, 2, 26},
		{"SELECT 1 +", "", "syntax error at end of input", 1, 11},
		{"SELECT 1 + ; SELECT 2", " ; SELECT 2", "syntax error at end of input", 1, 11},
		{"SELECT 'abc", "'abc", "unterminated quoted string", 1, 8},
		{"SELECT 1; /* open", "/*", "unterminated /* comment", 1, 11},
		{"/*", "/*", "unterminated /* comment", 1, 1},
		{"SELECT 1; /*", "/*", "unterminated /* comment", 1, 11},
		{"SELECT 1 /* x", "/*", "unterminated /* comment", 1, 10},
		{"SELECT 1; /* a /* b */", "/*", "unterminated /* comment", 1, 11},
		{"SELECT \"\" FROM t", `""`, "zero-length delimited identifier", 1, 8},
		{"SELEC 1", "SELEC", `syntax error at or near "SELEC"`, 1, 1},
		{"SELECT 1 FROM t WHERE", "", "syntax error at end of input", 1, 22},
		{"SELECT é FROM", "", "syntax error at end of input", 1, 15},
		{"SELECT\x00 1", "\x00", "NUL", 1, 7},
		{"SELECT 'a\xff'", "\xff", "invalid UTF-8", 1, 10},
	}
	for _, tt := range tests {
		_, err := Parse(tt.text)
		want := len(tt.text)
		if tt.at != "" {
			want = strings.Index(tt.text, tt.at)
		}
		if errs.CodeOf(err) != errs.Syntax || errs.PositionOf(err) != want || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Parse(%q): %s %v at %d; want SYNTAX_ERROR at %d containing %q", tt.text, errs.CodeOf(err), err, errs.PositionOf(err), want, tt.msg)
			continue
		}
		d := errs.Describe(err, tt.text)
		if !strings.Contains(d, "SYNTAX_ERROR: ") {
			t.Errorf("Describe: %s", d)
		}
		if line, col := errs.LineColumn(tt.text, want); line != tt.line || col != tt.col {
			t.Errorf("Parse(%q): line %d column %d, want %d:%d\n%s", tt.text, line, col, tt.line, tt.col, d)
		}
	}
}

// The caret line repeats the tabs of the user's line, so the caret lands under the
// offending token in a terminal.
func TestDescribeCaret(t *testing.T) {
	text := "SHOW TABLES;\nSELECT a,\n\tb fro t"
	_, err := Parse(text)
	want := "SYNTAX_ERROR: syntax error at or near \"t\" (line 3, column 8)\n" +
		"LINE 3: \tb fro t\n" +
		"        \t      ^"
	if got := errs.Describe(err, text); got != want {
		t.Errorf("Describe:\n%s\nwant:\n%s", got, want)
	}
}

func TestDepthGuard(t *testing.T) {
	deep := []string{
		"SELECT 1" + strings.Repeat(" + 1", MaxNestingDepth+1),
		"SELECT 1" + strings.Repeat("::int", MaxNestingDepth+1),
		"SELECT 1" + strings.Repeat(" UNION SELECT 1", setOpsPerLevel*MaxNestingDepth+1),
		"SELECT 1" + strings.Repeat(" UNION ALL SELECT 1 + 1", setOpsPerLevel*(MaxNestingDepth-1)),
		// A CASE within a CASE fills the grammar's own stack before the guard's
		// bound: bison's "memory exhausted" is a nesting error too.
		"SELECT " + strings.Repeat("CASE WHEN 1 = 1 THEN ", 2000) + "1" + strings.Repeat(" END", 2000),
		"SELECT 1 FROM a" + strings.Repeat(" JOIN a ON true", MaxNestingDepth/2+1),
		"SELECT (((" + strings.Repeat("1 + ", MaxNestingDepth) + "1)))",
		"SELECT " + strings.Repeat("(", MaxNestingDepth) + "1" + strings.Repeat(")", MaxNestingDepth),
		"SELECT " + strings.Repeat("(", 100) + "1" + strings.Repeat(" + 1", MaxNestingDepth-50) + strings.Repeat(")", 100),
		"OPTIMIZE t WHERE x = 1" + strings.Repeat(" + 1", MaxNestingDepth+1),
		// Far beyond what would crash the C parser without the guard.
		"SELECT 1" + strings.Repeat("+1", 100000),
	}
	for _, text := range deep {
		_, err := Parse(text)
		if errs.CodeOf(err) != errs.Syntax || !strings.Contains(err.Error(), "nested too deeply") || strings.Contains(err.Error(), "memory") {
			t.Errorf("Parse(%.40q…): %v, want a nesting error", text, err)
		}
		if p := errs.PositionOf(err); p < 0 || p > len(text) {
			t.Errorf("position %d outside the text", p)
		}
	}
	// Wide but flat statements are fine: AND/OR chains and lists are flattened.
	wide := []string{
		"SELECT 1 FROM t WHERE " + strings.Repeat("a = 1 AND ", 5000) + "true",
		"SELECT 1 FROM t WHERE " + strings.Repeat("(a = 1 AND b = 2) OR ", 5000) + "false",
		"SELECT 1 FROM t WHERE a IN (" + strings.Repeat("1, ", 20000) + "1)",
		"SELECT " + strings.Repeat("a + 1, ", 5000) + "1 FROM t",
		"SELECT CASE " + strings.Repeat("WHEN a = 1 THEN 'x' ", 5000) + "END FROM t",
		"SELECT 1" + strings.Repeat(" + 1", 1000),
		// A flat UNION ALL is a long chain of set operations, each a level of the
		// tree that the C parser walks with a small frame.
		"SELECT 1 AS x" + strings.Repeat(" UNION ALL SELECT 1 AS x", 5000),
		"SELECT count(*) FROM (SELECT 1 AS x" + strings.Repeat(" UNION ALL SELECT 1 AS x", 8900) + ") t",
	}
	for _, text := range wide {
		if _, err := Parse(text); err != nil {
			t.Errorf("Parse(%.40q…): %v", text, err)
		}
	}
}

func TestDeparse(t *testing.T) {
	q := parseOne(t, "SELECT count(*), a+1, lower(b) AS l, CASE WHEN x THEN 1 ELSE 2 END FROM t").(*Query)
	want := []string{"count(*)", "a + 1", "lower(b)", "CASE WHEN x THEN 1 ELSE 2 END"}
	for i, w := range want {
		got, err := Deparse(q.Select.TargetList[i].GetResTarget().Val)
		if err != nil || got != w {
			t.Errorf("Deparse(target %d) = %q, %v; want %q", i, got, err, w)
		}
	}
	if _, err := Deparse(nil); err == nil {
		t.Error("Deparse(nil) succeeded")
	}
}

// Requests are parsed concurrently by the server; the C parser keeps per-thread
// state, so concurrent parses must not disturb each other.
func TestParseConcurrent(t *testing.T) {
	texts := []string{
		"SELECT a, b + 1 FROM 'x.parquet' WHERE c = 'd' ORDER BY a",
		"SET SESSION approximate = true; SELECT count(DISTINCT u) FROM t",
		"OPTIMIZE t WHERE day >= DATE '2024-01-01'",
		"SELECT 1 fro t",
	}
	want := make([]string, len(texts))
	for i, text := range texts {
		want[i] = summarize(text)
	}
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func() {
			for n := 0; n < 100; n++ {
				i := (g + n) % len(texts)
				if got := summarize(texts[i]); got != want[i] {
					done <- fmt.Errorf("Parse(%q) = %s, want %s", texts[i], got, want[i])
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// treeText renders a parse tree as JSON: every field, in a fixed order.
func treeText(m any) string {
	b, err := json.Marshal(m)
	if err != nil {
		return "unrenderable: " + err.Error()
	}
	return string(b)
}

// summarize renders the outcome of parsing text, trees included, as one string.
func summarize(text string) string {
	sts, err := Parse(text)
	if err != nil {
		return fmt.Sprintf("error %s at %d: %v", errs.CodeOf(err), errs.PositionOf(err), err)
	}
	var b strings.Builder
	for _, st := range sts {
		switch s := st.(type) {
		case *Query:
			fmt.Fprintf(&b, "query %d %d %s;", s.Start, s.End, treeText(s.Select))
		case *Optimize:
			fmt.Fprintf(&b, "optimize %s %s;", s.Where, treeText(s.WhereExpr))
		default:
			fmt.Fprintf(&b, "%#v;", s)
		}
	}
	return b.String()
}

func TestTableFunctionArgumentStaysString(t *testing.T) {
	q := parseOne(t, "SELECT * FROM read_parquet('dir/', 'b.parquet') AS r").(*Query)
	rf := q.Select.FromClause[0].GetRangeFunction()
	if rf == nil || q.Paths != nil {
		t.Fatalf("from item %v, Paths %v: want a table function and no paths", q.Select.FromClause[0], q.Paths)
	}
	fc := rf.Functions[0].GetList().Items[0].GetFuncCall()
	if fc.Args[0].GetAConst().GetSval().GetSval() != "dir/" || fc.Args[1].GetAConst().GetSval().GetSval() != "b.parquet" {
		t.Errorf("arguments %v changed", fc.Args)
	}
}
