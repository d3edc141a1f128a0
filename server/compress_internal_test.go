package server

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// TestCompressionFlushes: what a handler flushes reaches a client through the
// compressor before the handler goes on, as a streamed result needs.
func TestCompressionFlushes(t *testing.T) {
	for _, coding := range []string{"zstd", "gzip"} {
		t.Run(coding, func(t *testing.T) {
			proceed := make(chan struct{})
			srv := httptest.NewServer(compress(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "first line\n")
				if err := http.NewResponseController(w).Flush(); err != nil {
					t.Errorf("flush: %v", err)
				}
				<-proceed // the client must have read the first line by now
				io.WriteString(w, "second line\n")
			})))
			defer srv.Close()
			defer func() {
				select {
				case <-proceed:
				default:
					close(proceed)
				}
			}()
			req, _ := http.NewRequest("GET", srv.URL, nil)
			req.Header.Set("Accept-Encoding", coding)
			// A compressor that kept the flushed line would stall the read: time out.
			resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.Header.Get("Content-Encoding") != coding {
				t.Fatalf("Content-Encoding %q", resp.Header.Get("Content-Encoding"))
			}
			var body io.Reader
			if coding == "zstd" {
				z, err := zstd.NewReader(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				defer z.Close()
				body = z
			} else {
				g, err := newGzipReader(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				body = g
			}
			rd := bufio.NewReader(body)
			line, err := rd.ReadString('\n')
			if err != nil || line != "first line\n" {
				t.Fatalf("first line before the handler went on: %q %v", line, err)
			}
			close(proceed)
			line, err = rd.ReadString('\n')
			if err != nil || line != "second line\n" {
				t.Fatalf("second line: %q %v", line, err)
			}
		})
	}
}

func newGzipReader(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }
