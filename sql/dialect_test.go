package sql

import (
	"strings"
	"testing"

	"github.com/loredb/lore/errs"
)

func parseQuery(t *testing.T, text string) *Query {
	t.Helper()
	sts, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	q, ok := sts[len(sts)-1].(*Query)
	if !ok {
		t.Fatalf("Parse(%q) gave %T", text, sts[len(sts)-1])
	}
	return q
}

func TestDialectGroupAndOrderByAll(t *testing.T) {
	const text = "SELECT 1; SELECT a, sum(b) FROM t GROUP BY ALL ORDER BY ALL DESC"
	q := parseQuery(t, text)
	g := q.Select.GroupClause
	if len(g) != 1 || !q.Dialect.IsAll(g[0]) {
		t.Fatalf("GROUP BY %v: want the ALL marker", g)
	}
	if pos := int(g[0].GetColumnRef().Location); pos != strings.Index(text, "ALL ORDER") {
		t.Errorf("GROUP BY ALL at %d, want %d", pos, strings.Index(text, "ALL ORDER"))
	}
	s := q.Select.SortClause
	if len(s) != 1 || !q.Dialect.IsAll(s[0].GetSortBy().Node) || s[0].GetSortBy().SortbyDir.String() != "SORTBY_DESC" {
		t.Fatalf("ORDER BY %v: want the ALL marker, descending", s)
	}
	// PostgreSQL's GROUP BY ALL a (a set quantifier) is a plain GROUP BY.
	q = parseQuery(t, "SELECT a FROM t GROUP BY ALL a")
	if q.Dialect.IsAll(q.Select.GroupClause[0]) {
		t.Error("GROUP BY ALL a read as GROUP BY ALL")
	}
	// A column reference that is not the marker is not ALL.
	q = parseQuery(t, `SELECT a FROM t GROUP BY "_"`)
	if q.Dialect.IsAll(q.Select.GroupClause[0]) {
		t.Error(`GROUP BY "_" read as GROUP BY ALL`)
	}
}

func TestDialectQualify(t *testing.T) {
	const text = "SELECT a, row_number() OVER (ORDER BY a) AS rn FROM t QUALIFY rn = 1 ORDER BY a"
	q := parseQuery(t, text)
	c := q.Dialect.Qualify(q.Select)
	if c == nil || c.GetAExpr() == nil {
		t.Fatalf("QUALIFY condition %v", c)
	}
	if pos := int(c.GetAExpr().Lexpr.GetColumnRef().Location); pos != strings.Index(text, "rn = 1") {
		t.Errorf("QUALIFY's column at %d, want %d", pos, strings.Index(text, "rn = 1"))
	}
	if len(q.Select.SortClause) != 1 {
		t.Errorf("ORDER BY after QUALIFY lost: %v", q.Select.SortClause)
	}
	// A QUALIFY inside a subquery belongs to it, not to the outer SELECT.
	q = parseQuery(t, "SELECT x FROM (SELECT a AS x FROM t QUALIFY a > 1) s")
	if q.Dialect.Qualify(q.Select) != nil {
		t.Error("outer SELECT got the subquery's QUALIFY")
	}
	sub := q.Select.FromClause[0].GetRangeSubselect().Subquery.GetSelectStmt()
	if q.Dialect.Qualify(sub) == nil {
		t.Error("subquery lost its QUALIFY")
	}
}

func TestDialectStarExcludeReplace(t *testing.T) {
	const text = "SELECT t.* EXCLUDE (a, \"B\") REPLACE (c + 1 AS c), * EXCLUDE d FROM t"
	q := parseQuery(t, text)
	if n := len(q.Select.TargetList); n != 2 {
		t.Fatalf("%d select items, want 2", n)
	}
	first := q.Select.TargetList[0].GetResTarget().Val.GetColumnRef()
	if got := q.Dialect.Exclude(first); strings.Join(got, ",") != "a,B" {
		t.Errorf("EXCLUDE %v, want a,B", got)
	}
	r := q.Dialect.Replace(first)
	if len(r) != 1 || r[0].Name != "c" || int(r[0].Location) != strings.Index(text, "c + 1") {
		t.Errorf("REPLACE %v", r)
	}
	second := q.Select.TargetList[1].GetResTarget().Val.GetColumnRef()
	if got := q.Dialect.Exclude(second); strings.Join(got, ",") != "d" {
		t.Errorf("second EXCLUDE %v, want d", got)
	}
}

// A star that multiplies is not a select list's star: a column named exclude after
// it stays a column.
func TestDialectMultiplyIsNotStar(t *testing.T) {
	for _, text := range []string{"SELECT a * exclude FROM t", "SELECT (a) * exclude FROM t"} {
		q := parseQuery(t, text)
		if q.Dialect != nil {
			t.Fatalf("%s: dialect recorded %+v", text, q.Dialect)
		}
		if e := q.Select.TargetList[0].GetResTarget().Val.GetAExpr(); e == nil || e.Rexpr.GetColumnRef() == nil {
			t.Errorf("%s parsed as %v", text, q.Select.TargetList[0])
		}
	}
	q := parseQuery(t, "SELECT DISTINCT ON (a) * EXCLUDE (b) FROM t")
	if got := q.Dialect.Exclude(q.Select.TargetList[0].GetResTarget().Val.GetColumnRef()); len(got) != 1 {
		t.Errorf("DISTINCT ON (a) * EXCLUDE (b): EXCLUDE %v", got)
	}
}

func TestDialectUnionByName(t *testing.T) {
	q := parseQuery(t, "SELECT a FROM t UNION ALL BY NAME SELECT b FROM u UNION SELECT c FROM v")
	// The chain is ((t BY NAME u) UNION v).
	if q.Dialect.ByName(q.Select) {
		t.Error("the plain UNION read as BY NAME")
	}
	if !q.Dialect.ByName(q.Select.Larg) {
		t.Error("UNION ALL BY NAME lost")
	}
}

// Keywords inside comments and string literals are not syntax, and a query without
// DuckDB forms records nothing.
func TestDialectLeavesLiteralsAndComments(t *testing.T) {
	const text = "SELECT 'GROUP BY ALL QUALIFY', a /* ORDER BY ALL */ FROM t -- QUALIFY x\n ORDER BY a"
	q := parseQuery(t, text)
	if q.Dialect != nil {
		t.Fatalf("dialect recorded %+v", q.Dialect)
	}
	if s := q.Select.TargetList[0].GetResTarget().Val.GetAConst().GetSval().GetSval(); s != "GROUP BY ALL QUALIFY" {
		t.Errorf("literal became %q", s)
	}
}

// An error after a rewritten stretch points at its byte in the original text.
func TestDialectErrorPositions(t *testing.T) {
	for _, c := range []struct{ text, at string }{
		{"SELECT a FROM t QUALIFY a > 1 ORDER BY ) ", ") "},
		{"SELECT * EXCLUDE (a, b) FROM t WHERE a = = 1", "= 1"},
		{"SELECT a FROM t GROUP BY ALL HAVING count(*) > > 1", "> 1"},
		{"SELECT a, FROM t WHERE a = = 1", "= 1"},
		{"SELECT a FROM t UNION BY NAME SELECT b FROM u WHERE = 1", "= 1"},
		{"SELECT a FROM t QUALIFY a = = 1", "= 1"},
		{"SELECT * REPLACE (a + AS a) FROM t", "AS a)"},
	} {
		_, err := Parse(c.text)
		e, ok := err.(*errs.Error)
		if !ok || e.Code != errs.Syntax {
			t.Errorf("Parse(%q) = %v, want a syntax error", c.text, err)
			continue
		}
		if want := strings.Index(c.text, c.at); e.Pos != want {
			t.Errorf("Parse(%q) error at %d (%q), want %d: %v", c.text, e.Pos, c.text[e.Pos:], want, e)
		}
	}
}

func TestDialectRefusals(t *testing.T) {
	for _, text := range []string{
		"SELECT a FROM t QUALIFY",
		"SELECT a FROM t QUALIFY ORDER BY a",
		"SELECT * EXCLUDE FROM t",
		"SELECT * EXCLUDE (a, ) FROM t",
		"SELECT * REPLACE (a + 1) FROM t",
		"SELECT * REPLACE a FROM t",
		"SELECT a FROM t UNION BY NAME VALUES (1)",
	} {
		if _, err := Parse(text); err == nil {
			t.Errorf("Parse(%q) succeeded", text)
		} else if c := errs.CodeOf(err); c != errs.Syntax && c != errs.Analysis {
			t.Errorf("Parse(%q): %v", text, err)
		}
	}
}

// The DuckDB forms join the parser's fuzz seeds.
func init() {
	fuzzSeeds = append(fuzzSeeds,
		"SELECT a, sum(b), FROM t GROUP BY ALL ORDER BY ALL DESC NULLS FIRST",
		"SELECT t.* EXCLUDE (a, t.b) REPLACE (c + 1 AS c), * EXCLUDE d FROM t QUALIFY row_number() OVER () = 1 ORDER BY 1",
		"SELECT a FROM (SELECT 1 AS a QUALIFY a > 0) s UNION ALL BY NAME (SELECT 2 AS a)",
		"SELECT DISTINCT ON (a) * EXCLUDE b FROM t GROUP BY ROLLUP (a, (b, c)), CUBE (d)",
		"FROM 'x.parquet' t SELECT a, b, WHERE c QUALIFY d LIMIT 10%",
		"EXPLAIN FROM t JOIN u USING (k) ORDER BY ALL",
	)
}

func TestDialectLimitPercent(t *testing.T) {
	for _, c := range []struct {
		text    string
		percent bool
	}{
		{"SELECT a FROM t LIMIT 10%", true},
		{"SELECT a FROM t LIMIT 12.5 PERCENT OFFSET 2", true},
		{"SELECT a FROM (SELECT a FROM t LIMIT 10%) s", false}, // the outer SELECT has no LIMIT
		{"SELECT a FROM t LIMIT 10 % 3", false},
	} {
		q := parseQuery(t, c.text)
		sel := q.Select
		if sel.LimitCount == nil {
			sel = sel.FromClause[0].GetRangeSubselect().Subquery.GetSelectStmt()
			c.percent = true
		}
		if got := q.Dialect.IsPercent(sel.LimitCount); got != c.percent {
			t.Errorf("%s: percent %v, want %v", c.text, got, c.percent)
		}
	}
}

// A cached parse keeps what the dialect layer recorded.
func TestDialectSurvivesParseCache(t *testing.T) {
	const text = "SELECT * EXCLUDE (b) REPLACE (a + 1 AS a) FROM t QUALIFY row_number() OVER () = 1 ORDER BY ALL LIMIT 5%"
	for i := 0; i < 3; i++ {
		q := parseQuery(t, text)
		star := q.Select.TargetList[0].GetResTarget().Val.GetColumnRef()
		if len(q.Dialect.Exclude(star)) != 1 || len(q.Dialect.Replace(star)) != 1 ||
			!q.Dialect.IsAll(q.Select.SortClause[0].GetSortBy().Node) || !q.Dialect.IsPercent(q.Select.LimitCount) {
			t.Fatalf("parse %d lost the dialect: %+v", i, q.Dialect)
		}
		if c := q.Dialect.Qualify(q.Select); c == nil || len(c.GetAExpr().Name) == 0 {
			t.Fatalf("parse %d: QUALIFY %v", i, c)
		}
	}
}

func TestFromFirst(t *testing.T) {
	const text = "SELECT 1; FROM t SELECT a, b + 1 WHERE c > 2 ORDER BY a"
	q := parseQuery(t, text)
	if len(q.Select.TargetList) != 2 || len(q.Select.FromClause) != 1 || q.Select.WhereClause == nil || len(q.Select.SortClause) != 1 {
		t.Fatalf("FROM-first read as %v", q.Select)
	}
	if got := int(q.Select.TargetList[1].GetResTarget().Location); got != strings.Index(text, "b + 1") {
		t.Errorf("second item at %d, want %d", got, strings.Index(text, "b + 1"))
	}
	if got := int(q.Select.FromClause[0].GetRangeVar().Location); got != strings.Index(text, "t SELECT") {
		t.Errorf("table at %d, want %d", got, strings.Index(text, "t SELECT"))
	}
	if got := int(q.Select.WhereClause.GetAExpr().Location); got != strings.Index(text, "> 2") {
		t.Errorf("WHERE's operator at %d, want %d", got, strings.Index(text, "> 2"))
	}
	if q.Text != text[10:] {
		t.Errorf("Text %q", q.Text)
	}

	q = parseQuery(t, "EXPLAIN FROM 'data/x.parquet' WHERE a = 1")
	if len(q.Select.TargetList) != 1 || q.Select.TargetList[0].GetResTarget().Val.GetColumnRef() == nil || !q.Explain {
		t.Fatalf("FROM without SELECT read as %v", q.Select)
	}
	if rv := q.Select.FromClause[0].GetRangeVar(); rv.Relname != "data/x.parquet" || !q.Paths[int(rv.Location)] {
		t.Errorf("path %q at %d, paths %v", rv.Relname, rv.Location, q.Paths)
	}

	// Errors point into the original text, before, inside and after the moved parts.
	for _, c := range []struct{ text, at string }{
		{"FROM t SELECT a, , b", ", b"},
		{"FROM t t2 t3 SELECT a", "t3"},
		{"FROM t SELECT a WHERE = 1", "= 1"},
		{"FROM t WHERE = 1", "= 1"},
		{"FROM t SELECT a ORDER BY", ""},
	} {
		_, err := Parse(c.text)
		e, ok := err.(*errs.Error)
		if !ok || e.Code != errs.Syntax {
			t.Errorf("Parse(%q) = %v, want a syntax error", c.text, err)
			continue
		}
		want := len(c.text)
		if c.at != "" {
			want = strings.Index(c.text, c.at)
		}
		if e.Pos != want {
			t.Errorf("Parse(%q) error at %d, want %d: %v", c.text, e.Pos, want, e)
		}
	}
}
