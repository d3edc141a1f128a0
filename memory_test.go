package lore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/sysmem"
)

// memorySlack is what the process may hold beyond its memory limit: the Go
// runtime, the test binary, batches in flight between operators (which the budget
// does not count) and the heap the collector has not yet returned. README
// ("Memory") documents it.
const memorySlack = 256 << 20

// memoryForm is one size of the memory suite: the engine's budget and the rows of
// the events table the statements read.
type memoryForm struct {
	limit string
	bytes int64
	rows  int64
	// windowCopies is how many copies of the table the window statement numbers.
	windowCopies int
}

// The short form runs in CI; LORE_MEMORY_SUITE=long runs the sizes of the report
// that asked for the suite (a 1 GiB budget, 10M rows, a window over 50M).
var (
	shortForm = memoryForm{limit: "64MiB", bytes: 64 << 20, rows: 2_000_000, windowCopies: 1}
	longForm  = memoryForm{limit: "1GiB", bytes: 1 << 30, rows: 10_000_000, windowCopies: 5}
)

// runaway is a statement that once took memory without bound.
type runaway struct {
	name string
	sql  string
	// mustFinish: the statement must succeed (a LIMIT stops it); otherwise it may
	// also fail with RESOURCE_EXHAUSTED.
	mustFinish bool
	// within bounds its run, for the statements that must return at once.
	within time.Duration
}

func runaways(f memoryForm) []runaway {
	copies := make([]string, f.windowCopies)
	for i := range copies {
		copies[i] = "SELECT ts, user_id FROM events"
	}
	return []runaway{
		{name: "cross join limit 1", sql: "SELECT a.user_id, b.user_id FROM events a CROSS JOIN events b LIMIT 1",
			mustFinish: true, within: 20 * time.Second},
		// 70 % of the rows have status 200: about half the square of the rows pair up.
		{name: "skewed equi-join", sql: "SELECT a.*, b.* FROM events a JOIN events b ON a.status = b.status"},
		{name: "row_number window", sql: "SELECT user_id, row_number() OVER (ORDER BY ts) FROM (" + strings.Join(copies, " UNION ALL ") + ")"},
		{name: "lpad 100000", sql: "SELECT lpad(category, 100000, 'x') FROM events"},
		{name: "select star", sql: "SELECT * FROM events"},
	}
}

// TestMemorySuite runs each runaway statement in a child process under a memory
// limit and checks that it finishes or fails with RESOURCE_EXHAUSTED, and that the
// child's peak resident memory (VmHWM) stays under the limit plus memorySlack. The
// parent watches the child and stops it as soon as it passes that bound.
func TestMemorySuite(t *testing.T) {
	if os.Getenv("LORE_MEMORY_STATEMENT") != "" {
		t.Skip("in a child")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc")
	}
	if raceDetector {
		t.Skip("the race detector's memory would be measured, not Lore's")
	}
	form := shortForm
	if os.Getenv("LORE_MEMORY_SUITE") == "long" {
		form = longForm
	} else if testing.Short() {
		t.Skip("short")
	}
	dir := events(t, form.rows, 1, 1<<20, false)
	bound := form.bytes + memorySlack
	for _, r := range runaways(form) {
		t.Run(r.name, func(t *testing.T) {
			res := runChild(t, r, form, dir, bound)
			t.Logf("%s: %s in %v, peak RSS %d MiB (limit %s, bound %d MiB)", r.name, res.outcome, res.elapsed.Round(time.Millisecond),
				res.peak>>20, form.limit, bound>>20)
			switch {
			case res.peak > bound:
				t.Errorf("peak RSS %d MiB is over the limit plus slack (%d MiB)", res.peak>>20, bound>>20)
			case r.mustFinish && !strings.HasPrefix(res.outcome, "ok"):
				t.Errorf("outcome %s, want success", res.outcome)
			case !strings.HasPrefix(res.outcome, "ok") && res.outcome != string(errs.ResourceExhausted):
				t.Errorf("outcome %s, want success or %s", res.outcome, errs.ResourceExhausted)
			case r.within > 0 && res.elapsed > r.within:
				t.Errorf("took %v, want under %v", res.elapsed, r.within)
			}
		})
	}
}

type childResult struct {
	outcome string
	elapsed time.Duration
	peak    int64 // bytes
}

// runChild runs r in a child process (this test binary, TestMemoryStatement) with
// LORE_MEMORY_LIMIT set, watching its peak resident memory from /proc.
func runChild(t *testing.T, r runaway, form memoryForm, dir string, bound int64) childResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestMemoryStatement$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "LORE_MEMORY_STATEMENT="+r.sql, "LORE_MEMORY_DATA="+dir, "LORE_MEMORY_LIMIT="+form.limit)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var watched, over atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if hwm := sysmem.ProcKB(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid), "VmHWM:") * 1024; hwm > watched.Load() {
				watched.Store(hwm)
				if hwm > bound {
					// Past the bound: stop it before it takes the machine.
					over.Store(hwm)
					cmd.Process.Kill()
					return
				}
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	elapsed := time.Since(start)
	close(stop)
	<-done
	res := childResult{elapsed: elapsed, peak: watched.Load()}
	if o := over.Load(); o > 0 {
		res.outcome, res.peak = "killed", o
		return res
	}
	found := false
	for _, line := range strings.Split(out.String(), "\n") {
		var peakKB int64
		if rest, ok := strings.CutPrefix(line, "MEMORY-RESULT "); ok {
			if _, err := fmt.Sscanf(rest, "%s %d", &res.outcome, &peakKB); err == nil {
				found = true
				res.peak = max(res.peak, peakKB*1024)
			}
		}
	}
	if !found {
		t.Fatalf("child gave no result (%v):\n%s", err, out.String())
	}
	return res
}

// TestMemoryStatement is the child of TestMemorySuite: it opens an engine (its
// limit from LORE_MEMORY_LIMIT), runs one statement over the events table in
// LORE_MEMORY_DATA and prints its outcome (ok or the error code) and its peak RSS.
func TestMemoryStatement(t *testing.T) {
	stmt := os.Getenv("LORE_MEMORY_STATEMENT")
	if stmt == "" {
		t.Skip("run by TestMemorySuite")
	}
	ctx := context.Background()
	e, err := lore.Open(ctx, lore.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	query(t, e, fmt.Sprintf("CREATE TABLE events WITH (location = '%s', format = 'parquet')", os.Getenv("LORE_MEMORY_DATA")))
	res, err := e.Query(ctx, stmt, nil)
	outcome := "ok"
	var le *errs.Error
	switch {
	case err == nil:
		outcome = fmt.Sprintf("ok(%d-rows)", res.NumRows())
	case errors.As(err, &le):
		outcome = string(le.Code)
		t.Log(err)
	default:
		outcome = "error"
		t.Log(err)
	}
	fmt.Printf("MEMORY-RESULT %s %d\n", outcome, sysmem.ProcKB("/proc/self/status", "VmHWM:"))
}

// TestStatementMemoryLimit: SET SESSION memory_limit gives one statement a smaller
// budget than the engine's, and a statement cannot raise it.
func TestStatementMemoryLimit(t *testing.T) {
	dir := events(t, 200_000, 1, 50_000, false)
	e := open(t, lore.Options{MemoryLimit: 256 << 20})
	query(t, e, fmt.Sprintf("CREATE TABLE events WITH (location = '%s', format = 'parquet')", dir))
	const stmt = "SELECT * FROM events"
	query(t, e, stmt)
	if _, err := e.Query(context.Background(), "SET SESSION memory_limit = '2MiB'; "+stmt, nil); !errors.Is(err, errs.ErrResourceExhausted) {
		t.Fatalf("under a 2MiB statement limit: %v", err)
	}
	res, err := e.Query(context.Background(), stmt, map[string]string{"memory_limit": "64MiB"})
	if err != nil || res.Record.Settings["memory_limit"] != "64mib" {
		t.Fatalf("under a 64MiB statement limit: %v", err)
	}
	if _, err := e.Query(context.Background(), "SET SESSION memory_limit = '1GiB'; "+stmt, nil); !errors.Is(err, errs.ErrInvalidSetting) {
		t.Fatalf("raising the engine's limit: %v", err)
	}
}
