package server

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/loredb/lore/errs"
)

// limiters hold one token bucket per principal name: a dashboard that loops cannot
// take the server from everyone else. Buckets idle long enough to be full again are
// dropped, so that names seen once (JWT subjects) do not accumulate.
type limiters struct {
	every rate.Limit
	burst int

	mu     sync.Mutex
	byName map[string]*bucket
	swept  time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newLimiters(perSecond float64, burst int) *limiters {
	if perSecond <= 0 {
		return nil
	}
	if burst <= 0 {
		burst = max(1, int(math.Ceil(perSecond)))
	}
	return &limiters{every: rate.Limit(perSecond), burst: burst, byName: map[string]*bucket{}}
}

// allow takes one request of name's bucket, or returns RATE_LIMITED with how long to
// wait before one would be taken.
func (l *limiters) allow(name string, now time.Time) (time.Duration, error) {
	if l == nil {
		return 0, nil
	}
	l.mu.Lock()
	b, ok := l.byName[name]
	if !ok {
		b = &bucket{lim: rate.NewLimiter(l.every, l.burst)}
		l.byName[name] = b
	}
	b.seen = now
	l.sweep(now)
	l.mu.Unlock()
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, errs.New(errs.RateLimited, "%s is over the server's rate of %s requests a second (burst %d); retry after %s",
			name, strconv.FormatFloat(float64(l.every), 'g', -1, 64), l.burst, d.Round(time.Millisecond))
	}
	return 0, nil
}

// sweep drops buckets idle long enough to have filled up; l.mu is held.
func (l *limiters) sweep(now time.Time) {
	full := time.Duration(float64(l.burst)/float64(l.every)*float64(time.Second)) + time.Second
	if now.Sub(l.swept) < full || len(l.byName) < 1024 {
		return
	}
	l.swept = now
	for name, b := range l.byName {
		if now.Sub(b.seen) > full {
			delete(l.byName, name)
		}
	}
}

// retryAfter is a Retry-After header value: whole seconds, at least one.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

// ParseRate reads a rate such as "10/s", "600/m", "36000/h" or "5" (a second) as
// requests a second.
func ParseRate(s string) (float64, error) {
	num, unit, _ := strings.Cut(strings.TrimSpace(s), "/")
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || n <= 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return 0, errs.New(errs.InvalidRequest, "rate %q: want a positive number of requests, as 10/s, 600/m or 36000/h", s)
	}
	switch strings.TrimSpace(unit) {
	case "", "s":
		return n, nil
	case "m":
		return n / 60, nil
	case "h":
		return n / 3600, nil
	}
	return 0, errs.New(errs.InvalidRequest, "rate %q: the unit is s, m or h", s)
}
