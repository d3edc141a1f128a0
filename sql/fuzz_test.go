package sql

import (
	"testing"

	"github.com/loredb/lore/errs"
)

var fuzzSeeds = []string{
	"SELECT 1",
	"select a, count(*) from t where b > 1 group by a order by 2 desc limit 10",
	"SELECT * FROM 'data/*.parquet' WHERE x = 'str'",
	"SELECT * FROM 'a.parquet' a JOIN 'b.parquet' b ON a.k = b.k, 'c.parquet'",
	"WITH x AS (SELECT 1 AS a) SELECT a FROM x UNION ALL SELECT 2",
	"EXPLAIN ANALYZE SELECT count(DISTINCT a) FROM t",
	"EXPLAIN (ANALYZE false) SELECT 1",
	"SELECT extract(year FROM '2020-01-01'::date), substring('abc' FROM 2)",
	"SELECT CASE WHEN a THEN 1 ELSE 2 END, a::int, CAST(b AS text) FROM t",
	"SELECT approx_percentile(x, ARRAY[0.5, 0.9]) FROM t",
	"SELECT row_number() OVER (PARTITION BY a ORDER BY b) FROM t",
	"VALUES (1, 'a'), (2, 'b')",
	"TABLE t",
	"(SELECT 1)",
	"INSERT INTO t VALUES (1)",
	"CREATE INDEX i ON t (a)",
	"CREATE TABLE IF NOT EXISTS s.\"T\" WITH (location = 'x', format = 'parquet', clustered_by = ARRAY['a','b'], bloom = ARRAY['c'])",
	"DROP TABLE IF EXISTS t",
	"ALTER TABLE t SET CLUSTERED BY (a, b)",
	"ALTER TABLE t SET CLUSTERED BY ()",
	"ALTER TABLE t SET BLOOM (c)",
	"SHOW TABLES; DESCRIBE t; DESC DETAIL t; SHOW CREATE TABLE t",
	"ANALYZE t WITH (sketches = true, distinct = true, columns = ARRAY['a'])",
	"SHOW STATS FOR t",
	"OPTIMIZE t WITH (target_file_mb = 128, ratio = -0.5e1) WHERE day >= DATE '2024-01-01' AND (k = 'x' OR n IN (1, 2))",
	"SET SESSION use_statistics = false; SET SESSION late_materialisation TO 'auto'; SELECT 1",
	"SET SESSION x = $$a$$",
	"SELECT 'é' fro t -- comment\n; /* c */",
	"SELECT 'abc",
	"SELECT 1 + ; SELECT 2",
	"CREATE TABLE t WITH (c = ARRAY['a', ])",
	"SELECT 1" + "+1+1+1+1+1+1+1+1",
}

// FuzzParse checks that Parse never panics (nor crashes the C parser), and that every
// error has a code and a position within the text or none.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		sts, err := Parse(text)
		if err != nil {
			if errs.CodeOf(err) == errs.Internal || errs.CodeOf(err) == "" {
				t.Fatalf("Parse(%q): error without a proper code: %v", text, err)
			}
			if p := errs.PositionOf(err); p != errs.NoPosition && (p < 0 || p > len(text)) {
				t.Fatalf("Parse(%q): error position %d outside [0, %d]: %v", text, p, len(text), err)
			}
			return
		}
		prevEnd := 0
		for _, st := range sts {
			s, e := st.Span()
			if s < prevEnd || s >= e || e > len(text) {
				t.Fatalf("Parse(%q): span [%d,%d) after %d", text, s, e, prevEnd)
			}
			prevEnd = e
			if q, ok := st.(*Query); ok && (q.Select == nil || q.Text != text[s:e]) {
				t.Fatalf("Parse(%q): query without a tree or with wrong text", text)
			}
		}
	})
}
