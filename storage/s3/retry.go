package s3

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/loredb/lore/errs"
)

// retry runs one request, attempt by attempt: each attempt under its own timeout, a
// failure that may pass (throttling, a server error, a broken or stalled connection)
// retried after a jittered wait that doubles each time, any other reported at once.
// The statement's cancellation stops it between and during attempts. count counts
// attempts. The error is one of Lore's (errorOf), never the SDK's with what it holds.
func (s *Store) retry(ctx context.Context, op string, loc location, count *atomic.Int64, fn func(ctx context.Context) error) error {
	wait := s.cfg.Backoff
	for attempt := 1; ; attempt++ {
		count.Add(1)
		actx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
		err := fn(actx)
		timedOut := actx.Err() != nil
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if attempt >= s.cfg.Attempts || !(timedOut || retryable(err)) {
			return errorOf(op, loc, err, attempt)
		}
		s.counts.retries.Add(1)
		d := time.Duration(rand.Int64N(int64(wait))) + wait/2
		wait = min(2*wait, 5*time.Second)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// status is the HTTP status of a failed request, or 0 when none came back.
func status(err error) int {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.status
	}
	return 0
}

// errorCode is the store's error code of a failed request ("NoSuchKey",
// "SlowDown", …), or "" when none came back.
func errorCode(err error) string {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.code
	}
	return ""
}

// retryable reports a failure that may pass: throttling and server errors; no answer
// at all (a connection refused, reset or stalled); an answer whose body broke off or
// could not be decoded, as a body cut short in transit cannot. A client error (403,
// 404, 412, …) and a certificate that does not verify are final.
func retryable(err error) bool {
	st := status(err)
	switch {
	case st == 408 || st == 429 || st == 500 || st == 502 || st == 503 || st == 504:
		return true
	case st >= 300:
		switch errorCode(err) {
		case "SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "RequestTimeTooSkewed", "InternalError", "ServiceUnavailable":
			return true
		}
		return false
	}
	if untrusted(err) {
		return false
	}
	var de *decodeError
	var ne net.Error
	return errors.As(err, &de) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.As(err, &ne) || errors.Is(err, errShort)
}

// untrusted reports a TLS failure: the store's certificate does not verify, which
// no retry changes.
func untrusted(err error) bool {
	var ua x509.UnknownAuthorityError
	var ci x509.CertificateInvalidError
	var he x509.HostnameError
	var ve *tls.CertificateVerificationError
	var rh tls.RecordHeaderError
	return errors.As(err, &ua) || errors.As(err, &ci) || errors.As(err, &he) || errors.As(err, &ve) || errors.As(err, &rh)
}

// errNoRange is a range the object does not hold: an empty object has none.
var errNoRange = errors.New("the object holds no such range")

// errShort is a body that ended before the bytes its response promised.
var errShort = errors.New("response body ended early")

// errorOf names a failed request in Lore's terms: a missing object or bucket is
// SOURCE_UNAVAILABLE wrapping fs.ErrNotExist; an object whose ETag no longer matches
// is SOURCE_CHANGED; denied access is SOURCE_UNAVAILABLE saying so; anything else,
// SOURCE_UNAVAILABLE with the status and the store's error code, or the transport's
// innermost cause — never a credential, a signature or a request's headers.
func errorOf(op string, loc location, err error, attempts int) error {
	st := status(err)
	code := errorCode(err)
	switch {
	case st == 404 || code == "NoSuchKey" || code == "NotFound" || code == "NoSuchBucket":
		what := "no such object"
		if code == "NoSuchBucket" {
			what = "no such bucket"
		}
		return errs.New(errs.SourceUnavailable, "cannot %s %q: %s: %w", op, loc, what, fs.ErrNotExist)
	case st == 412 || code == "PreconditionFailed":
		return errs.New(errs.SourceChanged, "%q changed while it was read (its ETag no longer matches)", loc)
	case st == 416 || code == "InvalidRange":
		return errs.New(errs.SourceUnavailable, "cannot %s %q: %w", op, loc, errNoRange)
	case st == 403 || code == "AccessDenied":
		return errs.New(errs.SourceUnavailable, "cannot %s %q: access denied (check the credentials and the bucket's policy)", op, loc)
	case st >= 300:
		if code == "" {
			code = "no error code"
		}
		return errs.New(errs.SourceUnavailable, "cannot %s %q: the store answered %d (%s) after %d attempts", op, loc, st, code, attempts)
	}
	var le *loreErr
	if errors.As(err, &le) {
		return le.err
	}
	if untrusted(err) {
		return errs.New(errs.SourceUnavailable, "cannot %s %q: the store's TLS certificate does not verify: %s", op, loc, cause(err))
	}
	if unreached(err) {
		return errs.New(errs.SourceUnavailable, "cannot %s %q: the store cannot be reached after %d attempts: %s", op, loc, attempts, cause(err))
	}
	return errs.New(errs.SourceUnavailable, "cannot %s %q: the transfer failed after %d attempts: %s", op, loc, attempts, cause(err))
}

// unreached reports a failure to connect at all: no address for the host, or no
// connection to it; other transport failures broke off a request under way.
func unreached(err error) bool {
	var oe *net.OpError
	var de *net.DNSError
	return (errors.As(err, &oe) && oe.Op == "dial") || errors.As(err, &de) || errors.Is(err, syscall.ECONNREFUSED)
}

// loreErr carries one of Lore's errors through a request function unchanged.
type loreErr struct{ err error }

func (e *loreErr) Error() string { return e.err.Error() }

// cause is the innermost failure of a transport error, which is what a person can act
// on (connection refused, i/o timeout), without the request's URL and headers.
func cause(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, errShort):
		return "the connection closed early"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	}
	var de *decodeError
	if errors.As(err, &de) {
		return "its answer was cut short or garbled"
	}
	if untrusted(err) {
		var ua x509.UnknownAuthorityError
		if errors.As(err, &ua) {
			return "signed by an unknown authority"
		}
		return "certificate rejected"
	}
	return "transport error"
}
