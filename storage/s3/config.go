package s3

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage/s3/awsauth"
)

// Config says how to reach a store. The zero value is AWS S3 itself, found through
// the standard credential chain and region configuration.
type Config struct {
	// Endpoint is an S3-compatible store's URL (http://host:port, https://host); empty
	// is AWS. A host without a scheme is taken as https.
	Endpoint string
	// Region signs requests; empty takes the standard configuration's, else us-east-1.
	Region string
	// AllowHTTP permits an Endpoint of plain HTTP (a store on a private network or
	// loopback); without it such an endpoint is refused.
	AllowHTTP bool
	// PathStyle addresses buckets as a path (host/bucket/key) rather than a host name
	// (bucket.host/key), as most S3-compatible stores want. Nil is path style exactly
	// when an Endpoint is set.
	PathStyle *bool
	// Credentials, when set, replace the standard chain (tests; an embedding program).
	Credentials awsauth.Provider
	// Transport, when set, carries every request (tests put faults in it).
	Transport http.RoundTripper
	// Attempts is how many times one request is tried before its error is reported
	// (throttling and transient failures are retried with jittered backoff); 0 is 6.
	Attempts int
	// Timeout bounds one attempt of one request, its body included; 0 is 30 s.
	Timeout time.Duration
	// Backoff is the first retry's longest wait, doubled for each later one up to 5 s;
	// 0 is 100 ms.
	Backoff time.Duration
	// Coalesce is the largest gap between two ranges read in one request (a gap
	// costs transfer, a request costs a round trip); 0 is 1 MiB, negative none. At
	// 100 MiB/s per connection a 1 MiB gap costs ~10 ms, less than a round trip to
	// S3; measured in docs/s3.md ("Performance").
	Coalesce int64
	// Part is the largest range one request reads: a longer one is read as several
	// parts at once; 0 is 2 MiB. A row group's coalesced chunks are then fetched
	// over several connections instead of one: under 20 ms and 100 MiB/s per
	// response, 2 MiB parts took TPC-H SF 1 cold 12 % less time than 8 MiB ones,
	// for 42 % more requests (docs/s3.md).
	Part int64
	// Parallel bounds the requests one reader has in flight at once; 0 is 16.
	Parallel int
	// Cache, when set, keeps column chunks on local disk by (path, ETag, range).
	Cache *DiskCache
}

// The environment variables ConfigFromEnv reads.
const (
	EnvEndpoint  = "LORE_S3_ENDPOINT"
	EnvRegion    = "LORE_S3_REGION"
	EnvAllowHTTP = "LORE_S3_ALLOW_HTTP"
	EnvPathStyle = "LORE_S3_PATH_STYLE"
)

// ConfigFromEnv reads LORE_S3_ENDPOINT, LORE_S3_REGION, LORE_S3_ALLOW_HTTP and
// LORE_S3_PATH_STYLE. A boolean that does not read as one is an errs.Analysis error.
func ConfigFromEnv() (Config, error) {
	c := Config{Endpoint: os.Getenv(EnvEndpoint), Region: os.Getenv(EnvRegion)}
	if v := os.Getenv(EnvAllowHTTP); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, errs.New(errs.Analysis, "%s=%q: want true or false", EnvAllowHTTP, v)
		}
		c.AllowHTTP = b
	}
	if v := os.Getenv(EnvPathStyle); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, errs.New(errs.Analysis, "%s=%q: want true or false", EnvPathStyle, v)
		}
		c.PathStyle = &b
	}
	return c, nil
}

func (c Config) withDefaults() Config {
	if c.Attempts <= 0 {
		c.Attempts = 6
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.Backoff <= 0 {
		c.Backoff = 100 * time.Millisecond
	}
	if c.Coalesce == 0 {
		c.Coalesce = 1 << 20
	}
	if c.Part <= 0 {
		c.Part = 2 << 20
	}
	if c.Parallel <= 0 {
		c.Parallel = 16
	}
	return c
}

// endpoint checks and normalises the Endpoint: "" for AWS, else a URL with a scheme.
func (c Config) endpoint() (string, error) {
	ep := strings.TrimSpace(c.Endpoint)
	if ep == "" {
		return "", nil
	}
	if !strings.Contains(ep, "://") {
		ep = "https://" + ep
	}
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" {
		return "", errs.New(errs.Analysis, "S3 endpoint %q is not a URL (want http://host:port or https://host)", redact(c.Endpoint))
	}
	if u.User != nil {
		return "", errs.New(errs.Analysis, "S3 endpoint %q carries credentials: give them through the standard credential chain", redact(c.Endpoint))
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !c.AllowHTTP {
			return "", errs.New(errs.Analysis, "S3 endpoint %q is plain HTTP: set %s=true (or s3_allow_http) to allow it", ep, EnvAllowHTTP)
		}
	default:
		return "", errs.New(errs.Analysis, "S3 endpoint %q: scheme %q is neither http nor https", ep, u.Scheme)
	}
	return ep, nil
}

// redact hides whatever could be a secret in an endpoint someone wrote.
func redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = url.User("…")
		return u.String()
	}
	return s
}

func (c Config) String() string {
	ep := c.Endpoint
	if ep == "" {
		ep = "AWS"
	}
	return fmt.Sprintf("S3 at %s", redact(ep))
}

// StaticCredentials are a fixed access key and secret, for Config.Credentials.
func StaticCredentials(id, secret string) awsauth.Provider {
	return awsauth.Static(id, secret, "")
}
