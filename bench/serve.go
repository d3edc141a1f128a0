package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/server"
)

// ServeConfig shapes the load test of the query server (--suite serve): Clients
// concurrent clients send a mix of requests to one server on loopback for
// Duration, or until Requests have been sent (whichever comes first; 0: no bound).
type ServeConfig struct {
	Clients  int
	Duration time.Duration
	Requests int64
	// Mix names the request kinds and their weights ("context=60,cache=15,…");
	// empty: the default mix.
	Mix string
	// Rate, when positive, paces the clients to this many requests a second in all
	// (open loop: latency at that offered load); 0 sends as fast as answers come
	// (closed loop: throughput at saturation, latency then is mostly queueing).
	Rate float64
	// MaxRunning and MaxQueued are the server's admission limits (0: defaults).
	MaxRunning, MaxQueued int
	// CPUProfile, when set, is where a CPU profile of the process during the load
	// (server and clients) is written.
	CPUProfile string `json:"-"`
}

// serveKind is one kind of request the load test sends.
type serveKind struct {
	name   string
	weight int
	// send makes one request of the kind by client c (its sequence number n) and
	// returns its outcome.
	send func(ctx context.Context, l *loadTest, c, n int) outcome
}

// outcome is what one request came to: an HTTP status, and the error code of a
// failure (empty on success); lost is set when the response was neither a result
// nor a coded error.
type outcome struct {
	status int
	code   string
	mode   string
	lost   string
	// ids are the query ids of the statements the request sent.
	ids []string
	// next is a paged result's next_uri; pages counts the pages read after the first.
	next  string
	pages int
}

// defaultServeMix is the default mix: mostly answers from statistics, as a
// dashboard sends them, with a share of everything else a server sees.
const defaultServeMix = "context=60,cache=12,zones=10,scan=6,large=2,analyze=1,ddl=2,cancel=2,version=5"

// loadTest is one run of the load test.
type loadTest struct {
	url           string
	dir           string // the events table's location
	admin, reader string
	client        *http.Client
}

// ServeKindResult is one request kind's figures.
type ServeKindResult struct {
	Kind       string         `json:"kind"`
	Requests   int64          `json:"requests"`
	PerSecond  float64        `json:"per_second"`
	P50MS      float64        `json:"p50_ms"`
	P99MS      float64        `json:"p99_ms"`
	MaxMS      float64        `json:"max_ms"`
	Statuses   map[int]int64  `json:"statuses"`
	Codes      map[string]int `json:"codes,omitempty"`
	Modes      map[string]int `json:"modes,omitempty"`
	Lost       int64          `json:"lost"`
	LostSample string         `json:"lost_sample,omitempty"`
}

// ServeReport is the load test's result.
type ServeReport struct {
	Machine         Machine           `json:"machine"`
	Config          ServeConfig       `json:"config"`
	Data            DataInfo          `json:"data"`
	Seconds         float64           `json:"seconds"`
	Requests        int64             `json:"requests"`
	PerSecond       float64           `json:"per_second"`
	Kinds           []ServeKindResult `json:"kinds"`
	Lost            int64             `json:"lost"`
	MissingFromLog  int               `json:"missing_from_log"`
	CatalogOK       bool              `json:"catalog_ok"`
	GoroutinesAfter int               `json:"goroutines_growth"`
	HeapGrowthMiB   float64           `json:"heap_growth_mib"`
}

// RunServe runs the load test over the events data of ev and writes its report.
func RunServe(ctx context.Context, ev EventsConfig, cfg ServeConfig, machine Machine, stdout, progress io.Writer) (*ServeReport, error) {
	suite, err := EventsSuite(ctx, ev, progress)
	if err != nil {
		return nil, err
	}
	kinds, err := serveMix(cfg.Mix)
	if err != nil {
		return nil, err
	}
	home, err := os.MkdirTemp("", "lore-serve-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	tokensPath := filepath.Join(home, "tokens")
	l := &loadTest{client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Clients, MaxConnsPerHost: cfg.Clients}}}
	if l.admin, err = server.AddToken(tokensPath, lore.Principal{Name: "admin", Role: lore.RoleAdmin}); err != nil {
		return nil, err
	}
	if l.reader, err = server.AddToken(tokensPath, lore.Principal{Name: "dashboards", Role: lore.RoleReader}); err != nil {
		return nil, err
	}
	tokens, err := server.LoadTokens(tokensPath)
	if err != nil {
		return nil, err
	}
	eng, err := lore.Open(ctx, lore.Options{Home: home, MaxRunning: cfg.MaxRunning, MaxQueued: cfg.MaxQueued})
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	// Idle statement workers end soon after the run, so that the goroutine count
	// after it says whether anything leaked.
	srv, err := server.New(server.Options{Engine: eng, Tokens: tokens, WorkerIdle: time.Second})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	l.url = "http://" + ln.Addr().String()

	l.dir = suite.Tables[0].Dir
	for _, st := range []string{
		fmt.Sprintf("CREATE TABLE events WITH (location = '%s', format = 'parquet')", l.dir),
		"ANALYZE events WITH (sketches = true)",
	} {
		if o := l.statement(ctx, l.admin, st, nil, ""); o.status != http.StatusOK {
			return nil, fmt.Errorf("setup %q: status %d %s %s", st, o.status, o.code, o.lost)
		}
	}
	// Warm: footers cached, the cache holds the cache kind's result.
	for _, k := range kinds {
		if k.name == "context" || k.name == "cache" || k.name == "zones" {
			k.send(ctx, l, 0, 0)
		}
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()

	pace := "as fast as answers come"
	if cfg.Rate > 0 {
		pace = fmt.Sprintf("%.0f requests/s in all", cfg.Rate)
	}
	fmt.Fprintf(progress, "serve: %d clients for %s, %s (mix %s)\n", cfg.Clients, cfg.Duration, pace, mixText(kinds))
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
	}
	results, ids, elapsed := l.drive(ctx, cfg, kinds)
	if cfg.CPUProfile != "" {
		pprof.StopCPUProfile()
	}

	rep := &ServeReport{Machine: machine, Config: cfg, Data: suite.Data, Seconds: elapsed.Seconds()}
	for _, r := range results {
		rep.Requests += r.Requests
		rep.Lost += r.Lost
		r.PerSecond = float64(r.Requests) / elapsed.Seconds()
		rep.Kinds = append(rep.Kinds, r)
	}
	rep.PerSecond = float64(rep.Requests) / elapsed.Seconds()

	// Nothing lost: every statement sent is in the query log.
	logged, err := eng.Catalog().RecentQueries(ctx, 0)
	if err != nil {
		return nil, err
	}
	inLog := make(map[string]bool, len(logged))
	for _, e := range logged {
		inLog[e.ID] = true
	}
	for _, id := range ids {
		if !inLog[id] {
			rep.MissingFromLog++
		}
	}
	rep.CatalogOK = eng.Catalog().IntegrityCheck(ctx) == nil
	l.client.CloseIdleConnections()
	// The server's connection goroutines end at once, its idle statement workers
	// within their idle time: wait for them, up to 20 s.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && runtime.NumGoroutine() > goroutines; {
		time.Sleep(250 * time.Millisecond)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	rep.GoroutinesAfter = runtime.NumGoroutine() - goroutines
	rep.HeapGrowthMiB = (float64(after.HeapInuse) - float64(before.HeapInuse)) / (1 << 20)
	writeServe(stdout, rep)
	return rep, nil
}

// drive runs the clients and gathers each kind's latencies.
func (l *loadTest) drive(ctx context.Context, cfg ServeConfig, kinds []serveKind) ([]ServeKindResult, []string, time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	type sample struct {
		kind int
		ms   float64
		o    outcome
	}
	var sent atomic.Int64
	perClient := make([][]sample, cfg.Clients)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range cfg.Clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			var every time.Duration
			if cfg.Rate > 0 {
				every = time.Duration(float64(time.Second) * float64(cfg.Clients) / cfg.Rate)
			}
			next := start.Add(time.Duration(rng.Int64N(int64(every) + 1)))
			for n := 0; ctx.Err() == nil; n++ {
				if cfg.Requests > 0 && sent.Add(1) > cfg.Requests {
					return
				}
				if every > 0 {
					// The client's next request is due at next; one that is late
					// goes at once (its schedule is not caught up with a burst).
					if d := time.Until(next); d > 0 {
						select {
						case <-time.After(d):
						case <-ctx.Done():
							return
						}
					}
					if next = next.Add(every); next.Before(time.Now()) {
						next = time.Now()
					}
				}
				pick := rng.IntN(total)
				i := 0
				for pick >= kinds[i].weight {
					pick -= kinds[i].weight
					i++
				}
				t0 := time.Now()
				o := kinds[i].send(ctx, l, c, n)
				if ctx.Err() != nil && o.lost != "" {
					return // cut by the end of the run, not lost
				}
				perClient[c] = append(perClient[c], sample{i, float64(time.Since(t0).Microseconds()) / 1000, o})
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	var ids []string
	lat := make([][]float64, len(kinds))
	out := make([]ServeKindResult, len(kinds))
	for i, k := range kinds {
		out[i] = ServeKindResult{Kind: k.name, Statuses: map[int]int64{}, Codes: map[string]int{}, Modes: map[string]int{}}
	}
	for _, ss := range perClient {
		for _, s := range ss {
			r := &out[s.kind]
			r.Requests++
			r.Statuses[s.o.status]++
			if s.o.code != "" {
				r.Codes[s.o.code]++
			}
			if s.o.mode != "" {
				r.Modes[s.o.mode]++
			}
			if s.o.lost != "" {
				r.Lost++
				r.LostSample = s.o.lost
			}
			lat[s.kind] = append(lat[s.kind], s.ms)
			ids = append(ids, s.o.ids...)
		}
	}
	for i := range out {
		slices.Sort(lat[i])
		if n := len(lat[i]); n > 0 {
			out[i].P50MS, out[i].P99MS, out[i].MaxMS = lat[i][n/2], lat[i][min(n-1, n*99/100)], lat[i][n-1]
		}
	}
	return out, ids, elapsed
}

// serveKinds are the request kinds the mix can name.
var serveKinds = map[string]func(ctx context.Context, l *loadTest, c, n int) outcome{
	// An answer from statistics (mode context), the result cache bypassed.
	"context": func(ctx context.Context, l *loadTest, c, n int) outcome {
		return l.statement(ctx, l.reader, "SELECT count(*), min(ts), max(ts), max(amount) FROM events", noCache, l.id(c, n))
	},
	// A result cache hit.
	"cache": func(ctx context.Context, l *loadTest, c, n int) outcome {
		return l.statement(ctx, l.reader, "SELECT count(*), min(user_id), max(user_id) FROM events", nil, l.id(c, n))
	},
	// A filtered aggregate over zones: some answered, some read.
	"zones": func(ctx context.Context, l *loadTest, c, n int) outcome {
		day := 1 + (c+n)%28
		return l.statement(ctx, l.reader, fmt.Sprintf("SELECT count(*), sum(amount) FROM events WHERE ts >= TIMESTAMP '2024-02-%02d 06:00:00'", day), noCache, l.id(c, n))
	},
	// A scan with a filter and a group.
	"scan": func(ctx context.Context, l *loadTest, c, n int) outcome {
		return l.statement(ctx, l.reader, fmt.Sprintf("SELECT category, count(*), avg(amount) FROM events WHERE status = %d GROUP BY category", 200+100*(n%4)), noCache, l.id(c, n))
	},
	// A large result, read page by page (json pages of 10,000 rows).
	"large": func(ctx context.Context, l *loadTest, c, n int) outcome {
		return l.statement(ctx, l.reader, fmt.Sprintf("SELECT * FROM events WHERE user_id >= %d LIMIT 50000", n%1000), noCache, l.id(c, n))
	},
	// ANALYZE of the whole table (admin).
	"analyze": func(ctx context.Context, l *loadTest, c, n int) outcome {
		return l.statement(ctx, l.admin, "ANALYZE events", nil, l.id(c, n))
	},
	// A table created and dropped (admin): the catalog changes under the readers.
	"ddl": func(ctx context.Context, l *loadTest, c, n int) outcome {
		name := fmt.Sprintf("scratch_%d", c)
		o := l.statement(ctx, l.admin, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s WITH (location = '%s', format = 'parquet')", name, l.dir), nil, l.id(c, n))
		if o.status != http.StatusOK {
			return o
		}
		d := l.statement(ctx, l.admin, "DROP TABLE IF EXISTS "+name, nil, l.id(c, n)+"-drop")
		d.ids = append(d.ids, o.ids...)
		return d
	},
	// A scan canceled by its id while it runs.
	"cancel": func(ctx context.Context, l *loadTest, c, n int) outcome {
		id := l.id(c, n)
		done := make(chan outcome, 1)
		go func() {
			done <- l.statement(ctx, l.reader, "SELECT user_id, count(*) FROM events GROUP BY user_id ORDER BY 2 DESC LIMIT 5", noCache, id)
		}()
		time.Sleep(time.Duration(1+n%5) * time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, "DELETE", l.url+"/v1/queries/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+l.reader)
		if resp, err := l.client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return <-done
	},
	// The freshness endpoint, as a client checks it before it trusts a cached answer.
	"version": func(ctx context.Context, l *loadTest, c, n int) outcome {
		req, _ := http.NewRequestWithContext(ctx, "GET", l.url+"/v1/catalog/tables/events/version", nil)
		req.Header.Set("Authorization", "Bearer "+l.reader)
		return l.do(req)
	},
}

var noCache = map[string]any{"result_cache": false}

func (l *loadTest) id(c, n int) string { return fmt.Sprintf("c%d-%d", c, n) }

// statement posts one statement and reads the whole response.
func (l *loadTest) statement(ctx context.Context, token, sql string, settings map[string]any, id string) outcome {
	body, _ := json.Marshal(map[string]any{"sql": sql, "settings": settings, "query_id": id})
	req, err := http.NewRequestWithContext(ctx, "POST", l.url+"/v1/statement", bytes.NewReader(body))
	if err != nil {
		return outcome{lost: err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	o := l.do(req)
	// A paged result is read to its end, as a client does: an abandoned one would
	// hold its statement until it expires.
	for o.next != "" && o.lost == "" && o.code == "" {
		page, err := http.NewRequestWithContext(ctx, "GET", l.url+o.next, nil)
		if err != nil {
			o.lost = err.Error()
			break
		}
		page.Header.Set("Authorization", "Bearer "+token)
		po := l.do(page)
		po.pages = o.pages + 1
		o = po
	}
	if id != "" {
		o.ids = []string{id}
	}
	return o
}

// do sends req and classifies its response: a result (its mode), a coded error, or
// lost — anything else.
func (l *loadTest) do(req *http.Request) outcome {
	resp, err := l.client.Do(req)
	if err != nil {
		return outcome{lost: err.Error()}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return outcome{status: resp.StatusCode, lost: err.Error()}
	}
	o := outcome{status: resp.StatusCode}
	if resp.StatusCode == http.StatusNotModified {
		return o
	}
	var doc struct {
		Error *struct {
			Code string `json:"code"`
		} `json:"error"`
		Record *struct {
			Execution struct {
				Mode string `json:"mode"`
			} `json:"execution"`
		} `json:"record"`
		NextURI string `json:"next_uri"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		o.lost = fmt.Sprintf("status %d, not JSON: %.200s", resp.StatusCode, b)
		return o
	}
	switch {
	case resp.StatusCode == http.StatusOK && doc.Error == nil:
		if doc.Record != nil {
			o.mode = doc.Record.Execution.Mode
		}
		o.next = doc.NextURI
		if doc.Record == nil && doc.NextURI == "" && req.Method == http.MethodPost {
			o.lost = "a result with neither its record nor a next_uri"
		}
	case doc.Error != nil && doc.Error.Code != "":
		o.code = doc.Error.Code
	default:
		o.lost = fmt.Sprintf("status %d without a coded error: %.200s", resp.StatusCode, b)
	}
	return o
}

// serveMix parses a mix ("context=60,cache=10"); empty is the default mix.
func serveMix(mix string) ([]serveKind, error) {
	if strings.TrimSpace(mix) == "" {
		mix = defaultServeMix
	}
	var out []serveKind
	for part := range strings.SplitSeq(mix, ",") {
		name, w, ok := strings.Cut(strings.TrimSpace(part), "=")
		send, known := serveKinds[name]
		var weight int
		if _, err := fmt.Sscan(w, &weight); !ok || !known || err != nil || weight < 0 {
			return nil, fmt.Errorf("bad --serve-mix part %q (want kind=weight; kinds: %s)", part, strings.Join(kindNames(), ", "))
		}
		if weight > 0 {
			out = append(out, serveKind{name: name, weight: weight, send: send})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--serve-mix has no request kind with a weight")
	}
	return out, nil
}

func kindNames() []string {
	var names []string
	for n := range serveKinds {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func mixText(kinds []serveKind) string {
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s=%d", k.name, k.weight))
	}
	return strings.Join(parts, ",")
}

// writeServe prints the load test's table.
func writeServe(w io.Writer, r *ServeReport) {
	pace := "closed loop"
	if r.Config.Rate > 0 {
		pace = fmt.Sprintf("paced at %.0f/s", r.Config.Rate)
	}
	fmt.Fprintf(w, "\nserve: %d clients (%s), %.1f s, %d requests, %.0f requests/s on %d cores (clients on the same machine)\n",
		r.Config.Clients, pace, r.Seconds, r.Requests, r.PerSecond, r.Machine.Cores)
	fmt.Fprintf(w, "%-8s %9s %9s %9s %9s %9s  %s\n", "kind", "requests", "per_s", "p50_ms", "p99_ms", "max_ms", "statuses / codes / modes")
	for _, k := range r.Kinds {
		fmt.Fprintf(w, "%-8s %9d %9.0f %9.2f %9.2f %9.1f  %v %v %v\n", k.Kind, k.Requests, k.PerSecond, k.P50MS, k.P99MS, k.MaxMS, k.Statuses, k.Codes, k.Modes)
	}
	fmt.Fprintf(w, "lost: %d; statements missing from the query log: %d; catalog integrity: %v; goroutines after: %+d; heap growth: %.1f MiB\n",
		r.Lost, r.MissingFromLog, okText(r.CatalogOK), r.GoroutinesAfter, r.HeapGrowthMiB)
	for _, k := range r.Kinds {
		if k.LostSample != "" {
			fmt.Fprintf(w, "lost %s: %s\n", k.Kind, k.LostSample)
		}
	}
}

func okText(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAILED"
}
