package sigv4

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

var example = Credentials{AccessKeyID: "AKIAIOSFODNN7EXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}

// The GET Object example of Amazon S3's documentation of header signing, whose
// signature it states.
func TestDocumentedExample(t *testing.T) {
	r, _ := http.NewRequest("GET", "https://examplebucket.s3.amazonaws.com/test.txt", nil)
	r.Header.Set("Range", "bytes=0-9")
	Sign(r, example, "us-east-1", "s3", EmptyPayload, time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC))
	want := "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, " +
		"SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, " +
		"Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
	if got := r.Header.Get("Authorization"); got != want {
		t.Fatalf("Authorization\n got %s\nwant %s", got, want)
	}
	if r.Header.Get("X-Amz-Date") != "20130524T000000Z" {
		t.Fatal(r.Header.Get("X-Amz-Date"))
	}
}

// Random requests are signed as the AWS SDK's signer signs them: keys of any bytes,
// queries of listings, conditional and ranged headers, session tokens.
func TestAgreesWithSDK(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "Z", "0", "/", " ", "+", "%", "=", "&", "~", ".", "-", "_", "é", "日", "!", "*", "'", "(", ")", ":", "@", ",", "$", "?", "#"}
	word := func() string {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	sdk := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	for i := range 300 {
		key := word()
		u := &url.URL{Scheme: "https", Host: "bucket.s3.eu-west-1.amazonaws.com", Path: "/" + key, RawPath: "/" + Escape(key, false)}
		if i%3 == 0 {
			q := url.Values{}
			q.Set("list-type", "2")
			q.Set("prefix", word())
			q.Set("start-after", word())
			if i%2 == 0 {
				q.Set("delimiter", "/")
			}
			u.RawQuery = q.Encode()
		}
		c := example
		if i%2 == 1 {
			c.SessionToken = "token/" + word()
		}
		method := []string{"GET", "HEAD", "PUT", "DELETE"}[i%4]
		hash := EmptyPayload
		if method == "PUT" {
			hash = PayloadHash([]byte(word()))
		}
		now := time.Date(2026, 1+time.Month(i%12), 1+i%28, i%24, i%60, 0, 0, time.UTC)
		mk := func() *http.Request {
			r := &http.Request{Method: method, URL: u, Host: u.Host, Header: http.Header{}}
			if i%5 == 0 {
				r.Header.Set("Range", "bytes=10-  99")
			}
			if i%7 == 0 {
				r.Header.Set("If-Match", `"abc"`)
			}
			if i%11 == 0 {
				r.Header.Set("X-Amz-Meta-Note", "  two   spaces ")
			}
			return r
		}
		ours := mk()
		Sign(ours, c, "eu-west-1", "s3", hash, now)
		theirs := mk()
		theirs.Header.Set("X-Amz-Content-Sha256", hash)
		err := sdk.SignHTTP(context.Background(), aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey,
			SessionToken: c.SessionToken}, theirs, hash, "s3", "eu-west-1", now)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := ours.Header.Get("Authorization"), theirs.Header.Get("Authorization"); a != b {
			t.Fatalf("%s %s (query %q):\n ours %s\n sdk  %s", method, u.EscapedPath(), u.RawQuery, a, b)
		}
	}
}

func TestAnonymousIsUnsigned(t *testing.T) {
	r, _ := http.NewRequest("GET", "https://b.s3.amazonaws.com/k", nil)
	Sign(r, Credentials{}, "us-east-1", "s3", EmptyPayload, time.Now())
	if len(r.Header) != 0 {
		t.Fatal(r.Header)
	}
	if s := (Credentials{AccessKeyID: "AK", SecretAccessKey: "secret", SessionToken: "tok"}).String(); strings.Contains(s, "secret") || strings.Contains(s, "tok") {
		t.Fatal(s)
	}
}

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, key, query string }{
		{"a b/c+d", "a%20b/c%2Bd", "a%20b%2Fc%2Bd"},
		{"~._-Az09", "~._-Az09", "~._-Az09"},
		{"é", "%C3%A9", "%C3%A9"},
	} {
		if got := Escape(c.in, false); got != c.key {
			t.Errorf("Escape(%q, false) = %q, want %q", c.in, got, c.key)
		}
		if got := Escape(c.in, true); got != c.query {
			t.Errorf("Escape(%q, true) = %q, want %q", c.in, got, c.query)
		}
	}
}
