package awsauth

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loredb/lore/storage/s3/sigv4"
)

// section is the keys of one section of an INI file, lower-cased, and their values.
type section map[string]string

// parseINI reads the sections of an INI file by their names as written between the
// brackets, spaces made one. Lines starting with # or ; are comments; the indented
// lines of a nested section (a key without a value, such as s3 =) are skipped.
func parseINI(text string) map[string]section {
	out := map[string]section{}
	var cur section
	nested := false
	for line := range strings.Lines(text) {
		indented := strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';' || indented && nested:
			continue
		case line[0] == '[':
			name, _, _ := strings.Cut(line[1:], "]")
			name = strings.Join(strings.Fields(name), " ")
			if out[name] == nil {
				out[name] = section{}
			}
			cur, nested = out[name], false
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || cur == nil {
			continue
		}
		v = strings.TrimSpace(v)
		cur[strings.ToLower(strings.TrimSpace(k))] = v
		nested = v == ""
	}
	return out
}

// readINI reads the shared file the environment variable env names, else
// ~/.aws/name; a file that does not exist is no sections.
func (o Options) readINI(env, name string) (map[string]section, string, error) {
	path := o.Getenv(env)
	switch {
	case path == "" && o.Home == "":
		return nil, "", nil
	case path == "":
		path = filepath.Join(o.Home, ".aws", name)
	case strings.HasPrefix(path, "~/") && o.Home != "":
		path = filepath.Join(o.Home, path[2:])
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, path, nil
	}
	if err != nil {
		return nil, path, err
	}
	return parseINI(string(data)), path, nil
}

// configProfiles are the profiles of the config file by name: [default] or
// [profile default], and [profile NAME].
func configProfiles(cfg map[string]section) map[string]section {
	out := map[string]section{}
	if d, ok := cfg["default"]; ok {
		merge(out, "default", d)
	}
	for h, keys := range cfg {
		if name, ok := strings.CutPrefix(h, "profile "); ok {
			merge(out, name, keys)
		}
	}
	return out
}

// merge sets keys in the profile of a name, over those it has.
func merge(profiles map[string]section, name string, keys section) {
	if profiles[name] == nil {
		profiles[name] = section{}
	}
	maps.Copy(profiles[name], keys)
}

// profileName is the selected profile, and whether it was named explicitly.
func (o Options) profileName() (name string, explicit bool) {
	name = cmp.Or(o.Getenv("AWS_PROFILE"), o.Getenv("AWS_DEFAULT_PROFILE"), "default")
	return name, name != "default"
}

// shared is what the shared files say.
type shared struct {
	profiles map[string]section // the config file's keys, overlaid by the credentials file's
	sessions map[string]section // the config file's [sso-session NAME] sections
	files    [2]string          // the config and credentials files, for errors
}

func (o Options) loadShared() (shared, error) {
	cfg, cfgPath, err := o.readINI("AWS_CONFIG_FILE", "config")
	if err != nil {
		return shared{}, err
	}
	creds, credsPath, err := o.readINI("AWS_SHARED_CREDENTIALS_FILE", "credentials")
	if err != nil {
		return shared{}, err
	}
	s := shared{profiles: configProfiles(cfg), sessions: map[string]section{}, files: [2]string{cfgPath, credsPath}}
	for h, keys := range cfg {
		if name, ok := strings.CutPrefix(h, "sso-session "); ok {
			s.sessions[name] = keys
		}
	}
	for name, keys := range creds {
		merge(s.profiles, name, keys)
	}
	return s, nil
}

// sharedFiles is the third link: the selected profile.
func (o Options) sharedFiles(ctx context.Context) (sigv4.Credentials, error) {
	s, err := o.loadShared()
	if err != nil {
		return sigv4.Credentials{}, err
	}
	name, explicit := o.profileName()
	if _, ok := s.profiles[name]; !ok {
		if explicit {
			return sigv4.Credentials{}, fmt.Errorf("profile %q is in neither the config file %s nor the credentials file %s", name, s.files[0], s.files[1])
		}
		return sigv4.Credentials{}, errSkip
	}
	creds, err := s.resolve(ctx, o, name, nil)
	if err != nil && !errors.Is(err, errSkip) {
		err = fmt.Errorf("profile %q: %w", name, err)
	}
	return creds, err
}

// resolve finds the credentials of a profile by the first of its settings that
// applies; errSkip when it has none. seen are the profiles whose source it is.
func (s shared) resolve(ctx context.Context, o Options, name string, seen []string) (sigv4.Credentials, error) {
	p := s.profiles[name]
	switch {
	case p["role_arn"] != "":
		return s.assumeRole(ctx, o, name, p, append(seen, name))
	case p["sso_session"] != "" || p["sso_start_url"] != "":
		return s.sso(ctx, o, name, p)
	case p["aws_access_key_id"] != "" || p["aws_secret_access_key"] != "":
		return staticKeys(name, p)
	case p["credential_process"] != "":
		return o.process(ctx, p["credential_process"])
	}
	return sigv4.Credentials{}, errSkip
}

func staticKeys(name string, p section) (sigv4.Credentials, error) {
	id, secret := p["aws_access_key_id"], p["aws_secret_access_key"]
	if id == "" || secret == "" {
		return sigv4.Credentials{}, errors.New("aws_access_key_id and aws_secret_access_key must be set together")
	}
	return sigv4.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: p["aws_session_token"], Source: "profile " + name}, nil
}

// assumeRole assumes the profile's role_arn with the credentials of its
// source_profile or credential_source, or with its web identity token.
func (s shared) assumeRole(ctx context.Context, o Options, name string, p section, seen []string) (sigv4.Credentials, error) {
	if p["mfa_serial"] != "" {
		return sigv4.Credentials{}, errors.New("roles that need an MFA code (mfa_serial) are not supported: use a credential_process, or credentials refreshed into the environment")
	}
	role, session := p["role_arn"], p["role_session_name"]
	if file := p["web_identity_token_file"]; file != "" {
		return o.webIdentity(ctx, role, session, file)
	}
	var src sigv4.Credentials
	var err error
	switch from, how := p["source_profile"], p["credential_source"]; {
	case from == name && p["aws_access_key_id"] != "":
		src, err = staticKeys(name, p)
	case from != "":
		if slices.Contains(seen, from) {
			return sigv4.Credentials{}, fmt.Errorf("source_profile makes a cycle: %s", strings.Join(append(seen, from), " → "))
		}
		if _, ok := s.profiles[from]; !ok {
			return sigv4.Credentials{}, fmt.Errorf("source profile %q does not exist", from)
		}
		src, err = s.resolve(ctx, o, from, seen)
		if errors.Is(err, errSkip) {
			err = errors.New("it has no credentials")
		}
		if err != nil {
			err = fmt.Errorf("source profile %q: %w", from, err)
		}
	case how != "":
		src, err = o.credentialSource(ctx, how)
	default:
		return sigv4.Credentials{}, errors.New("role_arn needs a source_profile, a credential_source or a web_identity_token_file")
	}
	if err != nil {
		return sigv4.Credentials{}, err
	}
	form := url.Values{"Action": {"AssumeRole"}, "Version": {"2011-06-15"}, "RoleArn": {role}, "RoleSessionName": {o.sessionName(session)}}
	if v := p["external_id"]; v != "" {
		form.Set("ExternalId", v)
	}
	if v := p["duration_seconds"]; v != "" {
		if _, err := strconv.Atoi(v); err != nil {
			return sigv4.Credentials{}, fmt.Errorf("duration_seconds %q is not a number of seconds", v)
		}
		form.Set("DurationSeconds", v)
	}
	return o.sts(ctx, form, src, "assume role")
}

// credentialSource finds the credentials a role is assumed with from another link
// of the chain.
func (o Options) credentialSource(ctx context.Context, how string) (sigv4.Credentials, error) {
	var creds sigv4.Credentials
	var err error
	switch {
	case strings.EqualFold(how, "Environment"):
		creds, err = o.environment(ctx)
	case strings.EqualFold(how, "Ec2InstanceMetadata"):
		creds, err = o.instanceMetadata(ctx)
	case strings.EqualFold(how, "EcsContainer"):
		creds, err = o.container(ctx)
	default:
		return creds, fmt.Errorf("credential_source %q is none of Environment, Ec2InstanceMetadata and EcsContainer", how)
	}
	switch {
	case errors.Is(err, errSkip) || errors.Is(err, ErrNone):
		return creds, fmt.Errorf("credential_source %s has no credentials", how)
	case err != nil:
		return creds, fmt.Errorf("credential_source %s: %w", how, err)
	}
	return creds, nil
}

// sessionName is a role session's name: the one configured, else one of the time.
func (o Options) sessionName(name string) string {
	return cmp.Or(name, "lore-"+strconv.FormatInt(o.Now().UnixMilli(), 10))
}

// sso gets a role's credentials from AWS IAM Identity Center with the token that
// `aws sso login` cached.
func (s shared) sso(ctx context.Context, o Options, name string, p section) (sigv4.Credentials, error) {
	startURL, region, key := p["sso_start_url"], p["sso_region"], p["sso_start_url"]
	if sess := p["sso_session"]; sess != "" {
		sec, ok := s.sessions[sess]
		if !ok {
			return sigv4.Credentials{}, fmt.Errorf("the config file has no [sso-session %s] section", sess)
		}
		startURL, region, key = sec["sso_start_url"], sec["sso_region"], sess
	}
	account, role := p["sso_account_id"], p["sso_role_name"]
	if startURL == "" || region == "" || account == "" || role == "" {
		return sigv4.Credentials{}, errors.New("SSO needs sso_start_url, sso_region, sso_account_id and sso_role_name")
	}
	login := "run aws sso login --profile " + name
	sum := sha1.Sum([]byte(key))
	path := filepath.Join(o.Home, ".aws", "sso", "cache", hex.EncodeToString(sum[:])+".json")
	data, err := os.ReadFile(path)
	if err != nil {
		return sigv4.Credentials{}, fmt.Errorf("no SSO token (%w): %s", err, login)
	}
	var tok struct {
		AccessToken string `json:"accessToken"`
		ExpiresAt   string `json:"expiresAt"`
	}
	if err := json.Unmarshal(data, &tok); err != nil || tok.AccessToken == "" {
		return sigv4.Credentials{}, fmt.Errorf("the SSO token file %s holds no token: %s", path, login)
	}
	exp, err := time.Parse(time.RFC3339, tok.ExpiresAt)
	if err != nil {
		exp, err = time.Parse("2006-01-02T15:04:05UTC", tok.ExpiresAt) // as the AWS CLI v1 wrote it
	}
	if err != nil || !exp.After(o.Now()) {
		return sigv4.Credentials{}, fmt.Errorf("the SSO token in %s has expired: %s", path, login)
	}
	return o.ssoRoleCredentials(ctx, region, account, role, tok.AccessToken, login)
}

// process runs a credential_process and reads the credentials it prints.
func (o Options) process(ctx context.Context, command string) (sigv4.Credentials, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	shell, flag := "sh", "-c"
	if runtime.GOOS == "windows" {
		shell, flag = "cmd", "/C"
	}
	cmd := exec.CommandContext(ctx, shell, flag, command)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second // a child left holding stdout open does not hold us
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = errors.New("no answer within a minute")
		}
		if line := lastLine(stderr.String()); line != "" {
			return sigv4.Credentials{}, fmt.Errorf("credential_process failed: %v: %s", err, line)
		}
		return sigv4.Credentials{}, fmt.Errorf("credential_process failed: %w", err)
	}
	var out struct {
		Version                                   int
		AccessKeyID                               string `json:"AccessKeyId"`
		SecretAccessKey, SessionToken, Expiration string
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return sigv4.Credentials{}, fmt.Errorf("credential_process printed no credentials: %w", err)
	}
	if out.Version != 1 {
		return sigv4.Credentials{}, fmt.Errorf("credential_process printed Version %d; only 1 is known", out.Version)
	}
	creds, err := newCredentials(out.AccessKeyID, out.SecretAccessKey, out.SessionToken, out.Expiration, "process")
	if err != nil {
		return creds, fmt.Errorf("credential_process: %w", err)
	}
	return creds, nil
}

// lastLine is the last line of a command's stderr that says something, shortened.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimSpace(s[strings.LastIndexByte(s, '\n')+1:])
	return shorten(s)
}

// shorten cuts a service's or a command's message to a length fit for an error.
func shorten(s string) string {
	if len(s) <= 300 {
		return s
	}
	return strings.ToValidUTF8(s[:300], "") + "…"
}
