package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// orderEngine records each run in a shared log and answers one row.
type orderEngine struct {
	tag string
	log *[]string
}

func (e *orderEngine) name() string { return e.tag }

func (e *orderEngine) run(ctx context.Context, sql string, keep bool) ([][]string, int, error) {
	*e.log = append(*e.log, e.tag)
	return [][]string{{"1"}}, 1, nil
}

func (e *orderEngine) errorCode(error) string { return "" }
func (e *orderEngine) close() error           { return nil }

// TestMeasureRunsEachEngineInABlock: each engine takes its warm-up and all its
// rounds before the other starts (see measure), the warm-ups are not timed, and
// the answers are still compared.
func TestMeasureRunsEachEngineInABlock(t *testing.T) {
	var log []string
	lore, duck := &orderEngine{"L", &log}, &orderEngine{"D", &log}
	qr := measure(context.Background(), Config{Rounds: 3, Timeout: time.Minute}, lore, duck, Query{Name: "q", SQL: "SELECT 1"})
	if got, want := strings.Join(log, ""), "LLLLDDDD"; got != want {
		t.Errorf("runs in the order %s, want %s", got, want)
	}
	if len(qr.Lore.TimesMS) != 3 || len(qr.DuckDB.TimesMS) != 3 {
		t.Errorf("timed runs: lore %d, duckdb %d; want 3 each", len(qr.Lore.TimesMS), len(qr.DuckDB.TimesMS))
	}
	if qr.Equal == nil || !*qr.Equal {
		t.Errorf("answers not compared equal: %+v", qr.Equal)
	}
}
