package sql

import (
	"strconv"
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

// BenchmarkParseLong parses long flat statements at two sizes: the time per term
// should not grow with the size.
func BenchmarkParseLong(b *testing.B) {
	for _, n := range []int{1450, 2900} {
		text := "SELECT " + strings.TrimSuffix(strings.Repeat("1+", n), "+")
		b.Run("kind=plus,terms="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parse(text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, n := range []int{25000, 50000} {
		var sb strings.Builder
		sb.WriteString("SELECT count(*) FROM t WHERE x <> 0")
		for i := 1; i < n; i++ {
			sb.WriteString(" AND x <> " + strconv.Itoa(i))
		}
		text := sb.String()
		b.Run("kind=and,terms="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parse(text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
