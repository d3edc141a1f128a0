package awsauth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loredb/lore/storage/s3/sigv4"
)

func TestParseINI(t *testing.T) {
	got := parseINI(`# comment
; comment too
[default]
Region = eu-west-1
s3 =
    max_concurrent_requests = 20
    addressing_style = path
output=json
[ profile   dev ]  
AWS_ACCESS_KEY_ID=AKID = with equals
key without value
[default]
later = yes
`)
	want := map[string]section{
		"default":     {"region": "eu-west-1", "s3": "", "output": "json", "later": "yes"},
		"profile dev": {"aws_access_key_id": "AKID = with equals"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestProfiles(t *testing.T) {
	o, _ := setup(t, env{})
	write(t, filepath.Join(o.Home, ".aws", "config"), `
[default]
aws_access_key_id = AKIDCONFIGDEFAULT
aws_secret_access_key = s
[profile dev]
aws_access_key_id = AKIDCONFIGDEV
aws_secret_access_key = s
region = eu-west-1
[both]
aws_access_key_id = AKIDBARE
aws_secret_access_key = s
[profile both]
aws_access_key_id = AKIDCONFIGBOTH
aws_secret_access_key = s
aws_session_token = config-token
[profile regiononly]
region = eu-west-1
[profile half]
aws_access_key_id = AKIDHALF
`)
	write(t, filepath.Join(o.Home, ".aws", "credentials"), `
[both]
aws_access_key_id = AKIDCREDSBOTH
aws_secret_access_key = s2
[profile dev]
aws_access_key_id = AKIDNOTAPROFILE
aws_secret_access_key = s
[credsonly]
aws_access_key_id = AKIDCREDSONLY
aws_secret_access_key = s
`)
	for _, tc := range []struct {
		env        env
		key, token string
		err        string
	}{
		{env: env{}, key: "AKIDCONFIGDEFAULT"},
		{env: env{"AWS_PROFILE": "dev"}, key: "AKIDCONFIGDEV"},
		{env: env{"AWS_DEFAULT_PROFILE": "dev"}, key: "AKIDCONFIGDEV"},
		{env: env{"AWS_PROFILE": "both"}, key: "AKIDCREDSBOTH", token: "config-token"},
		{env: env{"AWS_PROFILE": "credsonly"}, key: "AKIDCREDSONLY"},
		{env: env{"AWS_PROFILE": "regiononly"}, err: ErrNone.Error()},
		{env: env{"AWS_PROFILE": "half"}, err: `profile "half": aws_access_key_id and aws_secret_access_key must be set together`},
		{env: env{"AWS_PROFILE": "missing"}, err: `profile "missing" is in neither the config file`},
		{env: env{"AWS_PROFILE": "missing", "AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "s"}, key: "AKIDENV"},
		{env: env{"AWS_CONFIG_FILE": filepath.Join(o.Home, "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(o.Home, "none")}, err: ErrNone.Error()},
	} {
		tc.env["AWS_EC2_METADATA_DISABLED"] = "true"
		o.Getenv = tc.env.get
		got, err := Chain(o).Retrieve(t.Context())
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: got %v, %v; want an error with %q", tc.env, got, err, tc.err)
		case tc.err == "" && (err != nil || got.AccessKeyID != tc.key || got.SessionToken != tc.token):
			t.Errorf("%v: got %v, %v; want key %s", tc.env, got, err, tc.key)
		}
	}
}

// Roles are assumed through chains of source profiles, each AssumeRole signed with
// the credentials of the link before.
func TestAssumeRole(t *testing.T) {
	o, c := setup(t, env{})
	base := sigv4.Credentials{AccessKeyID: "AKIDBASE", SecretAccessKey: "base-secret"}
	envKeys := sigv4.Credentials{AccessKeyID: "AKIDENV", SecretAccessKey: "env-secret", SessionToken: "env-token"}
	sts := newSTS(t, c, "eu-west-1", base, envKeys)
	ctr := newContainer(t, c, "")
	jwt := write(t, filepath.Join(o.Home, "jwt"), "profile-jwt")
	write(t, filepath.Join(o.Home, ".aws", "config"), `
[profile top]
role_arn = arn:aws:iam::1:role/top
source_profile = middle
role_session_name = my-session
[profile middle]
role_arn = arn:aws:iam::1:role/middle
source_profile = base
external_id = ext-1
duration_seconds = 900
[profile base]
aws_access_key_id = AKIDBASE
aws_secret_access_key = base-secret
[profile self]
role_arn = arn:aws:iam::1:role/self
source_profile = self
aws_access_key_id = AKIDBASE
aws_secret_access_key = base-secret
[profile cycle-a]
role_arn = arn:aws:iam::1:role/a
source_profile = cycle-b
[profile cycle-b]
role_arn = arn:aws:iam::1:role/b
source_profile = cycle-a
[profile fromenv]
role_arn = arn:aws:iam::1:role/fromenv
credential_source = Environment
[profile fromcontainer]
role_arn = arn:aws:iam::1:role/fromcontainer
credential_source = EcsContainer
[profile fromnowhere]
role_arn = arn:aws:iam::1:role/x
credential_source = Ec2InstanceMetadata
[profile fromthemoon]
role_arn = arn:aws:iam::1:role/x
credential_source = Moon
[profile web]
role_arn = arn:aws:iam::1:role/web
web_identity_token_file = `+jwt+`
[profile mfa]
role_arn = arn:aws:iam::1:role/x
source_profile = base
mfa_serial = arn:aws:iam::1:mfa/me
[profile bare]
role_arn = arn:aws:iam::1:role/x
[profile empty-source]
role_arn = arn:aws:iam::1:role/x
source_profile = regiononly
[profile regiononly]
region = eu-west-1
[profile bad-duration]
role_arn = arn:aws:iam::1:role/x
source_profile = base
duration_seconds = 1h
`)
	run := func(e env) (sigv4.Credentials, []map[string]string, error) {
		e["AWS_ENDPOINT_URL_STS"], e["AWS_REGION"], e["AWS_EC2_METADATA_DISABLED"] = sts.URL, "eu-west-1", "true"
		o.Getenv = e.get
		before := len(sts.log())
		got, err := Chain(o).Retrieve(t.Context())
		var calls []map[string]string
		for _, f := range sts.log()[before:] {
			m := map[string]string{}
			for k := range f {
				m[k] = f.Get(k)
			}
			calls = append(calls, m)
		}
		return got, calls, err
	}

	got, calls, err := run(env{"AWS_PROFILE": "top"})
	if err != nil || got.AccessKeyID != "ASIATOP" || got.SecretAccessKey != "secret-top" || got.SessionToken != "token-top" ||
		got.Source != "assume role" || !got.Expires.Equal(t0.Add(time.Hour)) {
		t.Fatalf("%+v, %v", got, err)
	}
	want := []map[string]string{
		{"Action": "AssumeRole", "Version": "2011-06-15", "RoleArn": "arn:aws:iam::1:role/middle", "RoleSessionName": "lore-" + strconv.FormatInt(t0.UnixMilli(), 10),
			"ExternalId": "ext-1", "DurationSeconds": "900", "Signer": "AKIDBASE"},
		{"Action": "AssumeRole", "Version": "2011-06-15", "RoleArn": "arn:aws:iam::1:role/top", "RoleSessionName": "my-session", "Signer": "ASIAMIDDLE"},
	}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("STS saw\n%v\nwant\n%v", calls, want)
	}

	if got, calls, err := run(env{"AWS_PROFILE": "self"}); err != nil || got.AccessKeyID != "ASIASELF" || len(calls) != 1 || calls[0]["Signer"] != "AKIDBASE" {
		t.Errorf("self: %v, %v, STS saw %v", got, err, calls)
	}
	// AssumeRoleWithWebIdentity goes unsigned, with the token of the profile's file.
	if got, calls, err := run(env{"AWS_PROFILE": "web"}); err != nil || got.AccessKeyID != "ASIAWEB" || got.Source != "web identity" ||
		len(calls) != 1 || calls[0]["Action"] != "AssumeRoleWithWebIdentity" || calls[0]["WebIdentityToken"] != "profile-jwt" || calls[0]["Signer"] != "" {
		t.Errorf("web: %v, %v, STS saw %v", got, err, calls)
	}
	// Keys in the environment come before any profile, so a credential_source of
	// them is only seen by the profile link itself.
	o.Getenv = env{"AWS_PROFILE": "fromenv", "AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env-secret", "AWS_SESSION_TOKEN": "env-token",
		"AWS_ENDPOINT_URL_STS": sts.URL, "AWS_REGION": "eu-west-1"}.get
	if got, err := Chain(o).(*chain).o.sharedFiles(t.Context()); err != nil || got.AccessKeyID != "ASIAFROMENV" || sts.log()[len(sts.log())-1].Get("Signer") != "AKIDENV" {
		t.Errorf("fromenv: %v, %v", got, err)
	}

	ctrEnv := env{"AWS_PROFILE": "fromcontainer", "AWS_CONTAINER_CREDENTIALS_FULL_URI": ctr.URL}
	sts.mu.Lock()
	sts.known["ASIACONTAINER1"] = sigv4.Credentials{AccessKeyID: "ASIACONTAINER1", SecretAccessKey: "container-secret", SessionToken: "container-token"}
	sts.mu.Unlock()
	if got, calls, err := run(ctrEnv); err != nil || got.AccessKeyID != "ASIAFROMCONTAINER" || calls[0]["Signer"] != "ASIACONTAINER1" {
		t.Errorf("credential_source EcsContainer: %v, %v, STS saw %v", got, err, calls)
	}

	for _, tc := range []struct{ profile, err string }{
		{"cycle-a", `profile "cycle-a": source profile "cycle-b": source_profile makes a cycle: cycle-a → cycle-b → cycle-a`},
		{"fromnowhere", "credential_source Ec2InstanceMetadata has no credentials"},
		{"fromthemoon", `credential_source "Moon" is none of`},
		{"mfa", "MFA code (mfa_serial) are not supported"},
		{"bare", "role_arn needs a source_profile, a credential_source or a web_identity_token_file"},
		{"empty-source", `source profile "regiononly": it has no credentials`},
		{"bad-duration", `duration_seconds "1h" is not a number`},
		{"fromenv", "credential_source Environment has no credentials"},
	} {
		if _, _, err := run(env{"AWS_PROFILE": tc.profile}); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: got %v; want an error with %q", tc.profile, err, tc.err)
		}
	}

	// An STS error names its code; the regional endpoint and signing region.
	sts.setFail("AccessDenied", "not authorized to assume the role")
	if _, _, err := run(env{"AWS_PROFILE": "top"}); err == nil ||
		!strings.Contains(err.Error(), `cannot get AWS credentials from the shared files: profile "top": source profile "middle": STS AssumeRole: HTTP 400 AccessDenied: not authorized`) {
		t.Error(err)
	}
	sts.setFail("", "")
	o.Getenv = env{"AWS_REGION": "eu-central-1"}.get
	if ep, region := o.stsEndpoint(); ep != "https://sts.eu-central-1.amazonaws.com" || region != "eu-central-1" {
		t.Error(ep, region)
	}
	o.Getenv = env{"AWS_CONFIG_FILE": filepath.Join(o.Home, "none")}.get
	if ep, region := o.stsEndpoint(); ep != "https://sts.amazonaws.com" || region != "us-east-1" {
		t.Error(ep, region)
	}
	o.Getenv = env{"AWS_REGION": "cn-north-1"}.get
	if ep, _ := o.stsEndpoint(); ep != "https://sts.cn-north-1.amazonaws.com.cn" {
		t.Error(ep)
	}
}

// newSSO is an SSO portal that wants the bearer token, answering credentials for an
// hour by the clock.
func newSSO(t *testing.T, c *clock, token string) *httptest.Server {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		q := r.URL.Query()
		switch {
		case r.URL.Path != "/federation/credentials" || q.Get("account_id") == "" || q.Get("role_name") == "":
			http.NotFound(w, r)
		case r.Header.Get("x-amz-sso_bearer_token") != token:
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]string{"message": "Session token not found or invalid: " + r.Header.Get("x-amz-sso_bearer_token")})
		default:
			json.NewEncoder(w).Encode(map[string]any{"roleCredentials": map[string]any{
				"accessKeyId": "ASIASSO" + q.Get("account_id") + strings.ToUpper(q.Get("role_name")), "secretAccessKey": "sso-secret",
				"sessionToken": "sso-token", "expiration": c.Now().Add(time.Hour).UnixMilli()}})
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestSSO(t *testing.T) {
	o, c := setup(t, env{})
	srv := newSSO(t, c, "sso-access-token")
	write(t, filepath.Join(o.Home, ".aws", "config"), `
[profile new]
sso_session = my-sso
sso_account_id = 111122223333
sso_role_name = reader
[sso-session my-sso]
sso_start_url = https://example.awsapps.com/start
sso_region = eu-west-1
sso_registration_scopes = sso:account:access
[profile legacy]
sso_start_url = https://example.awsapps.com/start
sso_region = eu-west-1
sso_account_id = 444455556666
sso_role_name = writer
[profile nosession]
sso_session = gone
sso_account_id = 1
sso_role_name = r
[profile incomplete]
sso_session = my-sso
sso_role_name = r
`)
	cache := filepath.Join(o.Home, ".aws", "sso", "cache")
	// The SHA-1 of the session name and of the start URL.
	write(t, filepath.Join(cache, "0ad374308c5a4e22f723adf10145eafad7c4031c.json"),
		`{"startUrl": "https://example.awsapps.com/start", "region": "eu-west-1", "accessToken": "sso-access-token", "expiresAt": "2026-03-01T13:00:00Z"}`)
	legacy := write(t, filepath.Join(cache, "e8be5486177c5b5392bd9aa76563515b29358e6e.json"),
		`{"accessToken": "sso-access-token", "expiresAt": "2026-03-01T13:00:00UTC"}`)
	run := func(profile string) (sigv4.Credentials, error) {
		o.Getenv = env{"AWS_PROFILE": profile, "AWS_ENDPOINT_URL": srv.URL, "AWS_EC2_METADATA_DISABLED": "true"}.get
		return Chain(o).Retrieve(t.Context())
	}
	got, err := run("new")
	if err != nil || got != (sigv4.Credentials{AccessKeyID: "ASIASSO111122223333READER", SecretAccessKey: "sso-secret", SessionToken: "sso-token",
		Expires: time.UnixMilli(t0.Add(time.Hour).UnixMilli()), Source: "sso"}) {
		t.Fatalf("%+v, %v", got, err)
	}
	if got, err := run("legacy"); err != nil || got.AccessKeyID != "ASIASSO444455556666WRITER" {
		t.Fatal(got, err)
	}
	for _, tc := range []struct{ profile, err string }{
		{"nosession", "the config file has no [sso-session gone] section"},
		{"incomplete", "SSO needs sso_start_url, sso_region, sso_account_id and sso_role_name"},
	} {
		if _, err := run(tc.profile); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: got %v; want an error with %q", tc.profile, err, tc.err)
		}
	}

	c.Add(time.Hour)
	if _, err := run("new"); err == nil || !strings.Contains(err.Error(), "has expired: run aws sso login --profile new") {
		t.Fatal(err)
	}
	write(t, legacy, `{"accessToken": "revoked-token", "expiresAt": "2030-01-01T00:00:00Z"}`)
	if _, err := run("legacy"); err == nil || !strings.Contains(err.Error(), "HTTP 401: Session token not found or invalid: [redacted] (the token is no longer valid: run aws sso login --profile legacy)") {
		t.Fatal(err)
	}
	write(t, legacy, `not json`)
	if _, err := run("legacy"); err == nil || !strings.Contains(err.Error(), "holds no token") {
		t.Fatal(err)
	}
	if err := os.Remove(legacy); err != nil {
		t.Fatal(err)
	}
	if _, err := run("legacy"); err == nil || !strings.Contains(err.Error(), "no SSO token") || !strings.Contains(err.Error(), "aws sso login") {
		t.Fatal(err)
	}
}

func TestCredentialProcess(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the commands are written for sh")
	}
	o, _ := setup(t, env{})
	out := func(name, text string) string { return "cat '" + write(t, filepath.Join(o.Home, name), text) + "'" }
	for _, tc := range []struct {
		command string
		want    sigv4.Credentials
		err     string
	}{
		{command: out("ok", `{"Version": 1, "AccessKeyId": "AKIDPROC", "SecretAccessKey": "proc-secret", "SessionToken": "proc-token", "Expiration": "2026-03-01T13:00:00Z"}`),
			want: sigv4.Credentials{AccessKeyID: "AKIDPROC", SecretAccessKey: "proc-secret", SessionToken: "proc-token", Expires: t0.Add(time.Hour), Source: "process"}},
		{command: out("forever", `{"Version": 1, "AccessKeyId": "AKIDPROC", "SecretAccessKey": "proc-secret"}`),
			want: sigv4.Credentials{AccessKeyID: "AKIDPROC", SecretAccessKey: "proc-secret", Source: "process"}},
		{command: out("v2", `{"Version": 2, "AccessKeyId": "AKIDPROC", "SecretAccessKey": "proc-secret"}`), err: "printed Version 2; only 1 is known"},
		{command: out("nokey", `{"Version": 1}`), err: "credential_process: the answer holds no access key"},
		{command: out("badtime", `{"Version": 1, "AccessKeyId": "AKIDPROC", "SecretAccessKey": "proc-secret", "Expiration": "tomorrow"}`), err: `the expiry "tomorrow" is not an RFC 3339 time`},
		{command: "echo hello", err: "credential_process printed no credentials"},
		{command: "echo first >&2; echo 'token expired, log in again' >&2; echo >&2; exit 3", err: "credential_process failed: exit status 3: token expired, log in again"},
	} {
		write(t, filepath.Join(o.Home, ".aws", "config"), "[default]\ncredential_process = "+tc.command+"\n")
		o.Getenv = env{"AWS_EC2_METADATA_DISABLED": "true"}.get
		got, err := Chain(o).Retrieve(t.Context())
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "proc-secret")):
			t.Errorf("%s: got %v, %v; want an error with %q", tc.command, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: got %+v, %v", tc.command, got, err)
		}
	}
}
