package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage/s3"
	"github.com/loredb/lore/storage/s3/s3test"
)

// StoreConfig shapes the object store the store comparison reads through: the
// loopback S3 server of storage/s3/s3test, with an optional delay before every
// request (loopback answers at once; a real store's round trip is tens of
// milliseconds) and the reader's tuning (zero takes Lore's defaults).
type StoreConfig struct {
	Latency time.Duration
	// Bandwidth bounds each response's transfer, in bytes per second (0: none).
	Bandwidth int64
	Coalesce  int64
	Part      int64
	Parallel  int
	// CacheBytes bounds the warm engine's disk cache.
	CacheBytes int64
	// Warm also measures warm runs; without it only cold ones are made.
	Warm bool
}

// storeBucket is the bucket the tables are uploaded to.
const storeBucket = "lore-bench"

// StoreResult is one query read from local disk and from the store, cold and warm.
type StoreResult struct {
	Name string `json:"name"`
	// Cold runs: a fresh engine each, with no footer cached in the process.
	LocalCold Run `json:"local_cold"`
	S3Cold    Run `json:"s3_cold"`
	// Warm runs: one engine each for the whole suite, footers cached, and the
	// store's engine with its disk cache filled by the warm-up.
	LocalWarm Run         `json:"local_warm"`
	S3Warm    Run         `json:"s3_warm"`
	ColdRatio float64     `json:"cold_ratio,omitempty"` // S3Cold / LocalCold
	WarmRatio float64     `json:"warm_ratio,omitempty"` // S3Warm / LocalWarm
	ColdReqs  s3.Requests `json:"cold_requests"`        // of one cold run (the last)
	WarmReqs  s3.Requests `json:"warm_requests"`        // of one warm run (the last)
	Equal     *bool       `json:"equal"`
	Diff      string      `json:"diff,omitempty"`
}

// StoreReport is what --json receives in the store comparison.
type StoreReport struct {
	Machine     Machine       `json:"machine"`
	Config      StoreConfig   `json:"config"`
	Data        DataInfo      `json:"data"`
	Queries     []StoreResult `json:"queries"`
	ColdGeoMean float64       `json:"cold_geomean"`
	WarmGeoMean float64       `json:"warm_geomean,omitempty"`
}

// CompareStore runs every query of s through Lore over the same Parquet files on
// local disk and in an S3 store: the in-process loopback server (real HTTP, the
// SDK's client), the files uploaded once. Per query, cold rounds first — each run a
// fresh engine with the process's footer cache dropped, local and S3 alternating —
// then warm rounds on two engines kept for the suite (the S3 one with a disk cache),
// after one warm-up each. The S3 answers are compared with the local ones. The
// medians, S3/local ratios, their geometric means and the requests of a run are
// written to w.
func CompareStore(ctx context.Context, cfg Config, s *Suite, sc StoreConfig, w io.Writer) (*StoreReport, error) {
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	srv, err := s3test.Serve(storeBucket)
	if err != nil {
		return nil, fmt.Errorf("cannot start the S3 server: %w", err)
	}
	defer srv.Close()
	local := make([]Table, len(s.Tables))
	remote := make([]Table, len(s.Tables))
	start := time.Now()
	for i, t := range s.Tables {
		if t.Lake != "" {
			return nil, fmt.Errorf("table %s: the store comparison reads Parquet only", t.Name)
		}
		url := "s3://" + storeBucket + "/" + t.Name
		if _, err := srv.Store().PutDir(ctx, t.Dir, url); err != nil {
			return nil, fmt.Errorf("cannot upload %s: %w", t.Name, err)
		}
		local[i] = Table{Name: t.Name, Dir: t.Dir}
		remote[i] = Table{Name: t.Name, Dir: url}
	}
	fmt.Fprintf(progress, "uploaded %d tables to %s in %s\n", len(s.Tables), srv.URL, time.Since(start).Round(time.Millisecond))

	s3cfg := srv.Config()
	s3cfg.Coalesce, s3cfg.Part, s3cfg.Parallel = sc.Coalesce, sc.Part, sc.Parallel
	if sc.Latency > 0 {
		s3cfg.Transport = s3test.Delay(nil, sc.Latency)
	}
	if sc.Bandwidth > 0 {
		s3cfg.Transport = s3test.Throttle(s3cfg.Transport, sc.Bandwidth)
	}
	open := func(tables []Table, cacheBytes int64) (*loreEngine, func(), error) {
		home, err := os.MkdirTemp("", "lore-bench-home-")
		if err != nil {
			return nil, nil, err
		}
		c := s3cfg
		e, err := openLoreWith(ctx, lore.Options{Home: home, Threads: cfg.Threads, S3: &c, CacheBytes: cacheBytes},
			cfg.LoreSettings, tables)
		if err != nil {
			os.RemoveAll(home)
			return nil, nil, err
		}
		return e, func() { e.close(); os.RemoveAll(home) }, nil
	}
	// cold runs q once on a fresh engine with no footer cached.
	cold := func(tables []Table, q Query, keep bool, r *Run, reqs *s3.Requests) ([][]string, error) {
		e, done, err := open(tables, 0)
		if err != nil {
			return nil, err
		}
		defer done()
		source.DropCachedFooters()
		before := e.eng.S3Requests()
		rows, err := timedRun(ctx, cfg, e, q.SQL, keep, true, r)
		*reqs = e.eng.S3Requests().Sub(before)
		return rows, err
	}
	var warmLocal, warmS3 *loreEngine
	if sc.Warm {
		var doneL, doneS func()
		if warmLocal, doneL, err = open(local, 0); err != nil {
			return nil, err
		}
		defer doneL()
		if warmS3, doneS, err = open(remote, sc.CacheBytes); err != nil {
			return nil, err
		}
		defer doneS()
	}

	rep := &StoreReport{Config: sc, Data: s.Data}
	for _, q := range s.Queries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "%s/%s ...", s.Name, q.Name)
		r := StoreResult{Name: q.Name}
		var ignored s3.Requests
		lRows, lErr := cold(local, q, true, &r.LocalCold, &ignored)
		sRows, sErr := cold(remote, q, true, &r.S3Cold, &r.ColdReqs)
		if lErr == nil && sErr == nil {
			eq, diff := compareResults(sRows, lRows, q.Order, 0)
			r.Equal, r.Diff = &eq, diff
		}
		// The first runs were warm-ups of the file system and the server.
		r.LocalCold.TimesMS, r.S3Cold.TimesMS = nil, nil
		for range cfg.Rounds {
			if r.LocalCold.OK() {
				cold(local, q, false, &r.LocalCold, &ignored)
			}
			if r.S3Cold.OK() {
				cold(remote, q, false, &r.S3Cold, &r.ColdReqs)
			}
		}
		if sc.Warm {
			timedRun(ctx, cfg, warmLocal, q.SQL, false, true, &r.LocalWarm)
			timedRun(ctx, cfg, warmS3, q.SQL, false, true, &r.S3Warm)
			r.LocalWarm.TimesMS, r.S3Warm.TimesMS = nil, nil
			for range cfg.Rounds {
				if r.LocalWarm.OK() {
					timedRun(ctx, cfg, warmLocal, q.SQL, false, true, &r.LocalWarm)
				}
				if r.S3Warm.OK() {
					before := warmS3.eng.S3Requests()
					timedRun(ctx, cfg, warmS3, q.SQL, false, true, &r.S3Warm)
					r.WarmReqs = warmS3.eng.S3Requests().Sub(before)
				}
			}
		}
		for _, run := range []*Run{&r.LocalCold, &r.S3Cold, &r.LocalWarm, &r.S3Warm} {
			if run.OK() && len(run.TimesMS) > 0 {
				run.MedianMS = median(run.TimesMS)
			}
		}
		r.ColdRatio = ratioOf(&r.S3Cold, &r.LocalCold)
		r.WarmRatio = ratioOf(&r.S3Warm, &r.LocalWarm)
		fmt.Fprintf(progress, " cold local %s, s3 %s (%d requests); warm local %s, s3 %s (%d requests)\n",
			fmtRun(&r.LocalCold), fmtRun(&r.S3Cold), r.ColdReqs.Total(), fmtRun(&r.LocalWarm), fmtRun(&r.S3Warm), r.WarmReqs.Total())
		rep.Queries = append(rep.Queries, r)
	}
	if cfg.CPUProfile != "" {
		// Cold runs from S3, for each query whose cold runs succeeded: what reading
		// from a store adds shows beside the decoding every read does.
		if err := profileRuns(cfg.CPUProfile, cfg.Rounds, s.Queries, func(i int) bool { return rep.Queries[i].S3Cold.OK() }, func(q Query) error {
			var r Run
			var reqs s3.Requests
			_, err := cold(remote, q, false, &r, &reqs)
			return err
		}); err != nil {
			return nil, err
		}
	}
	rep.ColdGeoMean = geoMean(rep.Queries, func(r StoreResult) float64 { return r.ColdRatio })
	if sc.Warm {
		rep.WarmGeoMean = geoMean(rep.Queries, func(r StoreResult) float64 { return r.WarmRatio })
	}
	writeStoreTable(w, s, sc, rep)
	return rep, nil
}

// ratioOf is a's median over b's, or 0 when either failed or was not run.
func ratioOf(a, b *Run) float64 {
	if !a.OK() || !b.OK() || a.MedianMS <= 0 || b.MedianMS <= 0 {
		return 0
	}
	return a.MedianMS / b.MedianMS
}

// geoMean is the geometric mean of the positive ratios.
func geoMean(rs []StoreResult, ratio func(StoreResult) float64) float64 {
	var sum float64
	n := 0
	for _, r := range rs {
		if x := ratio(r); x > 0 {
			sum += math.Log(x)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return math.Exp(sum / float64(n))
}

func writeStoreTable(w io.Writer, s *Suite, sc StoreConfig, rep *StoreReport) {
	d := s.Data
	network := "as fast as loopback"
	if sc.Latency > 0 {
		network = sc.Latency.String() + " added to each request"
	}
	if sc.Bandwidth > 0 {
		network += fmt.Sprintf(", each response at most %s/s", bytesText(sc.Bandwidth))
	}
	fmt.Fprintf(w, "\nsuite %s, Lore reading from S3 (loopback server, %s; coalesce %d, part %d, parallel %d, 0 = default) against local disk: %s, %d files, %s (%s)\n\n",
		s.Name, network, sc.Coalesce, sc.Part, sc.Parallel, d.Description, d.Files, bytesText(d.Bytes), d.Dir)
	head := []string{"query", "local cold ms", "s3 cold ms", "s3/local cold", "requests", "read"}
	if sc.Warm {
		head = append(head, "local warm ms", "s3 warm ms", "s3/local warm", "requests")
	}
	head = append(head, "equal")
	var body [][]string
	for _, r := range rep.Queries {
		row := []string{r.Name, msText(&r.LocalCold), msText(&r.S3Cold), ratioCell(r.ColdRatio),
			fmt.Sprint(r.ColdReqs.Total()), bytesText(r.ColdReqs.Bytes)}
		if sc.Warm {
			row = append(row, msText(&r.LocalWarm), msText(&r.S3Warm), ratioCell(r.WarmRatio), fmt.Sprint(r.WarmReqs.Total()))
		}
		eq := "-"
		if r.Equal != nil {
			eq = map[bool]string{true: "yes", false: "NO"}[*r.Equal]
		}
		body = append(body, append(row, eq))
	}
	writeAligned(w, head, body)
	fmt.Fprintf(w, "\ngeometric mean of s3/local, cold: %s", ratioCell(rep.ColdGeoMean))
	if sc.Warm {
		fmt.Fprintf(w, "; warm: %s", ratioCell(rep.WarmGeoMean))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "requests: of one run (lists, heads and ranged gets); read: the bytes those gets returned")
	for _, r := range rep.Queries {
		if r.Diff != "" {
			fmt.Fprintf(w, "%s: %s\n", r.Name, r.Diff)
		}
		for _, x := range []struct {
			what string
			run  *Run
		}{{"local cold", &r.LocalCold}, {"s3 cold", &r.S3Cold}, {"local warm", &r.LocalWarm}, {"s3 warm", &r.S3Warm}} {
			if x.run.Error != "" {
				fmt.Fprintf(w, "  %s failed on %s: %s\n", r.Name, x.what, x.run.Error)
			}
		}
	}
}

func ratioCell(r float64) string {
	if r <= 0 {
		return "-"
	}
	return ratioText(r)
}

// writeStoreJSON writes the report to path.
func writeStoreJSON(path string, rep *StoreReport) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Clean(path), append(b, '\n'), 0o644)
}
