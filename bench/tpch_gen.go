package main

import (
	"context"

	"github.com/loredb/lore/gen"
)

// generateTPCH writes the eight TPC-H tables at scale factor sf under out/<table>/.
func generateTPCH(ctx context.Context, sf float64, files int, out string, report func(done, total int64)) error {
	return gen.TPCH(ctx, gen.TPCHOptions{SF: sf, Out: out, Files: files, Progress: report})
}
