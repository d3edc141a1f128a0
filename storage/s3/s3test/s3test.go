// Package s3test runs an S3 server on loopback for tests and benchmarks: the real HTTP protocol,
// answered by an in-memory gofakes3 with what it leaves out of S3 put in front of it
// (If-Match on reads), counting the requests it serves by kind. Tests reach it through
// Lore's own S3 store. Faults (Inject) are made by the server on the wire — throttling,
// server errors, denied access, connections reset or closed mid-body, stalls — so the
// store meets them through the real HTTP client as it would in production.
package s3test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/loredb/lore/storage/s3"
	"github.com/loredb/lore/storage/s3/sigv4"
)

// Server is an S3 server on loopback.
type Server struct {
	URL string

	srv   *httptest.Server
	store *s3.Store

	mu       sync.Mutex
	counts   Counts
	log      []string
	rules    []*rule
	faulted  int
	inFlight int
	before   func(kind, url string)
}

// Counts are the requests a Server served, by kind.
type Counts struct{ List, Get, Head, Put, Other int }

// Total is every request counted.
func (c Counts) Total() int { return c.List + c.Get + c.Head + c.Put + c.Other }

// Start runs a server until the test ends, with the buckets made.
func Start(t testing.TB, buckets ...string) *Server {
	t.Helper()
	s, err := Serve(buckets...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Serve runs a server on loopback, with the buckets made, until Close: the
// benchmark harness reads through it outside any test.
func Serve(buckets ...string) (*Server, error) {
	fake := gofakes3.New(s3mem.New(), gofakes3.WithTimeSkewLimit(0))
	s := &Server{}
	h := fake.Server()
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, before := s.begin(r)
		defer s.end()
		if before != nil {
			before(kindOf(r), "s3://"+strings.TrimPrefix(r.URL.Path, "/"))
		}
		if f != 0 {
			serveFault(w, r, f, h)
			return
		}
		if msg := verify(r); msg != "" {
			errorXML(w, http.StatusForbidden, "SignatureDoesNotMatch", msg)
			return
		}
		if m := r.Header.Get("If-Match"); m != "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			w = &ifMatch{ResponseWriter: w, want: m}
		}
		h.ServeHTTP(w, r)
	}))
	s.URL = s.srv.URL
	st, err := s3.New(s.Config())
	if err == nil {
		s.store = st
		for _, b := range buckets {
			if err = st.CreateBucket(context.Background(), b); err != nil {
				break
			}
		}
	}
	if err != nil {
		s.srv.Close()
		return nil, err
	}
	return s, nil
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// The key Config signs with, whose requests the server checks.
const (
	testKey    = "lore-test"
	testSecret = "lore-test-secret"
)

// Config reaches the server: its endpoint over plain HTTP, path style, a fixed key.
func (s *Server) Config() s3.Config {
	return s3.Config{Endpoint: s.URL, AllowHTTP: true, Region: "us-east-1",
		Credentials: s3.StaticCredentials(testKey, testSecret)}
}

// verify checks the signature of a request signed with Config's key as S3 checks it,
// from the request as it arrived: its path as sent, its Host, the headers it names as
// signed, and its body against the payload hash it states. It returns what is wrong,
// or "" (requests signed with other keys, or unsigned, pass unchecked).
func verify(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	cred, _, _ := strings.Cut(strings.TrimPrefix(auth, "AWS4-HMAC-SHA256 Credential="), ",")
	scope := strings.Split(cred, "/")
	if len(scope) != 5 || scope[0] != testKey {
		return ""
	}
	signedHeaders := ""
	for part := range strings.SplitSeq(auth, ", ") {
		if v, ok := strings.CutPrefix(part, "SignedHeaders="); ok {
			signedHeaders = v
		}
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return "no X-Amz-Date"
	}
	hash := r.Header.Get("X-Amz-Content-Sha256")
	if hash != sigv4.UnsignedPayload {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return "unreadable body"
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if sigv4.PayloadHash(body) != hash {
			return "the body's SHA-256 is not X-Amz-Content-Sha256"
		}
	}
	again := &http.Request{Method: r.Method, URL: r.URL, Host: r.Host, Header: http.Header{}}
	for name := range strings.SplitSeq(signedHeaders, ";") {
		if name != "host" {
			again.Header[http.CanonicalHeaderKey(name)] = r.Header.Values(name)
		}
	}
	sigv4.Sign(again, sigv4.Credentials{AccessKeyID: testKey, SecretAccessKey: testSecret}, scope[2], scope[3], hash, at)
	if again.Header.Get("Authorization") != auth {
		return "the request's signature does not match"
	}
	return ""
}

// Store is a store of Config, for writing fixtures.
func (s *Server) Store() *s3.Store { return s.store }

// Before sets a function run before each request is served, with the request's kind
// and URL (s3://bucket/key): a test changes objects there at a chosen moment, say
// between a statement's listing and its reads. It runs outside the server's lock, so
// it may write through Put and Delete.
func (s *Server) Before(f func(kind, url string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.before = f
}

// kindOf names a request's kind as Counts counts it: KindList, KindGet, KindHead,
// "PUT" (writes and deletes) or "OTHER".
func kindOf(r *http.Request) string {
	path := strings.TrimPrefix(r.URL.Path, "/")
	bucket, key, _ := strings.Cut(path, "/")
	switch {
	case r.Method == http.MethodGet && key == "" && bucket != "":
		return KindList
	case r.Method == http.MethodGet:
		return KindGet
	case r.Method == http.MethodHead:
		return KindHead
	case r.Method == http.MethodPut || r.Method == http.MethodDelete || r.Method == http.MethodPost:
		return "PUT"
	}
	return "OTHER"
}

// begin counts a request, notes it in flight and says whether a rule fails it.
func (s *Server) begin(r *http.Request) (Fault, func(kind, url string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kind := kindOf(r)
	switch kind {
	case KindList:
		s.counts.List++
	case KindGet:
		s.counts.Get++
	case KindHead:
		s.counts.Head++
	case "PUT":
		s.counts.Put++
	default:
		s.counts.Other++
	}
	s.inFlight++
	f := s.fault(kind)
	line := r.Method + " " + r.URL.RequestURI() + rangeOf(r)
	if f != 0 {
		line += " -> " + f.String()
	}
	s.log = append(s.log, line)
	return f, s.before
}

func (s *Server) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
}

func rangeOf(r *http.Request) string {
	if g := r.Header.Get("Range"); g != "" {
		return " " + g
	}
	return ""
}

// Counts are the requests served so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Log is every request served so far: method, URI and range.
func (s *Server) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// Reset forgets the requests counted so far and the faults made.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts, s.log, s.faulted = Counts{}, nil, 0
}

// Put writes one object.
func (s *Server) Put(t testing.TB, url string, b []byte) {
	t.Helper()
	if err := s.store.Put(context.Background(), url, b); err != nil {
		t.Fatal(err)
	}
}

// Delete removes one object.
func (s *Server) Delete(t testing.TB, url string) {
	t.Helper()
	if err := s.store.Delete(context.Background(), url); err != nil {
		t.Fatal(err)
	}
}

// Upload writes every file under dir (a file alone when dir is one) to url, at the
// same relative paths, and returns how many it wrote.
func (s *Server) Upload(t testing.TB, dir, url string) int {
	t.Helper()
	n, err := s.store.PutDir(context.Background(), dir, url)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ifMatch answers a read whose If-Match names another ETag than the object's with
// 412 Precondition Failed and no body, as S3 does.
type ifMatch struct {
	http.ResponseWriter
	want   string
	failed bool
	wrote  bool
}

func (m *ifMatch) WriteHeader(code int) {
	if m.wrote {
		return
	}
	m.wrote = true
	if tag := m.Header().Get("ETag"); code < 300 && tag != "" && strings.Trim(tag, `"`) != strings.Trim(m.want, `"`) {
		m.failed = true
		body := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the preconditions you specified did not hold</Message><Condition>If-Match</Condition></Error>`)
		h := m.Header()
		h.Del("Content-Range")
		h.Del("ETag")
		h.Set("Content-Type", "application/xml")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		m.ResponseWriter.WriteHeader(http.StatusPreconditionFailed)
		m.ResponseWriter.Write([]byte(body))
		return
	}
	m.ResponseWriter.WriteHeader(code)
}

func (m *ifMatch) Write(b []byte) (int, error) {
	if !m.wrote {
		m.WriteHeader(http.StatusOK)
	}
	if m.failed {
		return len(b), nil
	}
	return m.ResponseWriter.Write(b)
}

// Delay is a transport that waits d before each request it passes on to next
// (http.DefaultTransport when nil), as a store far away answers late: the loopback
// server answers at once, which hides what a round trip costs. A request canceled
// while it waits fails with its context's error.
func Delay(next http.RoundTripper, d time.Duration) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return delay{next: next, d: d}
}

type delay struct {
	next http.RoundTripper
	d    time.Duration
}

func (l delay) RoundTrip(r *http.Request) (*http.Response, error) {
	t := time.NewTimer(l.d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	return l.next.RoundTrip(r)
}

// Throttle is a transport that delivers each response body at no more than
// bytesPerSec (next is http.DefaultTransport when nil), as one connection to a
// store far away does: the loopback server sends as fast as memory copies, which
// hides what reading a gap between two ranges costs. Each request has its own
// rate, as each connection to a store has.
func Throttle(next http.RoundTripper, bytesPerSec int64) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return throttle{next: next, rate: bytesPerSec}
}

type throttle struct {
	next http.RoundTripper
	rate int64
}

func (t throttle) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || t.rate <= 0 {
		return resp, err
	}
	resp.Body = &slowBody{ReadCloser: resp.Body, rate: t.rate, start: time.Now(), ctx: r.Context()}
	return resp, nil
}

// slowBody holds each read back until the bytes read so far are due at the rate.
type slowBody struct {
	io.ReadCloser
	rate  int64
	start time.Time
	read  int64
	ctx   context.Context
}

func (b *slowBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	due := b.start.Add(time.Duration(float64(b.read) / float64(b.rate) * float64(time.Second)))
	if wait := time.Until(due); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-b.ctx.Done():
			return n, b.ctx.Err()
		}
	}
	return n, err
}
