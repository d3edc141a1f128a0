package s3

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage/s3/awsauth"
	"github.com/loredb/lore/storage/s3/sigv4"
)

// client makes the S3 REST requests a Store needs — HEAD, ranged GET, ListObjectsV2,
// PUT, DELETE and bucket creation — signed with Signature Version 4 by credentials from
// the standard chain (or unsigned when there are none), addressed by path or by
// virtual host, their failures read from S3's XML error bodies into *apiError.
type client struct {
	http      *http.Client
	base      *url.URL // an S3-compatible store's endpoint; nil for AWS
	region    string
	pathStyle bool
	creds     awsauth.Provider

	mu      sync.Mutex
	regions map[string]string // buckets AWS said live in another region
}

// apiError is a request the store answered with a status of 300 or more.
type apiError struct {
	status        int
	code, message string
	region        string // x-amz-bucket-region of a redirect
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("the store answered %d", e.status)
	if e.code != "" {
		s += " (" + e.code + ")"
	}
	if e.message != "" {
		s += ": " + e.message
	}
	return s
}

// decodeError is a 2xx answer whose body did not decode: cut short in transit, or
// garbled.
type decodeError struct{ err error }

func (e *decodeError) Error() string { return "cannot decode the store's answer: " + e.err.Error() }
func (e *decodeError) Unwrap() error { return e.err }

// newClient makes the client of a store's configuration: the region from the
// configuration, else the standard one, else us-east-1; credentials from the
// configuration, else the standard chain.
func (s *Store) newClient() (*client, error) {
	ep, err := s.cfg.endpoint()
	if err != nil {
		return nil, err
	}
	c := &client{region: s.cfg.Region, creds: s.cfg.Credentials, pathStyle: ep != ""}
	if c.region == "" {
		c.region = awsauth.Region(awsauth.Options{})
	}
	if c.region == "" {
		c.region = "us-east-1"
	}
	if c.creds == nil {
		c.creds = awsauth.Chain(awsauth.Options{})
	}
	if ep != "" {
		c.base, _ = url.Parse(strings.TrimSuffix(ep, "/"))
	}
	if s.cfg.PathStyle != nil {
		c.pathStyle = *s.cfg.PathStyle
	}
	tr := s.cfg.Transport
	if tr == nil {
		t, err := transport()
		if err != nil {
			return nil, err
		}
		tr = t
	}
	c.http = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return c, nil
}

// transport is the HTTP transport of a store: many connections kept per host (a
// reader has Config.Parallel requests in flight, and statements run several readers),
// and the certificates of AWS_CA_BUNDLE trusted when it names a file.
func transport() (*http.Transport, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	if f := os.Getenv("AWS_CA_BUNDLE"); f != "" {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, errs.New(errs.SourceUnavailable, "cannot read AWS_CA_BUNDLE %q: %v", f, err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errs.New(errs.SourceUnavailable, "AWS_CA_BUNDLE %q holds no PEM certificate", f)
		}
		t.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	return t, nil
}

// url addresses bucket and key (either may be empty) with query, in region when the
// store is AWS.
func (c *client) url(region, bucket, key string, query url.Values) *url.URL {
	u := &url.URL{Scheme: "https", RawQuery: query.Encode()}
	path := ""
	if c.base != nil {
		u.Scheme, u.Host, path = c.base.Scheme, c.base.Host, strings.TrimSuffix(c.base.Path, "/")
	} else {
		u.Host = awsauth.ServiceHost("s3", region)
	}
	if bucket != "" {
		if c.pathStyle || !hostSafe(bucket) {
			path += "/" + bucket
		} else {
			u.Host = bucket + "." + u.Host
		}
	}
	if key != "" || path == "" {
		path += "/" + key // a bucket's own requests go to /bucket, or / on its host
	}
	u.Path, u.RawPath = path, sigv4.Escape(path, false)
	return u
}

// hostSafe reports a bucket name that can lead a host name under TLS: lower-case
// letters, digits and hyphens (a dot would not match the store's certificate).
func hostSafe(bucket string) bool {
	for i := 0; i < len(bucket); i++ {
		c := bucket[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return bucket != ""
}

func (c *client) bucketRegion(bucket string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.regions[bucket]; ok {
		return r
	}
	return c.region
}

// do sends one request and returns a response of status below 300, whose body the
// caller closes; any other status is an *apiError. AWS's answer that the bucket lives
// in another region is followed once, and the region kept for the bucket.
func (c *client) do(ctx context.Context, method, bucket, key string, query url.Values, hdr http.Header, body []byte) (*http.Response, error) {
	resp, err := c.send(ctx, method, bucket, key, query, hdr, body)
	var ae *apiError
	if c.base == nil && bucket != "" && errors.As(err, &ae) && ae.region != "" && ae.region != c.bucketRegion(bucket) {
		c.mu.Lock()
		if c.regions == nil {
			c.regions = map[string]string{}
		}
		c.regions[bucket] = ae.region
		c.mu.Unlock()
		resp, err = c.send(ctx, method, bucket, key, query, hdr, body)
	}
	return resp, err
}

func (c *client) send(ctx context.Context, method, bucket, key string, query url.Values, hdr http.Header, body []byte) (*http.Response, error) {
	// One region for the address and the signature, even while a redirect changes
	// the bucket's.
	region := c.bucketRegion(bucket)
	u := c.url(region, bucket, key, query)
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return nil, &loreErr{errs.New(errs.SourceUnavailable, "cannot make a request for s3://%s/%s: %v", bucket, key, err)}
	}
	req.URL = u
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	req.Header.Set("User-Agent", "lore")
	hash := sigv4.EmptyPayload
	if body != nil {
		hash = sigv4.PayloadHash(body)
		req.ContentLength = int64(len(body))
		req.Body = http.NoBody // sent with Content-Length: 0, which S3 wants
		if len(body) > 0 {
			req.Body = io.NopCloser(bytes.NewReader(body))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		}
	}
	cred, err := c.creds.Retrieve(ctx)
	switch {
	case errors.Is(err, awsauth.ErrNone):
		cred = sigv4.Credentials{} // no credentials anywhere: requests go unsigned
	case err != nil:
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &loreErr{errs.New(errs.SourceUnavailable, "cannot sign a request for s3://%s/%s: %v", bucket, key, err)}
	}
	sigv4.Sign(req, cred, region, "s3", hash, time.Now())
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	ae := &apiError{status: resp.StatusCode, region: resp.Header.Get("X-Amz-Bucket-Region")}
	var doc struct {
		Code, Message, Region string
	}
	if b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10)); xml.Unmarshal(b, &doc) == nil {
		ae.code, ae.message = doc.Code, doc.Message
		if ae.region == "" {
			ae.region = doc.Region
		}
	}
	if ae.code == "" && resp.StatusCode == http.StatusNotFound {
		ae.code = "NotFound" // a HEAD's answer has no body
	}
	if ae.status != http.StatusMovedPermanently && ae.code != "AuthorizationHeaderMalformed" {
		ae.region = ""
	}
	return nil, ae
}

// etag is an ETag without its quotes.
func etag(quoted string) string { return strings.Trim(quoted, `"`) }

// headInfo is what a HEAD or a GET answer says of the object.
type headInfo struct {
	size    int64
	modTime time.Time
	etag    string
}

func responseInfo(resp *http.Response) headInfo {
	t, _ := http.ParseTime(resp.Header.Get("Last-Modified"))
	return headInfo{size: resp.ContentLength, modTime: t, etag: etag(resp.Header.Get("ETag"))}
}

func (c *client) head(ctx context.Context, bucket, key string) (headInfo, error) {
	resp, err := c.do(ctx, http.MethodHead, bucket, key, nil, nil, nil)
	if err != nil {
		return headInfo{}, err
	}
	resp.Body.Close()
	return responseInfo(resp), nil
}

// get reads rng ("bytes=a-b") of an object, held to etag when it is set. The caller
// closes the body.
func (c *client) get(ctx context.Context, bucket, key, rng, etag string) (*http.Response, error) {
	hdr := http.Header{"Range": {rng}}
	if etag != "" {
		hdr.Set("If-Match", `"`+etag+`"`)
	}
	return c.do(ctx, http.MethodGet, bucket, key, nil, hdr, nil)
}

func (c *client) put(ctx context.Context, bucket, key string, body []byte) error {
	if body == nil {
		body = []byte{}
	}
	resp, err := c.do(ctx, http.MethodPut, bucket, key, nil, nil, body)
	if err != nil {
		return err
	}
	return drain(resp)
}

func (c *client) delete(ctx context.Context, bucket, key string) error {
	resp, err := c.do(ctx, http.MethodDelete, bucket, key, nil, nil, nil)
	if err != nil {
		return err
	}
	return drain(resp)
}

// createBucket makes a bucket in the client's region; one the caller owns already is
// no error.
func (c *client) createBucket(ctx context.Context, bucket string) error {
	var body []byte
	if c.base == nil && c.region != "us-east-1" {
		body = []byte(`<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>` +
			c.region + `</LocationConstraint></CreateBucketConfiguration>`)
	}
	resp, err := c.do(ctx, http.MethodPut, bucket, "", nil, nil, body)
	var ae *apiError
	if errors.As(err, &ae) && ae.code == "BucketAlreadyOwnedByYou" {
		return nil
	}
	if err != nil {
		return err
	}
	return drain(resp)
}

// drain reads the rest of a body and closes it, so its connection is used again.
func drain(resp *http.Response) error {
	_, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return err
}

// listPage is one page of a ListObjectsV2 answer.
type listPage struct {
	IsTruncated           bool
	NextContinuationToken string
	EncodingType          string
	Contents              []listed
	CommonPrefixes        []struct{ Prefix string }
}

// listed is one object of a listing.
type listed struct {
	Key          string
	LastModified time.Time
	ETag         string
	Size         int64
}

// list asks for one page of keys under prefix: after start, or from a continuation
// token; grouped at delimiter when it is set; at most max keys when max > 0. Keys
// come URL-encoded (a key may hold bytes XML cannot) and are decoded here.
func (c *client) list(ctx context.Context, bucket, prefix, start, token, delimiter string, max int) (*listPage, error) {
	q := url.Values{"list-type": {"2"}, "prefix": {prefix}, "encoding-type": {"url"}}
	if delimiter != "" {
		q.Set("delimiter", delimiter)
	}
	if start != "" {
		q.Set("start-after", start)
	}
	if token != "" {
		q.Set("continuation-token", token)
	}
	if max > 0 {
		q.Set("max-keys", strconv.Itoa(max))
	}
	resp, err := c.do(ctx, http.MethodGet, bucket, "", q, nil, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var page listPage
	if err := xml.NewDecoder(resp.Body).Decode(&page); err != nil {
		return nil, &decodeError{err}
	}
	if page.EncodingType == "url" {
		for i := range page.Contents {
			if page.Contents[i].Key, err = url.QueryUnescape(page.Contents[i].Key); err != nil {
				return nil, &decodeError{err}
			}
		}
		for i := range page.CommonPrefixes {
			if page.CommonPrefixes[i].Prefix, err = url.QueryUnescape(page.CommonPrefixes[i].Prefix); err != nil {
				return nil, &decodeError{err}
			}
		}
	}
	for i := range page.Contents {
		page.Contents[i].ETag = etag(page.Contents[i].ETag)
	}
	return &page, nil
}
