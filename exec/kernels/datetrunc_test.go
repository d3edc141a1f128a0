package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/types"
)

// date_trunc of timestamps to a constant part of a day or less (one loop of floor
// divisions) gives what the general loop gives, before 1970, at the infinities and
// with NULLs; the general loop is the one a batch of differently spelled parts takes.
func TestDateTruncFixedWidthParts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 3000
	for _, unit := range []arrow.TimeUnit{arrow.Microsecond, arrow.Nanosecond, arrow.Millisecond} {
		dt := &arrow.TimestampType{Unit: unit}
		b := array.NewTimestampBuilder(memory.DefaultAllocator, dt)
		for i := range n {
			switch {
			case i%97 == 0:
				b.AppendNull()
			case i == 5:
				b.Append(arrow.Timestamp(types.TimestampInfinity))
			case i == 6:
				b.Append(arrow.Timestamp(-types.TimestampInfinity))
			default:
				b.Append(arrow.Timestamp(r.Int64N(1<<52) - 1<<51))
			}
		}
		ts := b.NewArray()
		for _, part := range []string{"day", "hour", "minute", "second", "millisecond", "microsecond"} {
			for _, res := range []arrow.DataType{dt, types.Date} {
				if res == types.Date && part != "day" {
					continue
				}
				same := make([]any, n)
				mixed := make([]any, n)
				for i := range n {
					same[i], mixed[i] = part, part
				}
				mixed[1] = "  " + part // spelled otherwise: not a constant, the general loop
				fast, err := dateTrunc(res)([]arrow.Array{mk(t, types.String, same...), ts}, n)
				if err != nil {
					t.Fatal(err)
				}
				general, err := dateTrunc(res)([]arrow.Array{mk(t, types.String, mixed...), ts}, n)
				if err != nil {
					t.Fatalf("%s: %v", part, err)
				}
				if joined(fast) != joined(general) {
					t.Errorf("%s date_trunc(%s) into %s: the constant part's loop differs from the general one", unit, part, types.Name(res))
				}
			}
		}
	}
}
