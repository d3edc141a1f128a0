package server_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// BenchmarkServeContextAnswer is a statement answered from statistics (mode context)
// over HTTP on loopback with keep-alive: what the server adds to the engine's warm
// answer.
func BenchmarkServeContextAnswer(b *testing.B) {
	f := newFixture(b, fixtureOptions{})
	f.ok(f.admin, "ANALYZE ev")
	if m := f.ok(f.reader, "SELECT count(*) FROM ev"); m["record"].(map[string]any)["execution"].(map[string]any)["mode"] != "context" {
		b.Fatalf("not a context answer: %v", m["record"])
	}
	body := []byte(`{"sql":"SELECT count(*) FROM ev"}`)
	client := &http.Client{}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req, _ := http.NewRequest("POST", f.url+"/v1/statement", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+f.reader)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

// BenchmarkServeArrowStream streams 10M rows of two columns (BIGINT, DOUBLE) from
// range() as an Arrow IPC stream over loopback, read back with arrow-go's reader:
// the MB/s is the server's streaming throughput, engine included.
func BenchmarkServeArrowStream(b *testing.B) {
	f := newFixture(b, fixtureOptions{rows: 1000})
	body := []byte(`{"sql":"SELECT range AS v, range / 2 AS d FROM range(10000000)","format":"arrow","settings":{"result_cache":false}}`)
	const rows = 10_000_000
	b.SetBytes(rows * 16)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req, _ := http.NewRequest("POST", f.url+"/v1/statement", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+f.reader)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		rd, err := ipc.NewReader(resp.Body)
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		for rd.Next() {
			n += rd.RecordBatch().NumRows()
		}
		if rd.Err() != nil || n != rows {
			b.Fatalf("%v, %d rows", rd.Err(), n)
		}
		rd.Release()
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
