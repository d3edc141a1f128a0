package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/storage/s3/s3test"
)

// storeEnv points the LORE_S3_* variables at a loopback server with the test's
// fixed key, as a user would point lore at their store.
func storeEnv(t *testing.T, srv *s3test.Server) {
	t.Setenv("LORE_S3_ENDPOINT", srv.URL)
	t.Setenv("LORE_S3_ALLOW_HTTP", "true")
	t.Setenv("LORE_S3_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "lore-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "lore-test-secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// countRows is SELECT count(*) over the Parquet table at loc, read through the server.
func countRows(t *testing.T, srv *s3test.Server, loc string) string {
	t.Helper()
	ctx := context.Background()
	cfg := srv.Config()
	eng, err := lore.Open(ctx, lore.Options{Home: t.TempDir(), S3: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := eng.Query(ctx, "CREATE TABLE t WITH (location = '"+loc+"', format = 'parquet')", nil); err != nil {
		t.Fatal(err)
	}
	res, err := eng.Query(ctx, "SELECT count(*) FROM t", nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Batches[0].Column(0).ValueStr(0)
}

// TestMainGenToStore writes generated tables to an S3 location: refused when the
// prefix holds objects unless --force, and a forced rerun with fewer files leaves
// no stale part behind (the table would read it too).
func TestMainGenToStore(t *testing.T) {
	srv := s3test.Start(t, "gen")
	storeEnv(t, srv)
	status, stdout, stderr := run(t, "", "gen", "events", "--rows", "3000", "--files", "3", "--out", "s3://gen/events")
	if status != exitOK || !strings.Contains(stdout, "s3://gen/events") {
		t.Fatalf("gen events to S3: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	objs, err := srv.Store().List(context.Background(), "s3://gen/events/")
	if err != nil || len(objs) != 3 {
		t.Fatalf("objects written: %v, %v", objs, err)
	}
	if n := countRows(t, srv, "s3://gen/events"); n != "3000" {
		t.Fatalf("count(*) over the uploaded table = %s, want 3000", n)
	}
	status, _, stderr = run(t, "", "gen", "events", "--rows", "10", "--out", "s3://gen/events")
	if status != exitUsage || !strings.Contains(stderr, "not empty") {
		t.Fatalf("gen into a non-empty prefix: status %d, stderr %q", status, stderr)
	}
	status, _, stderr = run(t, "", "gen", "events", "--rows", "1000", "--files", "1", "--out", "s3://gen/events", "--force")
	if status != exitOK {
		t.Fatalf("gen --force to S3: status %d, stderr %q", status, stderr)
	}
	if n := countRows(t, srv, "s3://gen/events"); n != "1000" {
		t.Fatalf("count(*) after a forced rerun with one file = %s, want 1000 (stale parts left?)", n)
	}
	status, _, stderr = run(t, "", "gen", "tpch", "--sf", "0.001", "--files", "2", "--out", "s3://gen/tpch/")
	if status != exitOK {
		t.Fatalf("gen tpch to S3: status %d, stderr %q", status, stderr)
	}
	if n := countRows(t, srv, "s3://gen/tpch/nation"); n != "25" {
		t.Fatalf("count(*) of nation = %s, want 25", n)
	}
}

// A store that cannot be reached is an error before anything is generated.
func TestMainGenToStoreUnreachable(t *testing.T) {
	srv := s3test.Start(t, "gen")
	storeEnv(t, srv)
	t.Setenv("LORE_S3_ALLOW_HTTP", "false")
	status, _, stderr := run(t, "", "gen", "events", "--rows", "10", "--out", "s3://gen/x")
	if status == exitOK || !strings.Contains(stderr, "plain HTTP") {
		t.Fatalf("gen to a plain-HTTP endpoint without LORE_S3_ALLOW_HTTP: status %d, stderr %q", status, stderr)
	}
	if strings.Contains(stderr, "lore-test-secret") {
		t.Fatalf("the secret is in the error: %q", stderr)
	}
}
