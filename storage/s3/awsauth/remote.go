package awsauth

import (
	"cmp"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/loredb/lore/storage/s3/sigv4"
)

// send sends the request mk makes, again once after no answer or a 5xx one when
// tries is 2, each try within timeout, and returns the last answer's status and body
// (its first MiB).
func (o Options) send(ctx context.Context, tries int, timeout time.Duration, mk func(context.Context) (*http.Request, error)) (status int, body []byte, err error) {
	for try := 1; ; try++ {
		status, body, err = o.sendOnce(ctx, timeout, mk)
		if err == nil && status < 500 || try >= tries || ctx.Err() != nil {
			return status, body, err
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return status, body, err
		}
	}
}

// newRequest makes send's requests of a method, a URL and headers, without a body.
func newRequest(method, u string, h http.Header) func(context.Context) (*http.Request, error) {
	return func(ctx context.Context) (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, method, u, nil)
		if err == nil {
			r.Header = h
		}
		return r, err
	}
}

func (o Options) sendOnce(ctx context.Context, timeout time.Duration, mk func(context.Context) (*http.Request, error)) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := mk(ctx)
	if err != nil {
		return 0, nil, err
	}
	resp, err := o.Client.Do(r)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, body, err
}

// answerError describes a service's refusal by its status and its code and message,
// with any secret that was sent to it, and any signature, blanked out.
func answerError(status int, code, msg string, secrets ...string) error {
	text := fmt.Sprintf("HTTP %d", status)
	if code != "" {
		text += " " + code
	}
	if msg != "" {
		text += ": " + msg
	}
	for _, s := range secrets {
		if len(s) >= 4 { // shorter is no secret, and would blank half the text
			text = strings.ReplaceAll(text, s, "[redacted]")
		}
	}
	var b strings.Builder
	for {
		before, after, found := strings.Cut(text, "Signature=")
		b.WriteString(before)
		if !found {
			break
		}
		b.WriteString("Signature=[redacted]")
		text = strings.TrimLeft(after, "0123456789abcdef")
	}
	return errors.New(shorten(b.String()))
}

// newCredentials are the credentials of a service's answer, whose expiry is RFC
// 3339 or empty.
func newCredentials(id, secret, token, expires, source string) (sigv4.Credentials, error) {
	if id == "" || secret == "" {
		return sigv4.Credentials{}, errors.New("the answer holds no access key and secret")
	}
	c := sigv4.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: token, Source: source}
	if expires != "" {
		t, err := time.Parse(time.RFC3339, expires)
		if err != nil {
			return sigv4.Credentials{}, fmt.Errorf("the expiry %q is not an RFC 3339 time", expires)
		}
		c.Expires = t
	}
	return c, nil
}

// webIdentity assumes a role with the web identity token in a file, read again on
// each call since it is rotated.
func (o Options) webIdentity(ctx context.Context, role, session, file string) (sigv4.Credentials, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return sigv4.Credentials{}, fmt.Errorf("cannot read the web identity token: %w", err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return sigv4.Credentials{}, fmt.Errorf("the web identity token file %s is empty", file)
	}
	form := url.Values{"Action": {"AssumeRoleWithWebIdentity"}, "Version": {"2011-06-15"}, "RoleArn": {role},
		"RoleSessionName": {o.sessionName(session)}, "WebIdentityToken": {token}}
	return o.sts(ctx, form, sigv4.Credentials{}, "web identity")
}

// stsEndpoint is where STS requests go and the region they are signed for.
func (o Options) stsEndpoint() (endpoint, region string) {
	region = Region(o)
	if ep := cmp.Or(o.Getenv("AWS_ENDPOINT_URL_STS"), o.Getenv("AWS_ENDPOINT_URL")); ep != "" {
		return ep, cmp.Or(region, "us-east-1")
	}
	if region == "" {
		return "https://sts.amazonaws.com", "us-east-1"
	}
	return "https://" + ServiceHost("sts", region), region
}

// ServiceHost is the host name of an AWS service in a region: service.region.
// amazonaws.com, or amazonaws.com.cn in China's regions.
func ServiceHost(service, region string) string {
	if strings.HasPrefix(region, "cn-") {
		return service + "." + region + ".amazonaws.com.cn"
	}
	return service + "." + region + ".amazonaws.com"
}

// sts sends a request of STS's Query protocol, signed with signer unless that is
// anonymous, and reads the credentials it answers.
func (o Options) sts(ctx context.Context, form url.Values, signer sigv4.Credentials, source string) (sigv4.Credentials, error) {
	endpoint, region := o.stsEndpoint()
	action := form.Get("Action")
	body := form.Encode()
	status, data, err := o.send(ctx, 2, 30*time.Second, func(ctx context.Context) (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		sigv4.Sign(r, signer, region, "sts", sigv4.PayloadHash([]byte(body)), o.Now())
		return r, nil
	})
	if err != nil {
		return sigv4.Credentials{}, fmt.Errorf("STS %s: %w", action, err)
	}
	type creds struct {
		AccessKeyID                               string `xml:"AccessKeyId"`
		SecretAccessKey, SessionToken, Expiration string
	}
	var resp struct {
		Role  creds `xml:"AssumeRoleResult>Credentials"`
		Web   creds `xml:"AssumeRoleWithWebIdentityResult>Credentials"`
		Error struct{ Code, Message string }
	}
	xerr := xml.Unmarshal(data, &resp)
	if status != http.StatusOK {
		return sigv4.Credentials{}, fmt.Errorf("STS %s: %w", action, answerError(status, resp.Error.Code, resp.Error.Message,
			form.Get("WebIdentityToken"), signer.SecretAccessKey, signer.SessionToken))
	}
	if xerr != nil {
		return sigv4.Credentials{}, fmt.Errorf("STS %s: cannot read the answer: %w", action, xerr)
	}
	c := cmp.Or(resp.Role, resp.Web)
	got, err := newCredentials(c.AccessKeyID, c.SecretAccessKey, c.SessionToken, c.Expiration, source)
	if err != nil {
		return got, fmt.Errorf("STS %s: %w", action, err)
	}
	return got, nil
}

// ssoRoleCredentials asks the SSO portal for a role's credentials with an access token.
func (o Options) ssoRoleCredentials(ctx context.Context, region, account, role, token, login string) (sigv4.Credentials, error) {
	endpoint := cmp.Or(o.Getenv("AWS_ENDPOINT_URL_SSO"), o.Getenv("AWS_ENDPOINT_URL"), "https://portal.sso."+region+".amazonaws.com")
	u := strings.TrimSuffix(endpoint, "/") + "/federation/credentials?" + url.Values{"account_id": {account}, "role_name": {role}}.Encode()
	status, data, err := o.send(ctx, 2, 30*time.Second, newRequest(http.MethodGet, u, http.Header{"X-Amz-Sso_bearer_token": {token}}))
	if err != nil {
		return sigv4.Credentials{}, fmt.Errorf("SSO GetRoleCredentials: %w", err)
	}
	var resp struct {
		RoleCredentials struct {
			AccessKeyID     string `json:"accessKeyId"`
			SecretAccessKey string `json:"secretAccessKey"`
			SessionToken    string `json:"sessionToken"`
			Expiration      int64  `json:"expiration"` // milliseconds since 1970
		} `json:"roleCredentials"`
		Message string `json:"message"`
	}
	jerr := json.Unmarshal(data, &resp)
	switch {
	case status == http.StatusUnauthorized:
		return sigv4.Credentials{}, fmt.Errorf("SSO GetRoleCredentials: %w (the token is no longer valid: %s)", answerError(status, "", resp.Message, token), login)
	case status != http.StatusOK:
		return sigv4.Credentials{}, fmt.Errorf("SSO GetRoleCredentials: %w", answerError(status, "", resp.Message, token))
	case jerr != nil:
		return sigv4.Credentials{}, fmt.Errorf("SSO GetRoleCredentials: cannot read the answer: %w", jerr)
	}
	rc := resp.RoleCredentials
	c, err := newCredentials(rc.AccessKeyID, rc.SecretAccessKey, rc.SessionToken, "", "sso")
	if err != nil {
		return c, fmt.Errorf("SSO GetRoleCredentials: %w", err)
	}
	if rc.Expiration != 0 {
		c.Expires = time.UnixMilli(rc.Expiration)
	}
	return c, nil
}

// readRemote reads the credentials a container's endpoint or the instance metadata
// service answered, quoting its refusal without the token it was sent.
func readRemote(status int, data []byte, source, token string) (sigv4.Credentials, error) {
	var resp struct {
		Code, Message                      string
		AccessKeyID                        string `json:"AccessKeyId"`
		SecretAccessKey, Token, Expiration string
	}
	jerr := json.Unmarshal(data, &resp)
	switch {
	case status != http.StatusOK || resp.Code != "" && resp.Code != "Success":
		return sigv4.Credentials{}, answerError(status, resp.Code, resp.Message, token)
	case jerr != nil:
		return sigv4.Credentials{}, fmt.Errorf("cannot read the answer: %w", jerr)
	}
	return newCredentials(resp.AccessKeyID, resp.SecretAccessKey, resp.Token, resp.Expiration, source)
}

// container is the fourth link: the credentials endpoint of an ECS task or an EKS
// pod.
func (o Options) container(ctx context.Context) (sigv4.Credentials, error) {
	u := o.Getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
	switch {
	case u != "":
		u = "http://169.254.170.2" + u
	case o.Getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI") == "":
		return sigv4.Credentials{}, errSkip
	default:
		u = o.Getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI")
		if err := checkContainerURL(u); err != nil {
			return sigv4.Credentials{}, err
		}
	}
	token := o.Getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")
	if file := o.Getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return sigv4.Credentials{}, fmt.Errorf("cannot read the authorization token: %w", err)
		}
		token = strings.TrimSpace(string(data))
	}
	h := http.Header{"Accept": {"application/json"}}
	if token != "" {
		h.Set("Authorization", token)
	}
	status, data, err := o.send(ctx, 2, 10*time.Second, newRequest(http.MethodGet, u, h))
	if err != nil {
		return sigv4.Credentials{}, err
	}
	return readRemote(status, data, "container", token)
}

// checkContainerURL refuses a full container credentials URI of plain HTTP to a
// host that is neither a loopback address nor one of the container endpoints of
// ECS and EKS: the token would cross a network unencrypted.
func checkContainerURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("AWS_CONTAINER_CREDENTIALS_FULL_URI is not a URL")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if u.Hostname() == "localhost" {
			return nil
		}
		ip, err := netip.ParseAddr(u.Hostname())
		switch ip = ip.Unmap(); {
		case err != nil:
		case ip.IsLoopback(), ip.String() == "169.254.170.2", ip.String() == "169.254.170.23", ip.String() == "fd00:ec2::23":
			return nil
		}
	}
	return fmt.Errorf("AWS_CONTAINER_CREDENTIALS_FULL_URI %s must be https, or http to a loopback address or 169.254.170.2, 169.254.170.23 or fd00:ec2::23", raw)
}

// instanceMetadata is the last link: the role of an EC2 instance, from its
// metadata service. A service that does not answer (no EC2 here), or answers
// without a role (another cloud's service at the same address, or no role
// attached), is ErrNone.
func (o Options) instanceMetadata(ctx context.Context) (sigv4.Credentials, error) {
	if strings.EqualFold(o.Getenv("AWS_EC2_METADATA_DISABLED"), "true") {
		return sigv4.Credentials{}, ErrNone
	}
	base := o.Getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT")
	if base == "" {
		base = "http://169.254.169.254"
		if strings.EqualFold(o.Getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE"), "IPv6") {
			base = "http://[fd00:ec2::254]"
		}
	}
	base = strings.TrimSuffix(base, "/")
	link, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ask := func(method, path string, h http.Header) (int, []byte, error) {
		return o.send(link, 1, time.Second, newRequest(method, base+path, h))
	}
	absent := func() (sigv4.Credentials, error) {
		if err := ctx.Err(); err != nil {
			return sigv4.Credentials{}, err
		}
		return sigv4.Credentials{}, ErrNone
	}

	// IMDSv2: a session token first. Without one (IMDSv1 only, or a container
	// whose extra network hop drops the answers to PUTs) the plain requests may
	// still be answered.
	h := http.Header{}
	status, token, err := ask(http.MethodPut, "/latest/api/token", http.Header{"X-Aws-Ec2-Metadata-Token-Ttl-Seconds": {"21600"}})
	if err == nil && status == http.StatusOK {
		h.Set("X-Aws-Ec2-Metadata-Token", string(token))
	}
	const creds = "/latest/meta-data/iam/security-credentials/"
	status, list, err := ask(http.MethodGet, creds, h)
	if err != nil || status != http.StatusOK {
		return absent()
	}
	role, _, _ := strings.Cut(strings.TrimSpace(string(list)), "\n")
	if role = strings.TrimSpace(role); role == "" {
		return absent()
	}
	status, data, err := ask(http.MethodGet, creds+url.PathEscape(role), h)
	if err == nil {
		var c sigv4.Credentials
		if c, err = readRemote(status, data, "instance metadata", string(token)); err == nil {
			return c, nil
		}
	}
	if ctx.Err() != nil {
		return sigv4.Credentials{}, ctx.Err()
	}
	return sigv4.Credentials{}, fmt.Errorf("role %s: %w", role, err)
}
