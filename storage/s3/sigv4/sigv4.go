// Package sigv4 signs HTTP requests with AWS Signature Version 4, the scheme S3 and
// every S3-compatible store accept, and STS and the other services of a credential
// chain too. It signs headers (the Authorization header), not query strings.
package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Credentials are an access key, its secret and, for temporary credentials, a
// session token and when they expire.
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// Expires is when temporary credentials stop working; zero for long-term keys.
	Expires time.Time
	// Source names where the credentials came from ("environment", "profile dev", …);
	// never part of a signature, never a secret.
	Source string
}

// Anonymous reports credentials without a key: requests go unsigned.
func (c Credentials) Anonymous() bool { return c.AccessKeyID == "" }

// ExpiresBefore reports credentials that expire before t.
func (c Credentials) ExpiresBefore(t time.Time) bool {
	return !c.Expires.IsZero() && c.Expires.Before(t)
}

// String never shows the secret or the token.
func (c Credentials) String() string {
	if c.Anonymous() {
		return "anonymous"
	}
	return "key " + c.AccessKeyID + " from " + c.Source
}

const (
	// UnsignedPayload is the payload hash of a request whose body is not signed.
	UnsignedPayload = "UNSIGNED-PAYLOAD"
	// EmptyPayload is the SHA-256 of no bytes: the payload hash of a request without
	// a body.
	EmptyPayload = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	algorithm    = "AWS4-HMAC-SHA256"
	amzDate      = "20060102T150405Z"
)

// PayloadHash is the hex SHA-256 of a request's body.
func PayloadHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// Sign signs r for service in region at now: it sets X-Amz-Date,
// X-Amz-Content-Sha256 (payloadHash), X-Amz-Security-Token when c carries a session
// token, and Authorization. The signature covers the method, the path as it will be
// sent (r.URL.EscapedPath), the query, Host, and the headers Content-Type,
// Content-MD5, Range, If-Match, If-None-Match and every X-Amz-* one. Anonymous
// credentials leave r unsigned.
func Sign(r *http.Request, c Credentials, region, service, payloadHash string, now time.Time) {
	if c.Anonymous() {
		return
	}
	now = now.UTC()
	stamp := now.Format(amzDate)
	day := stamp[:8]
	r.Header.Set("X-Amz-Date", stamp)
	r.Header.Set("X-Amz-Content-Sha256", payloadHash)
	if c.SessionToken != "" {
		r.Header.Set("X-Amz-Security-Token", c.SessionToken)
	} else {
		r.Header.Del("X-Amz-Security-Token")
	}
	r.Header.Del("Authorization")
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}

	names := []string{"host"}
	for k := range r.Header {
		lk := strings.ToLower(k)
		if signed(lk) {
			names = append(names, lk)
		}
	}
	slices.Sort(names)
	var canon strings.Builder
	canon.WriteString(r.Method)
	canon.WriteByte('\n')
	path := r.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	canon.WriteString(path)
	canon.WriteByte('\n')
	canon.WriteString(canonicalQuery(r.URL.RawQuery))
	canon.WriteByte('\n')
	for _, n := range names {
		canon.WriteString(n)
		canon.WriteByte(':')
		if n == "host" {
			canon.WriteString(host)
		} else {
			canon.WriteString(headerValue(r.Header.Values(n)))
		}
		canon.WriteByte('\n')
	}
	canon.WriteByte('\n')
	signedNames := strings.Join(names, ";")
	canon.WriteString(signedNames)
	canon.WriteByte('\n')
	canon.WriteString(payloadHash)

	scope := day + "/" + region + "/" + service + "/aws4_request"
	sum := sha256.Sum256([]byte(canon.String()))
	toSign := algorithm + "\n" + stamp + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	sig := hmacSHA256(signingKey(c.SecretAccessKey, day, region, service), toSign)
	r.Header.Set("Authorization", algorithm+" Credential="+c.AccessKeyID+"/"+scope+
		", SignedHeaders="+signedNames+", Signature="+hex.EncodeToString(sig))
}

// signed reports a header the signature covers besides Host.
func signed(lk string) bool {
	switch lk {
	case "content-type", "content-md5", "range", "if-match", "if-none-match":
		return true
	}
	return strings.HasPrefix(lk, "x-amz-")
}

// headerValue is a header's values as signed: each trimmed, runs of spaces made one,
// joined by commas.
func headerValue(vs []string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(out, ",")
}

// canonicalQuery is the query with every name and value encoded as the signature
// wants (RFC 3986, spaces as %20) and sorted by name, then value.
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	type pair struct{ k, v string }
	var ps []pair
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		ps = append(ps, pair{Escape(unescape(k), true), Escape(unescape(v), true)})
	}
	slices.SortFunc(ps, func(a, b pair) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.v, b.v)
	})
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String()
}

// unescape decodes a query's %XX escapes and '+' as a space; a malformed escape is
// kept as written.
func unescape(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '+':
			b = append(b, ' ')
		case s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, s[i])
		}
	}
	return string(b)
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// Escape encodes s as RFC 3986 wants in a signed request: every byte but the
// unreserved letters, digits and -._~ becomes %XX (upper-case hex); '/' too when
// slash is set, and is kept otherwise (an object key's path).
func Escape(s string, slash bool) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !unreserved(s[i]) && (slash || s[i] != '/') {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hexDigits = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) || (!slash && c == '/') {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hexDigits[c>>4], hexDigits[c&15])
	}
	return string(b)
}

func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// keys caches the day's signing key of each secret, region and service: deriving
// one costs four HMACs.
var keys struct {
	sync.Mutex
	m map[[4]string][]byte
}

func signingKey(secret, day, region, service string) []byte {
	id := [4]string{secret, day, region, service}
	keys.Lock()
	defer keys.Unlock()
	if k, ok := keys.m[id]; ok {
		return k
	}
	k := hmacSHA256([]byte("AWS4"+secret), day)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	k = hmacSHA256(k, "aws4_request")
	if keys.m == nil || len(keys.m) > 64 {
		keys.m = map[[4]string][]byte{}
	}
	keys.m[id] = k
	return k
}
