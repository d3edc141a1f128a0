package server_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// BenchmarkServeCompressed is a 20,000-row ndjson result over loopback, plain and
// in each coding: the time the compressor adds and the bytes it saves (wire_bytes,
// as the client receives them, still coded).
func BenchmarkServeCompressed(b *testing.B) {
	f := newFixture(b, fixtureOptions{})
	body := []byte(`{"sql":"SELECT user_id, category, country, amount FROM ev", "format":"ndjson", "settings":{"result_cache":false}}`)
	for _, coding := range []string{"identity", "gzip", "zstd"} {
		b.Run(coding, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			var wire int64
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest("POST", f.url+"/v1/statement", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+f.reader)
				req.Header.Set("Accept-Encoding", coding)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
				wire = n
			}
			b.ReportMetric(float64(wire), "wire_bytes")
		})
	}
}
