package server_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/klauspost/compress/zstd"
)

// decode undoes a response's Content-Encoding.
func decode(t *testing.T, r reply) []byte {
	t.Helper()
	var rd io.Reader
	switch ce := r.header.Get("Content-Encoding"); ce {
	case "":
		return r.body
	case "gzip":
		g, err := gzip.NewReader(bytes.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		rd = g
	case "zstd":
		z, err := zstd.NewReader(bytes.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		defer z.Close()
		rd = z
	default:
		t.Fatalf("unknown Content-Encoding %q", ce)
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		t.Fatalf("%s body does not decode: %v", r.header.Get("Content-Encoding"), err)
	}
	return b
}

func TestCompression(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	const q = "SELECT user_id, category FROM ev ORDER BY user_id, category LIMIT 5000"
	plain := f.stmt(f.reader, map[string]any{"sql": q, "format": "ndjson"})
	if plain.status != 200 || plain.header.Get("Content-Encoding") != "" || plain.header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("no Accept-Encoding: %d %q %q", plain.status, plain.header.Get("Content-Encoding"), plain.header.Get("Vary"))
	}
	for accept, want := range map[string]string{
		"zstd": "zstd", "gzip": "gzip", "gzip, zstd": "zstd", "br, gzip;q=0.5": "gzip",
		"zstd;q=0, gzip": "gzip", "*": "zstd", "zstd;q=0, *": "gzip", "br": "", "identity": "",
	} {
		for _, format := range []string{"ndjson", "json", "csv", "arrow"} {
			r := f.stmt(f.reader, map[string]any{"sql": q, "format": format}, "Accept-Encoding", accept)
			if r.status != 200 || r.header.Get("Content-Encoding") != want {
				t.Fatalf("Accept-Encoding %q, %s: %d, Content-Encoding %q", accept, format, r.status, r.header.Get("Content-Encoding"))
			}
			body := decode(t, r)
			switch format {
			case "ndjson":
				if !bytes.Equal(body, plain.body) {
					t.Errorf("%q ndjson decodes to %d bytes, want the %d of the plain answer", accept, len(body), len(plain.body))
				}
				if want != "" && len(r.body) >= len(plain.body)/2 {
					t.Errorf("%s: %d bytes of %d", want, len(r.body), len(plain.body))
				}
			case "json":
				var m map[string]any
				if err := json.Unmarshal(body, &m); err != nil || len(m["rows"].([]any)) != 5000 {
					t.Errorf("%q json: %v", accept, err)
				}
			case "arrow":
				rd, err := ipc.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatalf("%q arrow: %v", accept, err)
				}
				var n int64
				for rd.Next() {
					n += rd.RecordBatch().NumRows()
				}
				if rd.Err() != nil || n != 5000 {
					t.Errorf("%q arrow: %d rows, %v", accept, n, rd.Err())
				}
				rd.Release()
			}
		}
	}
	// A body under minCompressBytes (an error, a version, a small answer) goes plain:
	// compressing it costs more than it saves. Large errors and other endpoints are
	// compressed too; a 304 has no body to compress.
	if r := f.stmt(f.reader, map[string]any{"sql": "SELEC"}, "Accept-Encoding", "gzip"); r.status != 400 || r.header.Get("Content-Encoding") != "" ||
		!bytes.Contains(r.body, []byte("SYNTAX_ERROR")) {
		t.Errorf("a small error: %d %q", r.status, r.header.Get("Content-Encoding"))
	}
	long := "SELECT " + strings.Repeat("1 + ", 600) + "nonexistent_column FROM ev"
	if r := f.stmt(f.reader, map[string]any{"sql": long}, "Accept-Encoding", "gzip"); r.status != 400 || r.header.Get("Content-Encoding") != "gzip" ||
		!bytes.Contains(decode(t, r), []byte("ANALYSIS_ERROR")) {
		t.Errorf("a large error: %d %q %s", r.status, r.header.Get("Content-Encoding"), r.body)
	}
	if r := f.stmt(f.reader, map[string]any{"sql": "SELECT 1"}, "Accept-Encoding", "gzip"); r.status != 200 || r.header.Get("Content-Encoding") != "" {
		t.Errorf("a small answer: %d %q", r.status, r.header.Get("Content-Encoding"))
	}
	v := f.do("GET", "/v1/catalog/tables/ev/version", f.reader, nil, "Accept-Encoding", "zstd")
	if !bytes.Contains(decode(t, v), []byte("identity_sha256")) {
		t.Errorf("version: %s", v.body)
	}
	if r := f.do("GET", "/v1/catalog/tables", f.reader, nil, "Accept-Encoding", "zstd"); r.status != 200 || !bytes.Contains(decode(t, r), []byte(`"ev"`)) {
		t.Errorf("tables: %d %s", r.status, r.body)
	}
	if r := f.do("GET", "/v1/catalog/tables/ev/version", f.reader, nil, "Accept-Encoding", "zstd", "If-None-Match", v.header.Get("ETag")); r.status != 304 ||
		r.header.Get("Content-Encoding") != "" || len(r.body) != 0 {
		t.Errorf("304: %d %q %d bytes", r.status, r.header.Get("Content-Encoding"), len(r.body))
	}
}
