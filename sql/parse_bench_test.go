package sql

import (
	"strings"
	"testing"
)

// BenchmarkParse parses texts, from scratch and (kind=query,cached) from the cache of
// recent queries.
func BenchmarkParse(b *testing.B) {
	cases := []struct{ name, text string }{
		{"kind=query", "SELECT a, count(*) FROM 'data/*.parquet' WHERE b > 1 AND c IN ('x', 'y') GROUP BY a ORDER BY 2 DESC LIMIT 10"},
		{"kind=lore", "CREATE TABLE IF NOT EXISTS t WITH (location = 'data/t', format = 'parquet', clustered_by = ARRAY['a', 'b'])"},
		{"kind=optimize", "OPTIMIZE t WITH (target_file_mb = 128) WHERE day >= DATE '2024-01-01'"},
		{"kind=script,statements=1000", strings.Repeat("SET SESSION use_statistics = false; SELECT a + 1 FROM t WHERE b = 'x';\n", 500)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				if _, err := parse(c.text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("kind=query,cached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Parse(cases[0].text); err != nil {
				b.Fatal(err)
			}
		}
	})
}
