package server_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"
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
