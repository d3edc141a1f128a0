package lore_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// TestExecutionSetting: execution takes local or beam; on Beam run ANALYZE's full
// read and queries' aggregates, so other statements under it are refused, and an
// ANALYZE or a query that reads no data runs here, without asking for lore-beam.
func TestExecutionSetting(t *testing.T) {
	ctx := context.Background()
	dir := events(t, 1000, 2, 500, false)
	e := open(t, lore.Options{Beam: lore.BeamOptions{Command: "/nonexistent/lore-beam"}})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	if _, err := e.Query(ctx, "SELECT 1", map[string]string{"execution": "cluster"}); errs.CodeOf(err) != errs.InvalidSetting {
		t.Errorf("execution = 'cluster': %v", err)
	}
	if _, err := e.Query(ctx, "SET SESSION execution = 'beam'; SHOW TABLES", nil); errs.CodeOf(err) != errs.InvalidSetting {
		t.Errorf("SHOW TABLES under execution = 'beam': %v", err)
	}
	if _, err := e.Query(ctx, "SET SESSION execution = 'beam'; SELECT count(*) FROM ev", nil); errs.CodeOf(err) != errs.InvalidSetting {
		t.Errorf("a query that reads, under execution = 'beam' without lore-beam: %v", err)
	}
	res, err := e.Query(ctx, "ANALYZE ev", map[string]string{"execution": "beam"})
	if err != nil {
		t.Fatal(err)
	}
	if v := cell(res, 0, 3); v != "NULL" || res.Record.Execution.Distributed != nil {
		t.Errorf("a metadata ANALYZE under execution = 'beam': full_read %s, distributed %+v", v, res.Record.Execution.Distributed)
	}
	res, err = e.Query(ctx, "SELECT count(*) FROM ev", map[string]string{"execution": "beam"})
	if err != nil {
		t.Fatalf("a query statistics answer, under execution = 'beam': %v", err)
	}
	if cell(res, 0, 0) != "1000" || res.Record.Execution.Mode != "context" {
		t.Errorf("a query statistics answer, under execution = 'beam': %s, mode %s", cell(res, 0, 0), res.Record.Execution.Mode)
	}
	if _, err := e.Query(ctx, "ANALYZE ev WITH (sketches = true)", map[string]string{"execution": "beam"}); errs.CodeOf(err) != errs.InvalidSetting {
		t.Errorf("a full ANALYZE without lore-beam: %v", err)
	}
	res = query(t, e, "ANALYZE ev WITH (sketches = true)")
	if v := cell(res, 0, 3); v != "local" {
		t.Errorf("full_read %s, want local", v)
	}
}

// TestBeamAbove: the size from which statements run on Beam unasked is checked when
// the engine opens — a size and a lore-beam that can run — and a statement that
// reads less than it runs here under execution = 'auto', the default.
func TestBeamAbove(t *testing.T) {
	ctx := context.Background()
	for _, o := range []lore.BeamOptions{
		{Above: -1, Command: os.Args[0]},
		{Above: 1, Command: "/nonexistent/lore-beam"},
		{Above: 1, Command: os.Args[0], Runner: "universal"},
	} {
		_, err := lore.Open(ctx, lore.Options{Home: t.TempDir(), Beam: o})
		if errs.CodeOf(err) != errs.InvalidSetting {
			t.Errorf("%+v: %v, want INVALID_SETTING", o, err)
		}
	}
	t.Setenv("LORE_BEAM_ABOVE", "lots")
	if _, err := lore.Open(ctx, lore.Options{Home: t.TempDir(), Beam: lore.BeamOptions{Command: os.Args[0]}}); errs.CodeOf(err) != errs.InvalidSetting {
		t.Errorf("LORE_BEAM_ABOVE=lots: %v, want INVALID_SETTING", err)
	}
	t.Setenv("LORE_BEAM_ABOVE", "1GiB")
	dir := events(t, 1000, 2, 500, false)
	e := open(t, lore.Options{Beam: lore.BeamOptions{Command: os.Args[0]}})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	for _, text := range []string{"SELECT count(*), sum(status) FROM ev WHERE status % 7 = 1", "ANALYZE ev WITH (sketches = true)"} {
		res := query(t, e, text)
		if d := res.Record.Execution.Distributed; d != nil {
			t.Errorf("%s: ran on Beam below the threshold: %+v", text, d)
		}
	}
	if _, err := e.Query(ctx, "SELECT 1", map[string]string{"execution": "AUTO"}); err != nil {
		t.Errorf("execution = 'AUTO': %v", err)
	}
}
