package awsauth

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loredb/lore/storage/s3/sigv4"
)

func TestStatic(t *testing.T) {
	c, err := Static("AKID", "SECRET", "TOKEN").Retrieve(t.Context())
	if err != nil || c != (sigv4.Credentials{AccessKeyID: "AKID", SecretAccessKey: "SECRET", SessionToken: "TOKEN", Source: "static"}) {
		t.Fatal(c, err)
	}
	if _, err := Static("", "", "").Retrieve(t.Context()); !errors.Is(err, ErrNone) {
		t.Fatal(err)
	}
}

func TestEnvironment(t *testing.T) {
	for _, tc := range []struct {
		env  env
		want sigv4.Credentials
		err  string
	}{
		{env: env{"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "s3cr3t", "AWS_SESSION_TOKEN": "TOKEN"},
			want: sigv4.Credentials{AccessKeyID: "AKID", SecretAccessKey: "s3cr3t", SessionToken: "TOKEN", Source: "environment"}},
		{env: env{"AWS_ACCESS_KEY": "AKID", "AWS_SECRET_KEY": "s3cr3t"},
			want: sigv4.Credentials{AccessKeyID: "AKID", SecretAccessKey: "s3cr3t", Source: "environment"}},
		{env: env{"AWS_ACCESS_KEY_ID": "AKID"}, err: "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"},
		{env: env{"AWS_SECRET_ACCESS_KEY": "s3cr3t"}, err: "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"},
		{env: env{}, err: ErrNone.Error()},
	} {
		o, _ := setup(t, tc.env)
		c, err := Chain(o).Retrieve(t.Context())
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("%v: got %v, %v; want an error with %q", tc.env, c, err, tc.err)
			}
			continue
		}
		if err != nil || c != tc.want {
			t.Errorf("%v: got %v %+v, %v", tc.env, c, c, err)
		}
	}
}

// Each link is found only when the ones before it are not configured.
func TestPrecedence(t *testing.T) {
	o, c := setup(t, env{})
	sts := newSTS(t, c, "us-east-1")
	ctr := newContainer(t, c, "")
	imds := newIMDS(t, c, "web", false)
	token := write(t, filepath.Join(o.Home, "token"), "jwt")
	write(t, filepath.Join(o.Home, ".aws", "credentials"), "[default]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = s\n")
	e := env{
		"AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "s",
		"AWS_WEB_IDENTITY_TOKEN_FILE": token, "AWS_ROLE_ARN": "arn:aws:iam::1:role/irsa", "AWS_ENDPOINT_URL_STS": sts.URL,
		"AWS_CONTAINER_CREDENTIALS_FULL_URI": ctr.URL,
		"AWS_EC2_METADATA_SERVICE_ENDPOINT":  imds.URL,
	}
	o.Getenv = func(k string) string { return e[k] }
	for _, step := range []struct {
		source string
		drop   func()
	}{
		{"environment", func() { delete(e, "AWS_ACCESS_KEY_ID"); delete(e, "AWS_SECRET_ACCESS_KEY") }},
		{"web identity", func() { delete(e, "AWS_WEB_IDENTITY_TOKEN_FILE") }},
		{"profile default", func() { e["AWS_SHARED_CREDENTIALS_FILE"] = filepath.Join(o.Home, "none") }},
		{"container", func() { delete(e, "AWS_CONTAINER_CREDENTIALS_FULL_URI") }},
		{"instance metadata", func() { e["AWS_EC2_METADATA_DISABLED"] = "true" }},
	} {
		if got := retrieve(t, o); got.Source != step.source {
			t.Fatalf("got %v; want credentials from %s", got, step.source)
		}
		step.drop()
	}
	if _, err := Chain(o).Retrieve(t.Context()); !errors.Is(err, ErrNone) {
		t.Fatal(err)
	}
}

// Credentials are kept until five minutes before they expire; a failure is not
// kept, and credentials that still work outlive a failed refresh.
func TestCacheAndRefresh(t *testing.T) {
	o, c := setup(t, env{})
	ctr := newContainer(t, c, "")
	o.Getenv = env{"AWS_CONTAINER_CREDENTIALS_FULL_URI": ctr.URL, "AWS_EC2_METADATA_DISABLED": "true"}.get
	p := Chain(o)
	get := func(wantKey string, wantHits int32) {
		t.Helper()
		got, err := p.Retrieve(t.Context())
		if err != nil || got.AccessKeyID != wantKey || ctr.hits.Load() != wantHits {
			t.Fatalf("got %v, %v after %d requests; want %s after %d", got, err, ctr.hits.Load(), wantKey, wantHits)
		}
	}
	get("ASIACONTAINER1", 1)
	get("ASIACONTAINER1", 1)
	c.Add(54 * time.Minute)
	get("ASIACONTAINER1", 1)
	c.Add(2 * time.Minute) // within five minutes of the expiry
	get("ASIACONTAINER2", 2)

	// A failed refresh: the credentials in hand still work for a few minutes.
	ctr.fails, ctr.fail = 100, 500
	c.Add(56 * time.Minute)
	get("ASIACONTAINER2", 4) // tried twice
	c.Add(5 * time.Minute)   // now expired: the error shows
	if _, err := p.Retrieve(t.Context()); err == nil || !strings.Contains(err.Error(), "the container endpoint: HTTP 500") {
		t.Fatal(err)
	}
	ctr.fails = 0
	get("ASIACONTAINER7", 7)
}

func TestFailureNotCached(t *testing.T) {
	o, c := setup(t, env{})
	ctr := newContainer(t, c, "")
	ctr.fails, ctr.fail = 2, 503
	o.Getenv = env{"AWS_CONTAINER_CREDENTIALS_FULL_URI": ctr.URL, "AWS_EC2_METADATA_DISABLED": "true"}.get
	p := Chain(o)
	if _, err := p.Retrieve(t.Context()); err == nil || !strings.Contains(err.Error(), "HTTP 503") {
		t.Fatal(err)
	}
	if got, err := p.Retrieve(t.Context()); err != nil || got.AccessKeyID != "ASIACONTAINER3" {
		t.Fatal(got, err)
	}
}

// ErrNone is found once: a machine that is not EC2 is not asked again.
func TestNoneCached(t *testing.T) {
	o, c := setup(t, env{})
	imds := newIMDS(t, c, "", false)
	o.Getenv = env{"AWS_EC2_METADATA_SERVICE_ENDPOINT": imds.URL}.get
	p := Chain(o)
	for range 3 {
		if _, err := p.Retrieve(t.Context()); !errors.Is(err, ErrNone) {
			t.Fatal(err)
		}
	}
	if n := imds.hits.Load(); n != 2 {
		t.Fatalf("%d requests; want the token and the listing once", n)
	}
}

// heldContainerChain is a chain whose only source is a container endpoint that
// holds each request until ctr.hold is closed.
func heldContainerChain(t *testing.T) (p Provider, ctr *fakeContainer) {
	o, c := setup(t, env{})
	ctr = newContainer(t, c, "")
	ctr.hold = make(chan struct{})
	o.Getenv = env{"AWS_CONTAINER_CREDENTIALS_FULL_URI": ctr.URL, "AWS_EC2_METADATA_DISABLED": "true"}.get
	return Chain(o), ctr
}

// Callers during a retrieval wait for it; one whose context ends stops waiting.
func TestConcurrentRetrieve(t *testing.T) {
	p, ctr := heldContainerChain(t)
	var wg sync.WaitGroup
	got := make([]sigv4.Credentials, 32)
	errs := make([]error, len(got))
	for i := range got {
		wg.Go(func() { got[i], errs[i] = p.Retrieve(t.Context()) })
	}
	for ctr.hits.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.Retrieve(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	close(ctr.hold)
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i].AccessKeyID != "ASIACONTAINER1" {
			t.Fatal(got[i], errs[i])
		}
	}
	if n := ctr.hits.Load(); n != 1 {
		t.Fatalf("%d requests; want 1", n)
	}
}

// A retrieval whose caller gives up is tried again by a caller still waiting.
func TestAbandonedRetrieval(t *testing.T) {
	p, ctr := heldContainerChain(t)
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan error)
	go func() { _, err := p.Retrieve(ctx); first <- err }()
	for ctr.hits.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	second := make(chan sigv4.Credentials)
	go func() { got, _ := p.Retrieve(t.Context()); second <- got }()
	time.Sleep(10 * time.Millisecond)
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	close(ctr.hold)
	if got := <-second; got.AccessKeyID != "ASIACONTAINER2" {
		t.Fatal(got)
	}
}

func TestRegion(t *testing.T) {
	o, _ := setup(t, env{})
	cfg := write(t, filepath.Join(o.Home, ".aws", "config"), "[default]\nregion = eu-west-1\n[profile dev]\nregion = ap-south-1\n[other]\nregion = nowhere\n")
	for _, tc := range []struct {
		env  env
		want string
	}{
		{env{"AWS_REGION": "us-west-2", "AWS_DEFAULT_REGION": "us-east-2", "AWS_PROFILE": "dev"}, "us-west-2"},
		{env{"AWS_DEFAULT_REGION": "us-east-2", "AWS_PROFILE": "dev"}, "us-east-2"},
		{env{"AWS_PROFILE": "dev"}, "ap-south-1"},
		{env{"AWS_DEFAULT_PROFILE": "dev"}, "ap-south-1"},
		{env{}, "eu-west-1"},
		{env{"AWS_PROFILE": "other"}, ""},
		{env{"AWS_CONFIG_FILE": filepath.Join(o.Home, "none")}, ""},
		{env{"AWS_CONFIG_FILE": cfg, "AWS_PROFILE": "dev"}, "ap-south-1"},
	} {
		o.Getenv = tc.env.get
		if got := Region(o); got != tc.want {
			t.Errorf("%v: got %q; want %q", tc.env, got, tc.want)
		}
	}
}

func (e env) get(k string) string { return e[k] }

// No error quotes a secret, a token or a signature, even when a service echoes
// what it was sent.
func TestNoSecretsInErrors(t *testing.T) {
	signature := regexp.MustCompile(`[0-9a-f]{64}`)
	secrets := []string{"SOURCE-SECRET", "SOURCE-SESSION-TOKEN", "WEB-IDENTITY-JWT", "SSO-BEARER", "CONTAINER-AUTH", imdsToken, "imds-secret"}
	o, c := setup(t, env{})
	sts := newSTS(t, c, "us-east-1", sigv4.Credentials{AccessKeyID: "AKIDSRC", SecretAccessKey: "SOURCE-SECRET", SessionToken: "SOURCE-SESSION-TOKEN"})
	sts.setFail("AccessDenied", "denied")
	sts.echo = true
	token := write(t, filepath.Join(o.Home, "jwt"), "WEB-IDENTITY-JWT\n")
	write(t, filepath.Join(o.Home, ".aws", "config"), `
[profile role]
role_arn = arn:aws:iam::1:role/r
source_profile = src
[profile src]
aws_access_key_id = AKIDSRC
aws_secret_access_key = SOURCE-SECRET
aws_session_token = SOURCE-SESSION-TOKEN
[profile sso]
sso_start_url = https://example.awsapps.com/start
sso_region = us-east-1
sso_account_id = 1
sso_role_name = r
[profile half]
aws_secret_access_key = SOURCE-SECRET
`)
	write(t, filepath.Join(o.Home, ".aws", "sso", "cache", "e8be5486177c5b5392bd9aa76563515b29358e6e.json"),
		`{"accessToken": "SSO-BEARER", "expiresAt": "2030-01-01T00:00:00Z"}`)
	ssoSrv := newSSO(t, c, "other-token")
	imds := newIMDS(t, c, "role", false)
	imds.fail = true
	ctr := newContainer(t, c, "right-token")
	for _, e := range []env{
		{"AWS_PROFILE": "role", "AWS_ENDPOINT_URL_STS": sts.URL},
		{"AWS_WEB_IDENTITY_TOKEN_FILE": token, "AWS_ROLE_ARN": "arn:aws:iam::1:role/r", "AWS_ENDPOINT_URL": sts.URL},
		{"AWS_PROFILE": "sso", "AWS_ENDPOINT_URL_SSO": ssoSrv.URL},
		{"AWS_PROFILE": "half"},
		{"AWS_SECRET_ACCESS_KEY": "SOURCE-SECRET"},
		{"AWS_CONTAINER_CREDENTIALS_FULL_URI": ctr.URL, "AWS_CONTAINER_AUTHORIZATION_TOKEN": "CONTAINER-AUTH"},
		{"AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://example.com/creds", "AWS_CONTAINER_AUTHORIZATION_TOKEN": "CONTAINER-AUTH"},
		{"AWS_EC2_METADATA_SERVICE_ENDPOINT": imds.URL},
	} {
		if e["AWS_EC2_METADATA_SERVICE_ENDPOINT"] == "" {
			e["AWS_EC2_METADATA_DISABLED"] = "true"
		}
		o.Getenv = e.get
		_, err := Chain(o).Retrieve(t.Context())
		if err == nil {
			t.Fatalf("%v: no error", e)
		}
		for _, s := range secrets {
			if strings.Contains(err.Error(), s) {
				t.Errorf("%v: the error quotes %s: %v", e, s, err)
			}
		}
		if signature.MatchString(err.Error()) {
			t.Errorf("%v: the error quotes a signature: %v", e, err)
		}
	}
}
