package flight_test

import (
	"testing"

	loreflight "github.com/loredb/lore/server/flight"
)

// BenchmarkFlightContextAnswer is a statement answered from statistics (SELECT
// count(*) after ANALYZE) over Flight SQL on loopback: GetFlightInfo then DoGet, one
// client, one connection.
func BenchmarkFlightContextAnswer(b *testing.B) {
	f := newFixture(b, loreflight.Options{})
	if _, err := f.client.ExecuteUpdate(as(f.admin), "ANALYZE ev"); err != nil {
		b.Fatal(err)
	}
	ctx := as(f.reader)
	b.ReportAllocs()
	for b.Loop() {
		info, err := f.client.Execute(ctx, "SELECT count(*) FROM ev")
		if err != nil {
			b.Fatal(err)
		}
		if n, err := readAll(f.client, ctx, info.Endpoint[0].Ticket); err != nil || n != 1 {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkFlightStream1M streams a million BIGINT rows (8 MB of values) from
// range(), the result cache off so that each one runs: the figure includes running
// the statement, which materialises it, and the client's decoding.
func BenchmarkFlightStream1M(b *testing.B) {
	f := newFixture(b, loreflight.Options{})
	ctx := as(f.reader)
	b.SetBytes(8 * 1_000_000)
	b.ReportAllocs()
	for b.Loop() {
		info, err := f.client.Execute(ctx, "SET SESSION result_cache = false; SELECT * FROM range(1000000)")
		if err != nil {
			b.Fatal(err)
		}
		if n, err := readAll(f.client, ctx, info.Endpoint[0].Ticket); err != nil || n != 1_000_000 {
			b.Fatal(n, err)
		}
	}
}
