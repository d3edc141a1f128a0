package awsauth

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/loredb/lore/storage/s3/sigv4"
)

// Provider finds credentials for signing requests. Retrieve is safe to call from
// many goroutines at once.
type Provider interface {
	Retrieve(ctx context.Context) (sigv4.Credentials, error)
}

// ErrNone is returned, bare or wrapped, when no link of the chain is configured and
// the instance metadata service is not there: the caller then sends requests
// unsigned.
var ErrNone = errors.New("no AWS credentials found")

// errSkip is a link's answer when it is not configured: the chain goes on to the
// next one.
var errSkip = errors.New("not configured")

// Options say where the chain looks. The zero value looks where the AWS SDKs do.
type Options struct {
	// Getenv reads an environment variable; nil is os.Getenv.
	Getenv func(string) string
	// Client sends the requests to STS, SSO, a container's credentials endpoint and
	// the instance metadata service; nil is a client of the package's own. Redirects
	// are never followed, so that no token is sent on to another host.
	Client *http.Client
	// Now tells the time: of signatures, of expiry; nil is time.Now.
	Now func() time.Time
	// Home is the directory holding .aws; "" is os.UserHomeDir(), and no shared files
	// when that has none.
	Home string
}

func (o Options) withDefaults() Options {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir()
	}
	return o
}

// Static is a provider of fixed credentials, of Source "static". Without an access
// key it returns ErrNone.
func Static(id, secret, token string) Provider {
	return static{AccessKeyID: id, SecretAccessKey: secret, SessionToken: token, Source: "static"}
}

type static sigv4.Credentials

var _ Provider = static{}

func (s static) Retrieve(context.Context) (sigv4.Credentials, error) {
	if s.AccessKeyID == "" {
		return sigv4.Credentials{}, ErrNone
	}
	return sigv4.Credentials(s), nil
}

// Region is the region of the standard configuration: AWS_REGION, else
// AWS_DEFAULT_REGION, else the region of the selected profile in the config file;
// "" when none says.
func Region(o Options) string {
	o = o.withDefaults()
	if r := cmp.Or(o.Getenv("AWS_REGION"), o.Getenv("AWS_DEFAULT_REGION")); r != "" {
		return r
	}
	cfg, _, _ := o.readINI("AWS_CONFIG_FILE", "config")
	name, _ := o.profileName()
	return configProfiles(cfg)[name]["region"]
}

// refreshBefore is how long before they expire credentials are retrieved again:
// long enough that none expires during a request that was signed with it.
const refreshBefore = 5 * time.Minute

// Chain is the standard credential chain of the AWS SDKs (see the package
// documentation). Its provider is safe for concurrent use.
func Chain(o Options) Provider {
	o = o.withDefaults()
	var c http.Client
	if o.Client != nil {
		c = *o.Client
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	o.Client = &c
	return &chain{o: o}
}

// chain is the provider of Chain: the links of o, and what they found.
type chain struct {
	o Options

	mu    sync.Mutex
	creds sigv4.Credentials // the last found; anonymous before any
	none  bool              // the chain found nothing: ErrNone for good
	f     *flight           // the retrieval under way, if any
}

var _ Provider = (*chain)(nil)

// flight is one retrieval, whose result its waiters read once done is closed.
type flight struct {
	done      chan struct{}
	creds     sigv4.Credentials
	err       error
	abandoned bool // the retrieving caller's context ended: a waiter tries again
}

// Retrieve returns the credentials in hand while they are good for five more
// minutes, else runs the chain, or waits for the run another caller started.
func (c *chain) Retrieve(ctx context.Context) (sigv4.Credentials, error) {
	for {
		c.mu.Lock()
		now := c.o.Now()
		if c.none {
			c.mu.Unlock()
			return sigv4.Credentials{}, ErrNone
		}
		if !c.creds.Anonymous() && !c.creds.ExpiresBefore(now.Add(refreshBefore)) {
			creds := c.creds
			c.mu.Unlock()
			return creds, nil
		}
		if f := c.f; f != nil {
			c.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return sigv4.Credentials{}, ctx.Err()
			}
			if f.abandoned && ctx.Err() == nil {
				continue
			}
			return f.creds, f.err
		}
		f := &flight{done: make(chan struct{})}
		c.f = f
		c.mu.Unlock()

		f.creds, f.err = c.o.find(ctx)
		f.abandoned = f.err != nil && ctx.Err() != nil
		c.mu.Lock()
		switch {
		case f.err == nil:
			c.creds = f.creds
		case errors.Is(f.err, ErrNone) && c.creds.Anonymous():
			c.none = true
		case !c.creds.Anonymous() && !c.creds.ExpiresBefore(c.o.Now()) && !f.abandoned:
			// The credentials in hand still work: use them until the next call tries again.
			f.creds, f.err = c.creds, nil
		}
		c.f = nil
		c.mu.Unlock()
		close(f.done)
		return f.creds, f.err
	}
}

// find runs the chain: the first link that is configured decides.
func (o Options) find(ctx context.Context) (sigv4.Credentials, error) {
	links := []struct {
		name string
		find func(context.Context) (sigv4.Credentials, error)
	}{
		{"the environment", o.environment},
		{"web identity", o.webIdentityFromEnv},
		{"the shared files", o.sharedFiles},
		{"the container endpoint", o.container},
		{"instance metadata", o.instanceMetadata},
	}
	for _, l := range links {
		creds, err := l.find(ctx)
		switch {
		case err == nil:
			return creds, nil
		case errors.Is(err, errSkip):
			continue
		case errors.Is(err, ErrNone):
			return sigv4.Credentials{}, err
		case ctx.Err() != nil:
			return sigv4.Credentials{}, ctx.Err()
		}
		return sigv4.Credentials{}, fmt.Errorf("cannot get AWS credentials from %s: %w", l.name, err)
	}
	return sigv4.Credentials{}, ErrNone
}

// environment is the first link: keys in environment variables.
func (o Options) environment(context.Context) (sigv4.Credentials, error) {
	id := cmp.Or(o.Getenv("AWS_ACCESS_KEY_ID"), o.Getenv("AWS_ACCESS_KEY"))
	secret := cmp.Or(o.Getenv("AWS_SECRET_ACCESS_KEY"), o.Getenv("AWS_SECRET_KEY"))
	switch {
	case id == "" && secret == "":
		return sigv4.Credentials{}, errSkip
	case id == "":
		return sigv4.Credentials{}, errors.New("AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not")
	case secret == "":
		return sigv4.Credentials{}, errors.New("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not")
	}
	return sigv4.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: o.Getenv("AWS_SESSION_TOKEN"), Source: "environment"}, nil
}

// webIdentityFromEnv is the second link: a role assumed with a web identity token,
// as Kubernetes service accounts (EKS IRSA) are given.
func (o Options) webIdentityFromEnv(ctx context.Context) (sigv4.Credentials, error) {
	file, role := o.Getenv("AWS_WEB_IDENTITY_TOKEN_FILE"), o.Getenv("AWS_ROLE_ARN")
	switch {
	case file == "":
		return sigv4.Credentials{}, errSkip
	case role == "":
		return sigv4.Credentials{}, errors.New("AWS_WEB_IDENTITY_TOKEN_FILE is set but AWS_ROLE_ARN is not")
	}
	return o.webIdentity(ctx, role, o.Getenv("AWS_ROLE_SESSION_NAME"), file)
}
