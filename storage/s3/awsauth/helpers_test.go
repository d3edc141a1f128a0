package awsauth

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loredb/lore/storage/s3/sigv4"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is a test's time, moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is a test's environment variables; it is not changed once a provider reads it.
type env map[string]string

// setup makes the options of a test: its environment, a fresh home directory, a
// clock at t0. The instance metadata service is disabled unless the test points
// the chain at one, so that no test waits for 169.254.169.254.
func setup(t *testing.T, e env) (Options, *clock) {
	t.Helper()
	if e["AWS_EC2_METADATA_SERVICE_ENDPOINT"] == "" && e["AWS_EC2_METADATA_DISABLED"] == "" {
		e["AWS_EC2_METADATA_DISABLED"] = "true"
	}
	c := &clock{t: t0}
	return Options{Getenv: func(k string) string { return e[k] }, Home: t.TempDir(), Now: c.Now}, c
}

func write(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// retrieve runs the chain once, failing the test on an error.
func retrieve(t *testing.T, o Options) sigv4.Credentials {
	t.Helper()
	c, err := Chain(o).Retrieve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// retrieveErr runs the chain once, failing the test unless it fails with an error
// holding want.
func retrieveErr(t *testing.T, o Options, want string) error {
	t.Helper()
	c, err := Chain(o).Retrieve(t.Context())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, %v; want an error with %q", c, err, want)
	}
	return err
}

func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// fakeSTS answers AssumeRole, checking the signature with the credentials it knows,
// and AssumeRoleWithWebIdentity, which must come unsigned. A role's credentials are
// named after it: key ASIA<ROLE>, secret "secret-<role>".
type fakeSTS struct {
	*httptest.Server
	region string // the region signatures must be made for
	clock  *clock

	mu    sync.Mutex
	known map[string]sigv4.Credentials
	calls []url.Values // each request's form, with Signer the signing key ("" unsigned)
	fail  [2]string    // an error code and message to answer with
	echo  bool         // the message of a failure quotes the request
}

func newSTS(t *testing.T, c *clock, region string, known ...sigv4.Credentials) *fakeSTS {
	f := &fakeSTS{region: region, clock: c, known: map[string]sigv4.Credentials{}}
	for _, k := range known {
		f.known[k.AccessKeyID] = k
	}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeSTS) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(body))
	f.mu.Lock()
	defer f.mu.Unlock()
	refuse := func(status int, code, msg string) {
		w.WriteHeader(status)
		var m strings.Builder
		xml.EscapeText(&m, []byte(msg))
		fmt.Fprintf(w, "<ErrorResponse><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error></ErrorResponse>", code, m.String())
	}
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || form.Get("Version") != "2011-06-15" {
		refuse(400, "InvalidRequest", "not a Query request")
		return
	}
	form.Set("Signer", "")
	if auth := r.Header.Get("Authorization"); auth != "" {
		_, id, _ := strings.Cut(auth, "Credential=")
		id, _, _ = strings.Cut(id, "/")
		c, ok := f.known[id]
		if !ok || !signedBy(r, body, c, f.region) {
			refuse(403, "SignatureDoesNotMatch", "bad signature")
			return
		}
		form.Set("Signer", id)
	}
	f.calls = append(f.calls, form)
	if f.fail[0] != "" {
		msg := f.fail[1]
		if f.echo {
			msg += ": " + r.Header.Get("Authorization") + " " + r.Header.Get("X-Amz-Security-Token") + " " + string(body)
		}
		refuse(400, f.fail[0], msg)
		return
	}
	action := form.Get("Action")
	switch {
	case action == "AssumeRole" && form.Get("Signer") == "":
		refuse(403, "MissingAuthenticationToken", "unsigned")
		return
	case action == "AssumeRoleWithWebIdentity" && (form.Get("Signer") != "" || form.Get("WebIdentityToken") == ""):
		refuse(400, "InvalidIdentityToken", "signed, or no token")
		return
	case action != "AssumeRole" && action != "AssumeRoleWithWebIdentity":
		refuse(400, "InvalidAction", action)
		return
	}
	role := form.Get("RoleArn")
	role = role[strings.LastIndexByte(role, '/')+1:]
	c := sigv4.Credentials{AccessKeyID: "ASIA" + strings.ToUpper(role), SecretAccessKey: "secret-" + role, SessionToken: "token-" + role}
	f.known[c.AccessKeyID] = c
	fmt.Fprintf(w, `<%sResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><%[1]sResult>
<Credentials><AccessKeyId>%s</AccessKeyId><SecretAccessKey>%s</SecretAccessKey><SessionToken>%s</SessionToken><Expiration>%s</Expiration></Credentials>
<AssumedRoleUser><Arn>x</Arn></AssumedRoleUser></%[1]sResult></%[1]sResponse>`,
		action, c.AccessKeyID, c.SecretAccessKey, c.SessionToken, f.clock.Now().Add(time.Hour).Format(time.RFC3339))
}

func (f *fakeSTS) setFail(code, msg string) {
	f.mu.Lock()
	f.fail = [2]string{code, msg}
	f.mu.Unlock()
}

func (f *fakeSTS) log() []url.Values {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]url.Values(nil), f.calls...)
}

// signedBy recomputes a request's signature with c on a copy of it.
func signedBy(r *http.Request, body []byte, c sigv4.Credentials, region string) bool {
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return false
	}
	cp, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	cp.Header.Set("Content-Type", r.Header.Get("Content-Type"))
	sigv4.Sign(cp, c, region, "sts", sigv4.PayloadHash(body), at)
	return cp.Header.Get("Authorization") == r.Header.Get("Authorization")
}

// fakeContainer is a container credentials endpoint wanting an Authorization token
// (when set), answering credentials valid for an hour by the clock, or failing with
// status fail for the first fails requests. hold, when set, delays each answer until
// it is closed.
type fakeContainer struct {
	*httptest.Server
	token string
	clock *clock
	hits  atomic.Int32
	fails int32
	fail  int
	hold  chan struct{}
}

func newContainer(t *testing.T, c *clock, token string) *fakeContainer {
	f := &fakeContainer{token: token, clock: c}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := f.hits.Add(1)
		if f.hold != nil {
			<-f.hold
		}
		switch {
		case r.Header.Get("Authorization") != f.token:
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]string{"code": "InvalidToken", "message": "bad token " + r.Header.Get("Authorization")})
		case n <= f.fails:
			w.WriteHeader(f.fail)
		default:
			json.NewEncoder(w).Encode(map[string]string{"AccessKeyId": fmt.Sprintf("ASIACONTAINER%d", n), "SecretAccessKey": "container-secret",
				"Token": "container-token", "Expiration": f.clock.Now().Add(time.Hour).Format(time.RFC3339)})
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// fakeIMDS is an instance metadata service: IMDSv2 unless v1Only, with role
// attached unless it is "".
type fakeIMDS struct {
	*httptest.Server
	v1Only bool
	role   string
	fail   bool // the credentials answer with a failure quoting the token and the secret
	clock  *clock
	hits   atomic.Int32
}

const imdsToken = "imds-session-token"

func newIMDS(t *testing.T, c *clock, role string, v1Only bool) *fakeIMDS {
	f := &fakeIMDS{role: role, v1Only: v1Only, clock: c}
	const creds = "/latest/meta-data/iam/security-credentials/"
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.hits.Add(1)
		switch {
		case r.URL.Path == "/latest/api/token" && r.Method == http.MethodPut:
			if f.v1Only {
				w.WriteHeader(http.StatusMethodNotAllowed)
			} else if r.Header.Get("X-aws-ec2-metadata-token-ttl-seconds") != "21600" {
				w.WriteHeader(http.StatusBadRequest)
			} else {
				io.WriteString(w, imdsToken)
			}
		case !f.v1Only && r.Header.Get("X-aws-ec2-metadata-token") != imdsToken:
			w.WriteHeader(http.StatusUnauthorized)
		case r.URL.Path == creds && f.role != "":
			io.WriteString(w, f.role+"\n")
		case r.URL.Path == creds+f.role && f.role != "" && f.fail:
			json.NewEncoder(w).Encode(map[string]string{"Code": "AssumeRoleUnauthorizedAccess", "Message": "no: " + imdsToken, "SecretAccessKey": "imds-secret"})
		case r.URL.Path == creds+f.role && f.role != "":
			json.NewEncoder(w).Encode(map[string]string{"Code": "Success", "AccessKeyId": "ASIAIMDS", "SecretAccessKey": "imds-secret",
				"Token": "imds-token", "Expiration": f.clock.Now().Add(6 * time.Hour).Format(time.RFC3339)})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.Close)
	return f
}
