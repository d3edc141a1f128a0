package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/loredb/lore/gen"
)

// EventsConfig sizes the events suite's data.
type EventsConfig struct {
	Rows         int64
	Files        int
	RowGroupRows int
	// DataDir holds the cached data sets (one directory per size).
	DataDir string
}

// eventsQueries are the events suite: scans, filters, aggregates of low and high
// cardinality, a top-N and a point lookup over one wide table.
var eventsQueries = []Query{
	{Name: "count_star", SQL: "SELECT count(*) FROM events"},
	{Name: "min_max_ts", SQL: "SELECT min(ts), max(ts) FROM events"},
	{Name: "filter_agg", SQL: "SELECT count(*), sum(amount) FROM events WHERE ts >= TIMESTAMP '2024-03-20' AND status = 500"},
	{Name: "group_low_card", SQL: "SELECT category, count(*), avg(amount) FROM events GROUP BY category"},
	{Name: "group_high_card_top10", SQL: "SELECT user_id, count(*) FROM events GROUP BY user_id ORDER BY 2 DESC LIMIT 10",
		Order: Order{Keys: []int{1}, Limited: true}},
	{Name: "count_distinct", SQL: "SELECT count(DISTINCT user_id) FROM events"},
	{Name: "top_n", SQL: "SELECT * FROM events ORDER BY amount DESC LIMIT 10",
		Order: Order{Keys: []int{3}, Limited: true}},
	{Name: "point_lookup", SQL: "SELECT * FROM events WHERE user_id = 12345"},
	{Name: "date_trunc_hist", SQL: "SELECT date_trunc('day', ts) AS d, count(*) FROM events GROUP BY 1 ORDER BY 1",
		Order: Order{Keys: []int{0}}},
}

// statisticsQueries are answered by Lore from the statistics ANALYZE learnt (mode
// context), while DuckDB reads the files. DuckDB runs its own estimators for the
// timing; Lore's estimates are checked against the exact answer within their stated
// error: HyperLogLog's 1.6 % standard error, checked as 5 %; a quantile's 1.65 %
// rank error, checked as the values at the ranks p ± 0.0165.
var statisticsQueries = []Query{
	{Name: "count_star", SQL: "SELECT count(*) FROM events"},
	{Name: "min_max_ts", SQL: "SELECT min(ts), max(ts) FROM events"},
	{Name: "count_min_max", SQL: "SELECT count(*), count(amount), min(user_id), max(user_id), min(status), max(status) FROM events"},
	// Zone by zone: row groups after the day are answered from their partials, the
	// one the day starts in is read, the rest are skipped.
	{Name: "zone_filtered_agg", SQL: "SELECT count(*), min(amount), max(amount), sum(amount), avg(amount) FROM events WHERE ts >= TIMESTAMP '2024-03-20'"},
	// The same with the day where a file (and so a row group) starts: file k of n
	// holds the k-th n-th of the time range, and 2024-02-15 12:00 starts the second
	// half for any even number of files. Every row group is skipped or answered.
	{Name: "zone_aligned_agg", SQL: "SELECT count(*), min(amount), max(amount), sum(amount), avg(amount) FROM events WHERE ts >= TIMESTAMP '2024-02-15 12:00:00'"},
	{Name: "approx_distinct_users", SQL: "SELECT approx_count_distinct(user_id) FROM events", Tolerance: 0.05,
		Truth: "SELECT count(DISTINCT user_id) FROM events"},
	{Name: "approx_p99_latency", SQL: "SELECT approx_percentile(latency_ms, 0.99) FROM events",
		DuckSQL: "SELECT approx_quantile(latency_ms, 0.99) FROM events", Interval: true,
		Truth: "SELECT quantile_disc(latency_ms, 0.99 - 0.0165), quantile_disc(latency_ms, least(0.99 + 0.0165, 1.0)) FROM events"},
}

// StatisticsSuite measures answers from statistics: the events data, learnt once by
// ANALYZE … WITH (sketches = true), queried with use_statistics = true.
func StatisticsSuite(ctx context.Context, cfg EventsConfig, progress io.Writer) (*Suite, error) {
	s, err := EventsSuite(ctx, cfg, progress)
	if err != nil {
		return nil, err
	}
	s.Name = "statistics"
	s.Queries = statisticsQueries
	s.Setup = []string{"ANALYZE events WITH (sketches = true)"}
	s.LoreSettings = map[string]string{"use_statistics": "true"}
	s.Data.Description += ", answered from statistics"
	return s, nil
}

// EventsSuite returns the events suite, generating its data first when the cache
// under cfg.DataDir does not hold it.
func EventsSuite(ctx context.Context, cfg EventsConfig, progress io.Writer) (*Suite, error) {
	dir := filepath.Join(cfg.DataDir, fmt.Sprintf("events-%d-%d", cfg.Rows, cfg.Files))
	if cfg.RowGroupRows > 0 {
		dir += fmt.Sprintf("-rg%d", cfg.RowGroupRows)
	}
	err := ensureData(dir, progress, func(out string, report func(done, total int64)) error {
		return gen.Events(ctx, gen.EventsOptions{Rows: cfg.Rows, Files: cfg.Files, Out: out,
			ClusteredBy: "ts", Seed: 1, RowGroupRows: cfg.RowGroupRows, Progress: report})
	})
	if err != nil {
		return nil, fmt.Errorf("cannot generate the events data: %w", err)
	}
	info, err := dataInfo(dir)
	if err != nil {
		return nil, err
	}
	info.Rows = cfg.Rows
	info.Description = fmt.Sprintf("events, %d rows clustered by ts", cfg.Rows)
	return &Suite{Name: "events", Tables: []Table{{Name: "events", Dir: dir}}, Queries: eventsQueries, Data: info}, nil
}

// completeMarker marks a data directory whose generation finished. Lore and the
// harness's listing skip names starting with ".".
const completeMarker = ".complete"

// ensureData runs generate into dir unless dir holds a finished data set. A
// partial directory (an interrupted run) is generated again from scratch.
func ensureData(dir string, progress io.Writer, generate func(out string, report func(done, total int64)) error) error {
	if _, err := os.Stat(filepath.Join(dir, completeMarker)); err == nil {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if progress == nil {
		progress = io.Discard
	}
	fmt.Fprintf(progress, "generating %s ...\n", dir)
	start := time.Now()
	last := time.Now()
	report := func(done, total int64) {
		if time.Since(last) >= 5*time.Second {
			last = time.Now()
			fmt.Fprintf(progress, "  %d / %d\n", done, total)
		}
	}
	if err := generate(dir, report); err != nil {
		return err
	}
	fmt.Fprintf(progress, "generated %s in %s\n", dir, time.Since(start).Round(time.Millisecond))
	return os.WriteFile(filepath.Join(dir, completeMarker), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644)
}

// dataInfo counts the Parquet files under dir and their bytes.
func dataInfo(dir string) (DataInfo, error) {
	// The walk does not follow a link at its root: a data set linked into the
	// cache is counted where the link points.
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return DataInfo{}, err
	}
	files, err := parquetFiles(root)
	if err != nil {
		return DataInfo{}, err
	}
	info := DataInfo{Dir: dir, Files: len(files)}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return DataInfo{}, err
		}
		info.Bytes += st.Size()
	}
	return info, nil
}
