package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
)

// ScanEstimate is what one scan of a plan would read, worked out without reading
// data (a dry run): its planning counters (files pruned, skipped and whose footers
// were opened, row groups considered, pruned and answered) and what is left to read.
type ScanEstimate struct {
	Node *plan.Scan
	source.Snapshot
	// Files is how many files have a row group left to read.
	Files int64
	// RowGroups, Rows and Bytes are the row groups left to read, their rows and the
	// compressed bytes of the column chunks the scan reads of them.
	RowGroups, Rows, Bytes int64
}

// Estimate plans every scan of n (of subqueries, WITH plans read more than once and
// recursive queries too), as Run would, and says what each
// would read: from the statistics record and the files' footers, never their data.
// The figures are an upper bound: the page index, bloom filters, dynamic bounds and
// predicates computed while the statement runs (a subquery's value) may read less.
func Estimate(ctx context.Context, env *Env, n plan.Node) ([]ScanEstimate, error) {
	var scans []*plan.Scan
	plan.WalkNodes(n, func(n plan.Node) {
		if s, ok := n.(*plan.Scan); ok {
			scans = append(scans, s)
		}
	})
	out := make([]ScanEstimate, 0, len(scans))
	for _, s := range scans {
		est, err := estimateScan(ctx, env, s)
		if err != nil {
			return nil, err
		}
		out = append(out, est)
	}
	return out, nil
}

func estimateScan(ctx context.Context, env *Env, s *plan.Scan) (ScanEstimate, error) {
	var c source.Counters
	names, _ := scanColumns(s)
	sp, err := planScan(ctx, env, s, names, s.Filters, &c)
	if err != nil {
		return ScanEstimate{}, err
	}
	est := ScanEstimate{Node: s, Snapshot: c.Snapshot()}
	files := map[int]bool{}
	for _, m := range sp.Morsels {
		files[m.File] = true
		est.RowGroups++
		est.Rows += m.Rows
		est.Bytes += sp.ChunkBytes(m)
	}
	est.Files = int64(len(files))
	return est, nil
}

// ResultBytes is what a result's records hold in memory as max_result_bytes counts
// it: the values of its columns (dictionaries expanded), offsets and validity bits,
// as the statement's own result was counted while it was built.
func ResultBytes(recs []arrow.Record) int64 {
	var n int64
	for _, r := range recs {
		for _, c := range r.Columns() {
			n += heldSize(c)
		}
	}
	return n
}
