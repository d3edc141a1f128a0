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
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/types"
)

// runQuery binds, optimizes and runs a SELECT (or explains it).
func (e *Engine) runQuery(ctx context.Context, q *sql.Query, s *settingsValues, rec *Record) (*Result, error) {
	node, err := plan.Bind(ctx, catalogView{e}, q.Select, plan.BindOptions{Paths: q.Paths, Approximate: s.Approximate})
	if err != nil {
		return nil, err
	}
	rec.Execution.Approximate = approximations(node)
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

// approximations labels every estimate a plan computes (SPEC §7): the sketch and its
// stated error, whether the estimate is computed over rows or read from statistics.
func approximations(n plan.Node) []Approximation {
	var out []Approximation
	var walk func(plan.Node)
	walk = func(n plan.Node) {
		if a, ok := n.(*plan.Aggregate); ok {
			cols := a.Input.Columns()
			name := func(i int) string { return cols[i].Name }
			for _, c := range a.Aggs {
				fn := strings.ToUpper(c.Func)
				if c.Written != "" {
					fn = strings.ToUpper(c.Written)
				}
				switch c.Func {
				case "approx_count_distinct":
					out = append(out, Approximation{Function: fn, Argument: plan.Render(c.Arg, name),
						Sketch: "hyperloglog p=12", Error: stats.HLLRelativeError, ErrorKind: "relative_standard_error"})
				case "approx_percentile":
					out = append(out, Approximation{Function: fn, Argument: plan.Render(c.Arg, name),
						Sketch: "kll k=200", Error: stats.KLLRankError, ErrorKind: "rank_error"})
				}
			}
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
		plan.ForEachSubquery(n, walk)
	}
	walk(n)
	return out
}
