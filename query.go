package lore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/plan/rules"
	"github.com/loredb/lore/sql"
	"github.com/loredb/lore/types"
)

// runQuery binds, optimizes and runs a SELECT (or explains it).
func (e *Engine) runQuery(ctx context.Context, q *sql.Query, s *settingsValues, rec *Record) (*Result, error) {
	node, err := plan.Bind(ctx, catalogView{e}, q.Select, q.Paths)
	if err != nil {
		return nil, err
	}
	node = rules.Optimize(node)
	env := &exec.Env{Budget: e.budget, Threads: e.opts.Threads, Store: e.store}
	if q.Explain && !q.Analyze {
		return explainResult(plan.Explain(node, nil)), nil
	}
	start := time.Now()
	recs, err := exec.Run(ctx, env, node)
	rec.Scans = scanRecords(env)
	if err != nil {
		return nil, err
	}
	if q.Explain {
		counters := map[*plan.Scan]string{}
		for _, sc := range env.Scans {
			c := sc.Counters.Snapshot()
			counters[sc.Node] = fmt.Sprintf("files_opened=%d row_groups: considered=%d pruned=%d read=%d rows_scanned=%d compressed_bytes_read=%d",
				c.FilesOpened, c.RowGroupsConsidered, c.RowGroupsPruned, c.RowGroupsRead, c.RowsScanned, c.CompressedBytesRead)
		}
		text := plan.Explain(node, counters)
		text += fmt.Sprintf("\nexecution: %.3f ms, %d rows", float64(time.Since(start).Microseconds())/1000, countRows(recs))
		return explainResult(text), nil
	}
	return &Result{Schema: plan.Schema(node), Batches: recs}, nil
}

func countRows(recs []arrow.Record) int64 {
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	return n
}

func explainResult(text string) *Result {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	rows := make([][]types.Value, len(lines))
	for i, l := range lines {
		rows[i] = []types.Value{types.StringValue(l)}
	}
	return valuesResult([]arrow.Field{{Name: "plan", Type: types.String}}, rows)
}
