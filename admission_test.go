package lore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec"
)

// waitFor polls cond until it holds, failing the test after a few seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAdmissionQueuesRefusesAndLetsContextAnswersThrough(t *testing.T) {
	dir := events(t, 20_000, 2, 4_000, false)
	e := open(t, lore.Options{MaxRunning: 1, MaxQueued: 1})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	query(t, e, "ANALYZE ev")
	if st := e.Admission(); st != (lore.AdmissionStats{MaxRunning: 1, MaxQueued: 1}) {
		t.Fatalf("idle engine: %+v", st)
	}
	// Scans stall at their first batch until the gate opens.
	gate := make(chan struct{})
	exec.SetFailAt(func(point string) {
		if point == exec.PointScanWorker {
			<-gate
		}
	})
	defer exec.SetFailAt(nil)
	scan := "SELECT sum(amount) FROM ev"
	noStats := map[string]string{"use_statistics": "false"}
	type outcome struct {
		res *lore.Result
		err error
	}
	run := func(ctx context.Context) chan outcome {
		ch := make(chan outcome, 1)
		go func() {
			res, err := e.Query(ctx, scan, noStats)
			ch <- outcome{res, err}
		}()
		return ch
	}
	first := run(context.Background())
	waitFor(t, "the first statement runs", func() bool { return e.Admission().Running == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	canceled := run(ctx)
	waitFor(t, "the second statement waits", func() bool { return e.Admission().Queued == 1 })

	// A third finds the queue full.
	_, err := e.Query(context.Background(), scan, noStats)
	if errs.CodeOf(err) != errs.ResourceExhausted || !errors.Is(err, lore.ErrQueueFull) {
		t.Fatalf("beyond the queue: %v", err)
	}
	// An answer from statistics reads no data and is not queued; nor is a dry run.
	res, err := e.Query(context.Background(), "SELECT count(*) FROM ev", nil)
	if err != nil || res.Record.Execution.Mode != "context" {
		t.Fatalf("context answer while the queue is full: %v", err)
	}
	if _, err := e.Estimate(context.Background(), scan, noStats); err != nil {
		t.Fatalf("dry run while the queue is full: %v", err)
	}
	// Canceling a queued statement takes it out of the queue.
	cancel()
	if o := <-canceled; errs.CodeOf(o.err) != errs.Canceled {
		t.Fatalf("canceled while queued: %v", o.err)
	}
	if st := e.Admission(); st.Running != 1 || st.Queued != 0 {
		t.Fatalf("after the cancel: %+v", st)
	}
	// The next waits its turn and runs when the first is done.
	second := run(context.Background())
	waitFor(t, "the next statement waits", func() bool { return e.Admission().Queued == 1 })
	close(gate)
	for i, ch := range []chan outcome{first, second} {
		o := <-ch
		if o.err != nil || cell(o.res, 0, 0) == "<no row>" {
			t.Fatalf("admitted statement: %v", o.err)
		}
		if waited := o.res.Record.QueuedMS > 0; waited != (i == 1) {
			t.Fatalf("statement %d waited %v ms for admission", i, o.res.Record.QueuedMS)
		}
	}
	if st := e.Admission(); st.Running != 0 || st.Queued != 0 {
		t.Fatalf("idle again: %+v", st)
	}
}

func TestAdmissionDeadlineWhileQueued(t *testing.T) {
	dir := events(t, 20_000, 2, 4_000, false)
	e := open(t, lore.Options{MaxRunning: 1})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	gate := make(chan struct{})
	exec.SetFailAt(func(point string) {
		if point == exec.PointScanWorker {
			<-gate
		}
	})
	defer exec.SetFailAt(nil)
	done := make(chan error, 1)
	go func() {
		_, err := e.Query(context.Background(), "SELECT sum(amount) FROM ev", nil)
		done <- err
	}()
	waitFor(t, "the first statement runs", func() bool { return e.Admission().Running == 1 })
	// max_execution_ms counts the wait for admission.
	_, err := e.Query(context.Background(), "SELECT sum(amount) FROM ev", map[string]string{"max_execution_ms": "50"})
	limitOf(t, err, "max_execution_ms")
	if st := e.Admission(); st.Queued != 0 {
		t.Fatalf("a statement past its deadline stays queued: %+v", st)
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestDryRunMatchesTheRun(t *testing.T) {
	dir := events(t, 40_000, 4, 2_000, true)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	ctx := context.Background()
	for _, sql := range []string{
		"SELECT sum(amount) FROM ev WHERE ts >= TIMESTAMP '2024-03-01'",
		"SELECT sum(amount), max(user_id) FROM ev",
		"SELECT category, count(*) FROM ev WHERE ts < TIMESTAMP '2024-01-20' GROUP BY category",
	} {
		s := dryRunMatches(t, e, sql, map[string]string{"use_statistics": "false"})
		// The page index may leave rows of a row group unread; never more.
		if sql == "SELECT sum(amount), max(user_id) FROM ev" && (s.Rows != 40_000 || s.RowGroups != 20) {
			t.Fatalf("a full scan's estimate: %+v", s)
		}
	}
	// A WITH read twice is planned once, shared by its readers: its scan is
	// estimated once, as it is read once.
	dryRunMatches(t, e, `WITH s AS (SELECT category, sum(amount) AS a FROM ev WHERE ts < TIMESTAMP '2024-01-20' GROUP BY category)
		SELECT x.category, x.a + y.a FROM s x JOIN s y ON x.category = y.category`, map[string]string{"use_statistics": "false"})
	// A pruned query reads less than all.
	est, err := e.Estimate(ctx, "SELECT sum(amount) FROM ev WHERE ts >= TIMESTAMP '2024-03-01'", map[string]string{"use_statistics": "false"})
	if err != nil || est.RowGroups == 0 || est.RowGroups >= 20 {
		t.Fatalf("pruned estimate: %v %+v", err, est)
	}
	// With a record, its per-file bounds skip files before their footers are read
	// and the zone planner answers row groups: the estimate says so too.
	query(t, e, "ANALYZE ev")
	s := dryRunMatches(t, e, "SELECT count(*) FROM ev WHERE ts >= TIMESTAMP '2024-03-01 12:34:56'", nil)
	if s.FilesSkipped == 0 || s.RowGroupsAnswered == 0 {
		t.Fatalf("statistics took no part in the estimate: %+v", s)
	}
	// The dry_run setting answers one row; an answer from statistics reads nothing.
	res, err := e.Query(ctx, "SELECT count(*) FROM ev", map[string]string{"dry_run": "true"})
	if err != nil || res.NumRows() != 1 || cell(res, 0, 0) != "context" || cell(res, 0, 3) != "0" || cell(res, 0, 4) != "0" {
		t.Fatalf("dry run of a context answer: %v", err)
	}
	if res.Record.Execution.Mode != "dry_run" || res.Record.Estimate.Mode != "context" {
		t.Fatalf("record: %+v", res.Record.Execution)
	}
	if _, err := e.Query(ctx, "DROP TABLE ev", map[string]string{"dry_run": "true"}); errs.CodeOf(err) != errs.InvalidSetting {
		t.Fatalf("dry run of a DROP: %v", err)
	}
	if rows := query(t, e, "SELECT count(*) FROM ev"); cell(rows, 0, 0) != "40000" {
		t.Fatal("the dry run of DROP dropped the table")
	}
}

// dryRunMatches estimates sql, runs it, and checks that the estimate's one scan
// matches what the run read; it returns the estimate.
func dryRunMatches(t *testing.T, e *lore.Engine, sql string, settings map[string]string) lore.ScanEstimate {
	t.Helper()
	ctx := context.Background()
	est, err := e.Estimate(ctx, sql, settings)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if rec := lastRecord(t, e); rec.Execution.Mode != "dry_run" || rec.Estimate == nil || len(rec.Scans) != 0 {
		t.Fatalf("dry run record: %+v", rec)
	}
	res, err := e.Query(ctx, sql, settings)
	if err != nil {
		t.Fatal(err)
	}
	if len(est.Scans) != 1 || len(res.Record.Scans) != 1 {
		t.Fatalf("%s: estimate %+v, record %+v", sql, est, res.Record)
	}
	got, s := res.Record.Scans[0], est.Scans[0]
	t.Logf("%s: estimate %+v; read %+v", sql, s, got.Snapshot)
	if est.Mode != "scan" || s.FilesSkipped != got.FilesSkipped || s.FilesOpened != got.FilesOpened ||
		s.RowGroupsPruned != got.RowGroupsPruned || s.RowGroupsAnswered != got.RowGroupsAnswered ||
		s.RowGroups != got.RowGroupsRead || s.Bytes != got.CompressedBytesRead || s.Rows < got.RowsScanned ||
		est.Rows != s.Rows || est.Bytes != s.Bytes || est.RowGroups != s.RowGroups {
		t.Fatalf("%s: estimate %+v, the run read %+v", sql, est, got.Snapshot)
	}
	return s
}
