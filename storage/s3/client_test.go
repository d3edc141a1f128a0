package s3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage/s3/awsauth"
	"github.com/loredb/lore/storage/s3/sigv4"
)

func TestAddressing(t *testing.T) {
	f := false
	for _, c := range []struct {
		cfg       Config
		bucket    string
		key, want string
	}{
		{Config{Region: "eu-west-1"}, "lake", "a b/c+d.parquet", "https://lake.s3.eu-west-1.amazonaws.com/a%20b/c%2Bd.parquet"},
		{Config{Region: "eu-west-1"}, "my.lake", "k", "https://s3.eu-west-1.amazonaws.com/my.lake/k"},
		{Config{Region: "cn-north-1"}, "lake", "k", "https://lake.s3.cn-north-1.amazonaws.com.cn/k"},
		{Config{Region: "us-east-1"}, "lake", "", "https://lake.s3.us-east-1.amazonaws.com/"},
		{Config{Endpoint: "http://10.0.0.7:9000", AllowHTTP: true}, "lake", "x/y", "http://10.0.0.7:9000/lake/x/y"},
		{Config{Endpoint: "https://store.example/s3/"}, "lake", "é", "https://store.example/s3/lake/%C3%A9"},
		{Config{Endpoint: "https://store.example", PathStyle: &f}, "lake", "k", "https://lake.store.example/k"},
	} {
		s, err := New(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := s.clientFor()
		if err != nil {
			t.Fatal(err)
		}
		if got := cl.url(cl.bucketRegion(c.bucket), c.bucket, c.key, nil).String(); got != c.want {
			t.Errorf("%v s3://%s/%s: got %s, want %s", c.cfg, c.bucket, c.key, got, c.want)
		}
	}
}

// awsAt is a configuration addressing AWS whose every connection reaches srv: the
// host names stay AWS's, as the signatures must.
func awsAt(srv *httptest.Server, creds awsauth.Provider) Config {
	addr := srv.Listener.Addr().String()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		},
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}
	return Config{Region: "us-east-1", Credentials: creds, Transport: tr, Attempts: 2}
}

// A bucket in another region than the configured one is followed there once, and
// the region kept: AWS answers 301 with the bucket's region.
func TestRegionRedirect(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Host+" "+strings.Split(r.Header.Get("Authorization"), "/")[2])
		mu.Unlock()
		if !strings.Contains(r.Host, "eu-west-1") {
			w.Header().Set("X-Amz-Bucket-Region", "eu-west-1")
			errorBody(w, http.StatusMovedPermanently, "PermanentRedirect")
			return
		}
		w.Header().Set("Content-Range", "bytes 0-4/5")
		w.Header().Set("ETag", `"e1"`)
		w.WriteHeader(http.StatusPartialContent)
		io.WriteString(w, "hello")
	}))
	defer srv.Close()
	s, err := New(awsAt(srv, StaticCredentials("AK", "SK")))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r, err := s.Open(context.Background(), "s3://far/k")
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 5)
		if _, err := r.ReadAt(b, 0); err != nil || string(b) != "hello" {
			t.Fatal(string(b), err)
		}
		r.Close()
	}
	want := []string{"far.s3.us-east-1.amazonaws.com us-east-1", "far.s3.eu-west-1.amazonaws.com eu-west-1", "far.s3.eu-west-1.amazonaws.com eu-west-1"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("requests %q, want %q", seen, want)
	}
}

func errorBody(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<Error><Code>%s</Code><Message>said the server</Message></Error>", code)
}

type failing struct{ err error }

func (f failing) Retrieve(context.Context) (sigv4.Credentials, error) {
	return sigv4.Credentials{}, f.err
}

// No credentials anywhere sends requests unsigned; a credential source that fails
// is reported, once, without a request made.
func TestCredentialOutcomes(t *testing.T) {
	var hits int
	var auth string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		auth = r.Header.Get("Authorization")
		w.Header().Set("Content-Length", "3")
		w.Header().Set("ETag", `"x"`)
	}))
	defer srv.Close()

	s, _ := New(awsAt(srv, failing{fmt.Errorf("none: %w", awsauth.ErrNone)}))
	if _, err := s.Stat(context.Background(), "s3://pub/k"); err != nil || hits != 1 || auth != "" {
		t.Fatalf("anonymous: err %v, %d requests, Authorization %q", err, hits, auth)
	}

	s, _ = New(awsAt(srv, failing{errors.New("credential_process exited 1")}))
	_, err := s.Stat(context.Background(), "s3://pub/k")
	if errs.CodeOf(err) != errs.SourceUnavailable || !strings.Contains(err.Error(), "cannot sign a request for s3://pub/k: credential_process exited 1") || hits != 1 {
		t.Fatalf("failing chain: %v (%d requests)", err, hits)
	}
}

// A listing asked for URL-encoded keys decodes them: a key may hold what XML cannot.
func TestListDecodesKeys(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("encoding-type") != "url" {
			t.Errorf("listing without encoding-type=url: %s", r.URL.RawQuery)
		}
		io.WriteString(w, `<ListBucketResult><EncodingType>url</EncodingType><IsTruncated>false</IsTruncated>`+
			`<Contents><Key>d/a+b%2Bc%01.parquet</Key><Size>7</Size><ETag>"e"</ETag><LastModified>2026-01-02T03:04:05.000Z</LastModified></Contents>`+
			`</ListBucketResult>`)
	}))
	defer srv.Close()
	s, _ := New(Config{Endpoint: srv.URL, AllowHTTP: true, Credentials: StaticCredentials("AK", "SK")})
	got, err := s.List(context.Background(), "s3://b/d/")
	if err != nil || len(got) != 1 || got[0].Path != "s3://b/d/a b+c\x01.parquet" || got[0].Size != 7 || got[0].ETag != "e" || got[0].ModTime.Year() != 2026 {
		t.Fatalf("%+v %v", got, err)
	}
}
