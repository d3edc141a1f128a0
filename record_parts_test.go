package lore_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/catalog"
)

// TestRecordStoredWholeStillAnswers puts a table's record back as a catalog written
// before document version 3 holds it — the whole document, per-file list and zones
// inline, no detail apart — and checks that an engine opened on it answers every
// statement as it did from the head and detail: the same values, the same modes, the
// same zones skipped and answered.
func TestRecordStoredWholeStillAnswers(t *testing.T) {
	dir := events(t, 40_000, 4, 5_000, true)
	home := t.TempDir()
	statements := []string{
		"SELECT count(*), min(ts), max(ts), min(user_id), max(user_id) FROM events",
		"SELECT count(*), sum(amount), min(ts) FROM events", // sums are folded zone by zone
		"SELECT count(*), max(ts) FROM events WHERE ts >= TIMESTAMP '2024-02-15 12:00:00'",
		"SELECT count(*), max(amount) FROM events WHERE ts >= TIMESTAMP '2024-03-20'",
	}
	answers := func() []string {
		e := open(t, lore.Options{Home: home, NoAutoRefresh: true})
		defer e.Close()
		var out []string
		for _, s := range statements {
			res := query(t, e, s)
			row := ""
			for c := range int(res.Batches[0].NumCols()) {
				row += cell(res, 0, c) + " "
			}
			out = append(out, fmt.Sprintf("%s| %s %s", row, res.Record.Execution.Mode, res.Record.Execution.Detail))
		}
		return out
	}
	e := open(t, lore.Options{Home: home, NoAutoRefresh: true})
	query(t, e, fmt.Sprintf("CREATE TABLE events WITH (location = '%s', format = 'parquet')", dir))
	query(t, e, "ANALYZE events WITH (sketches = true)")
	st, err := e.Statistics(context.Background(), "events")
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	split := answers()
	if split[0] == "" || !bytes.Contains([]byte(split[2]), []byte("context")) {
		t.Fatalf("the split record did not answer from zones: %q", split)
	}

	// The same record as version 2 wrote it: one document, no detail.
	whole := bytes.Replace(st.Statistics, []byte(`"document_version":3`), []byte(`"document_version":2`), 1)
	if bytes.Equal(whole, st.Statistics) {
		t.Fatalf("no document version in %s", st.Statistics)
	}
	cat, err := catalog.Open(context.Background(), home+"/catalog.db")
	if err != nil {
		t.Fatal(err)
	}
	row, ok, err := cat.Statistics(context.Background(), st.TableID)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	row.DocumentVersion, row.Document, row.Detail = 2, whole, nil
	row.ComputedAtMS++ // another record for every cache
	if err := cat.PutStatistics(context.Background(), "events", row); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.StatisticsDetail(context.Background(), st.TableID, row.SourceIdentity, row.ComputedAtMS); err == nil {
		t.Fatal("a record without detail gave one")
	}
	cat.Close()
	old := answers()
	for i := range statements {
		if old[i] != split[i] {
			t.Errorf("%s:\nwhole document: %s\nhead and detail: %s", statements[i], old[i], split[i])
		}
	}
}
