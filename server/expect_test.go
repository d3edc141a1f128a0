package server_test

import (
	"testing"
)

func TestExpectSourceVersion(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	v := f.do("GET", "/v1/catalog/tables/ev/version", f.reader, nil)
	etag := v.header.Get("ETag")
	digest := v.json(t)["source_version"].(map[string]any)["identity_sha256"].(string)
	const q = "SELECT count(*) FROM ev"
	// The same version runs, given as the digest or as the ETag with its quotes.
	for _, want := range []string{digest, etag} {
		r := f.stmt(f.reader, map[string]any{"sql": q, "expect_source_version": map[string]any{"ev": want}})
		if r.status != 200 {
			t.Fatalf("expecting the current version %s: %d %s", want, r.status, r.body)
		}
	}
	land(t, f.dir, "landed.parquet")
	for _, sql := range []string{q, "SELECT 1", "ANALYZE ev"} {
		r := f.stmt(f.admin, map[string]any{"sql": sql, "expect_source_version": map[string]any{"EV": digest}})
		if r.status != 409 || r.code(t) != "SOURCE_CHANGED" {
			t.Errorf("%s after a file landed: %d %s", sql, r.status, r.body)
		}
	}
	// The failed statement's record says why; the new version runs.
	r := f.stmt(f.reader, map[string]any{"sql": q, "expect_source_version": map[string]any{"ev": digest}})
	if rec := r.json(t)["record"].(map[string]any); rec["error"].(map[string]any)["code"] != "SOURCE_CHANGED" {
		t.Errorf("record: %v", rec)
	}
	now := f.do("GET", "/v1/catalog/tables/ev/version", f.reader, nil).header.Get("ETag")
	if r := f.stmt(f.reader, map[string]any{"sql": q, "expect_source_version": map[string]any{"ev": now}}); r.status != 200 {
		t.Errorf("the new version: %d %s", r.status, r.body)
	}
	for name, body := range map[string]map[string]any{
		"unknown table": {"sql": "SELECT 1", "expect_source_version": map[string]any{"nope": now}},
	} {
		if r := f.stmt(f.reader, body); r.status != 404 || r.code(t) != "TABLE_NOT_FOUND" {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	if r := f.stmt(f.reader, map[string]any{"sql": q, "expect_source_version": map[string]any{"ev": 3}}); r.status != 400 || r.code(t) != "INVALID_REQUEST" {
		t.Errorf("a version that is not a string: %d %s", r.status, r.body)
	}
}
