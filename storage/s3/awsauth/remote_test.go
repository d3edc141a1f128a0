package awsauth

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestWebIdentityFromEnv(t *testing.T) {
	o, c := setup(t, env{})
	sts := newSTS(t, c, "us-east-1")
	token := write(t, filepath.Join(o.Home, "token"), "jwt-1\n")
	e := env{"AWS_WEB_IDENTITY_TOKEN_FILE": token, "AWS_ROLE_ARN": "arn:aws:iam::1:role/irsa", "AWS_ENDPOINT_URL": sts.URL, "AWS_EC2_METADATA_DISABLED": "true"}
	o.Getenv = e.get
	p := Chain(o)
	got, err := p.Retrieve(t.Context())
	if err != nil || got.AccessKeyID != "ASIAIRSA" || got.Source != "web identity" || !got.Expires.Equal(t0.Add(time.Hour)) {
		t.Fatal(got, err)
	}
	// The token file is read again for a refresh: it is rotated.
	write(t, token, "jwt-2")
	c.Add(58 * time.Minute)
	if _, err := p.Retrieve(t.Context()); err != nil {
		t.Fatal(err)
	}
	calls := sts.log()
	if len(calls) != 2 || calls[0].Get("WebIdentityToken") != "jwt-1" || calls[1].Get("WebIdentityToken") != "jwt-2" ||
		calls[0].Get("Signer") != "" || calls[0].Get("RoleArn") != "arn:aws:iam::1:role/irsa" ||
		calls[0].Get("RoleSessionName") != "lore-"+strconv.FormatInt(t0.UnixMilli(), 10) {
		t.Fatal(calls)
	}
	e["AWS_ROLE_SESSION_NAME"] = "pod-7"
	retrieve(t, o)
	if calls := sts.log(); calls[2].Get("RoleSessionName") != "pod-7" {
		t.Fatal(calls[2])
	}

	delete(e, "AWS_ROLE_ARN")
	retrieveErr(t, o, "AWS_WEB_IDENTITY_TOKEN_FILE is set but AWS_ROLE_ARN is not")
	e["AWS_ROLE_ARN"], e["AWS_WEB_IDENTITY_TOKEN_FILE"] = "arn:aws:iam::1:role/irsa", filepath.Join(o.Home, "none")
	retrieveErr(t, o, "cannot get AWS credentials from web identity: cannot read the web identity token")
	e["AWS_WEB_IDENTITY_TOKEN_FILE"] = token
	sts.setFail("InvalidIdentityToken", "Incorrect token audience")
	retrieveErr(t, o, "STS AssumeRoleWithWebIdentity: HTTP 400 InvalidIdentityToken: Incorrect token audience")
	e["AWS_ENDPOINT_URL"] = closedPort(t)
	retrieveErr(t, o, "STS AssumeRoleWithWebIdentity: Post")
}

// redirect sends every request to srv, as if srv were the host asked for.
type redirect struct {
	host string
	srv  string
}

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != r.host {
		return nil, errors.New("unexpected host " + req.URL.Host)
	}
	u, _ := url.Parse(r.srv)
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = u.Scheme, u.Host, ""
	return http.DefaultTransport.RoundTrip(req)
}

func TestContainer(t *testing.T) {
	o, c := setup(t, env{})
	ctr := newContainer(t, c, "pod-identity-token")
	tokenFile := write(t, filepath.Join(o.Home, "eks-token"), "pod-identity-token\n")

	// The relative URI of ECS is a path on 169.254.170.2.
	o.Client = &http.Client{Transport: redirect{"169.254.170.2", ctr.URL}}
	o.Getenv = env{"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/abc", "AWS_CONTAINER_AUTHORIZATION_TOKEN": "pod-identity-token",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://example.com", "AWS_EC2_METADATA_DISABLED": "true"}.get
	got := retrieve(t, o)
	if got.AccessKeyID != "ASIACONTAINER1" || got.SecretAccessKey != "container-secret" || got.SessionToken != "container-token" ||
		got.Source != "container" || !got.Expires.Equal(t0.Add(time.Hour)) {
		t.Fatalf("%+v", got)
	}

	o.Client = nil
	e := env{"AWS_CONTAINER_CREDENTIALS_FULL_URI": ctr.URL + "/v1/credentials", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": tokenFile,
		"AWS_CONTAINER_AUTHORIZATION_TOKEN": "wrong", "AWS_EC2_METADATA_DISABLED": "true"}
	o.Getenv = e.get
	if got := retrieve(t, o); got.AccessKeyID != "ASIACONTAINER2" {
		t.Fatal(got)
	}
	delete(e, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")
	retrieveErr(t, o, "the container endpoint: HTTP 401 InvalidToken: bad token [redacted]")
	e["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = "http://10.0.0.1/creds"
	retrieveErr(t, o, "must be https, or http to a loopback address")

	for u, ok := range map[string]bool{
		"https://creds.example.com/x": true, "http://127.0.0.1:8080/x": true, "http://127.0.0.2/x": true, "http://[::1]:80/x": true,
		"http://localhost:9/x": true, "http://169.254.170.2/x": true, "http://169.254.170.23/v1/credentials": true,
		"http://[fd00:ec2::23]/v1/credentials": true, "http://example.com/x": false, "http://169.254.169.254/x": false,
		"http://[fd00:ec2::24]/x": false, "ftp://127.0.0.1/x": false, "http://localhost.example.com/x": false,
	} {
		if err := checkContainerURL(u); (err == nil) != ok {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestInstanceMetadata(t *testing.T) {
	o, c := setup(t, env{})
	run := func(e env) (time.Duration, error) {
		o.Getenv = e.get
		start := time.Now()
		got, err := Chain(o).Retrieve(t.Context())
		if err == nil && (got.AccessKeyID != "ASIAIMDS" || got.SecretAccessKey != "imds-secret" || got.SessionToken != "imds-token" ||
			got.Source != "instance metadata" || !got.Expires.Equal(t0.Add(6*time.Hour))) {
			t.Errorf("%+v", got)
		}
		return time.Since(start), err
	}

	v2 := newIMDS(t, c, "web-role", false)
	if _, err := run(env{"AWS_EC2_METADATA_SERVICE_ENDPOINT": v2.URL + "/"}); err != nil || v2.hits.Load() != 3 {
		t.Fatal(err, v2.hits.Load())
	}
	v1 := newIMDS(t, c, "web-role", true)
	if _, err := run(env{"AWS_EC2_METADATA_SERVICE_ENDPOINT": v1.URL}); err != nil || v1.hits.Load() != 3 {
		t.Fatal(err, v1.hits.Load())
	}
	noRole := newIMDS(t, c, "", false)
	if _, err := run(env{"AWS_EC2_METADATA_SERVICE_ENDPOINT": noRole.URL}); !errors.Is(err, ErrNone) {
		t.Fatal(err)
	}
	if _, err := run(env{"AWS_EC2_METADATA_SERVICE_ENDPOINT": v2.URL, "AWS_EC2_METADATA_DISABLED": "true"}); !errors.Is(err, ErrNone) || v2.hits.Load() != 3 {
		t.Fatal(err, v2.hits.Load())
	}
	failing := newIMDS(t, c, "web-role", false)
	failing.fail = true
	if _, err := run(env{"AWS_EC2_METADATA_SERVICE_ENDPOINT": failing.URL}); err == nil ||
		err.Error() != "cannot get AWS credentials from instance metadata: role web-role: HTTP 200 AssumeRoleUnauthorizedAccess: no: [redacted]" {
		t.Fatal(err)
	}
	other := newContainer(t, c, "not-for-you") // another cloud's metadata service: it refuses
	if _, err := run(env{"AWS_EC2_METADATA_SERVICE_ENDPOINT": other.URL}); !errors.Is(err, ErrNone) {
		t.Fatal(err)
	}

	// Not EC2: nothing listens, or nothing answers.
	if took, err := run(env{"AWS_EC2_METADATA_SERVICE_ENDPOINT": closedPort(t)}); !errors.Is(err, ErrNone) || took > time.Second {
		t.Fatal(err, took)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	if took, err := run(env{"AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://" + l.Addr().String()}); !errors.Is(err, ErrNone) || took > 3*time.Second {
		t.Fatal(err, took)
	}
	// A caller who gives up gets its own error, not ErrNone.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	o.Getenv = env{"AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://" + l.Addr().String()}.get
	if _, err := Chain(o).Retrieve(ctx); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
