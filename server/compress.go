package server

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Response compression: zstd or gzip, whichever the client's Accept-Encoding takes,
// zstd first (faster and smaller on columnar text). A handler that flushes — a
// streamed result — flushes the compressor too, so that what it sent reaches the
// client instead of waiting in a compression window.

// compressor is a compressing writer that can be reused for another response.
type compressor interface {
	io.WriteCloser
	Flush() error
	Reset(w io.Writer)
}

// zstdEncoder adapts *zstd.Encoder (its Reset returns nothing here).
type zstdEncoder struct{ *zstd.Encoder }

func (z zstdEncoder) Reset(w io.Writer) { z.Encoder.Reset(w) }

var compressorPools = map[string]*sync.Pool{
	"zstd": {New: func() any {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic("BUG: zstd options: " + err.Error())
		}
		return zstdEncoder{e}
	}},
	"gzip": {New: func() any {
		g, err := gzip.NewWriterLevel(nil, gzip.BestSpeed)
		if err != nil {
			panic("BUG: gzip level: " + err.Error())
		}
		return g
	}},
}

// chooseEncoding is the coding to answer an Accept-Encoding with: zstd, else gzip,
// else "" (identity). A coding with q=0 is refused; "*" stands for both.
func chooseEncoding(accept string) string {
	ok := map[string]bool{}
	for _, part := range strings.Split(accept, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(k, "q") {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
		}
		if name == "*" {
			for _, c := range []string{"zstd", "gzip"} {
				if _, set := ok[c]; !set {
					ok[c] = q > 0
				}
			}
			continue
		}
		ok[name] = q > 0
	}
	for _, c := range []string{"zstd", "gzip"} {
		if ok[c] {
			return c
		}
	}
	return ""
}

// compress answers in the coding the request accepts; every response says it varies
// by Accept-Encoding.
func compress(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		coding := chooseEncoding(r.Header.Get("Accept-Encoding"))
		if coding == "" || r.Method == http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		cw := &compressWriter{ResponseWriter: w, coding: coding}
		defer cw.close()
		next.ServeHTTP(cw, r)
	})
}

// minCompressBytes is the smallest body worth compressing: below it (an answer from
// statistics, an error, a version) the coding costs both sides more time than the
// bytes it saves on any network.
const minCompressBytes = 1024

// compressWriter compresses a response's body once its status allows one and the body
// has shown it is large enough: the status and the first bytes are held until
// minCompressBytes have been written, the handler flushes (a stream) or it ends.
type compressWriter struct {
	http.ResponseWriter
	coding    string
	enc       compressor // nil until committed, and for a body left plain
	status    int        // the status the handler wrote; 0 before
	eligible  bool       // the status allows a compressed body
	held      []byte     // the body's first bytes, until committed
	committed bool       // the status has gone to the client
}

func (c *compressWriter) WriteHeader(status int) {
	if c.status != 0 {
		return // as net/http, a second status is ignored
	}
	c.status = status
	c.eligible = status != http.StatusNoContent && status != http.StatusNotModified && status >= 200 &&
		c.Header().Get("Content-Encoding") == ""
	if !c.eligible || status < 200 {
		c.commit(false)
	}
}

func (c *compressWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if !c.committed {
		if len(c.held)+len(b) < minCompressBytes {
			c.held = append(c.held, b...)
			return len(b), nil
		}
		if err := c.commit(true); err != nil {
			return 0, err
		}
	}
	if c.enc == nil {
		return c.ResponseWriter.Write(b)
	}
	return c.enc.Write(b)
}

// commit sends the status, compressed or not, and the bytes held.
func (c *compressWriter) commit(compressed bool) error {
	c.committed = true
	if compressed && c.eligible {
		h := c.Header()
		h.Set("Content-Encoding", c.coding)
		h.Del("Content-Length")
		c.enc = compressorPools[c.coding].Get().(compressor)
		c.enc.Reset(c.ResponseWriter)
	}
	c.ResponseWriter.WriteHeader(c.status)
	held := c.held
	c.held = nil
	if len(held) == 0 {
		return nil
	}
	var err error
	if c.enc != nil {
		_, err = c.enc.Write(held)
	} else {
		_, err = c.ResponseWriter.Write(held)
	}
	return err
}

// FlushError sends what was compressed so far (http.ResponseController.Flush).
func (c *compressWriter) FlushError() error {
	if !c.committed {
		// A handler that flushes streams: its body is compressed, however it starts.
		if c.status == 0 {
			c.WriteHeader(http.StatusOK)
		}
		if err := c.commit(true); err != nil {
			return err
		}
	}
	if c.enc != nil {
		if err := c.enc.Flush(); err != nil {
			return err
		}
	}
	return http.NewResponseController(c.ResponseWriter).Flush()
}

// Flush is FlushError for http.Flusher.
func (c *compressWriter) Flush() { _ = c.FlushError() }

// Unwrap lets http.ResponseController reach the connection's other controls.
func (c *compressWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// close sends what is still held (a small body goes plain), ends the compressed
// stream and gives the compressor back.
func (c *compressWriter) close() {
	if !c.committed && c.status != 0 {
		_ = c.commit(false)
	}
	if c.enc == nil {
		return
	}
	_ = c.enc.Close()
	c.enc.Reset(nil)
	compressorPools[c.coding].Put(c.enc)
	c.enc = nil
}
