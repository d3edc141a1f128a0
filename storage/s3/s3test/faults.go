package s3test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"
)

// Fault is a failure the server gives in place of an answer. Each is what a real
// store or the network in front of it does; the server makes it on the wire (a real
// connection reset, a real body cut short), so Lore's S3 store meets it as it would
// in production.
type Fault int

const (
	// SlowDown is 503 with S3's SlowDown error: throttling.
	SlowDown Fault = iota + 1
	// InternalError is 500 with S3's InternalError error.
	InternalError
	// AccessDenied is 403 with S3's AccessDenied error.
	AccessDenied
	// Reset sends the headers and half the body (half the headers when there is no
	// body), then resets the connection (RST).
	Reset
	// Truncate sends the headers and half the body (half the headers when there is
	// no body), then closes the connection cleanly: the body ends before its
	// Content-Length.
	Truncate
	// Stall sends nothing until the client gives up (it closes the connection).
	Stall
	// StallBody sends the headers and half the body (half the headers when there is
	// no body), then nothing until the client gives up.
	StallBody
)

func (f Fault) String() string {
	switch f {
	case SlowDown:
		return "503 SlowDown"
	case InternalError:
		return "500 InternalError"
	case AccessDenied:
		return "403 AccessDenied"
	case Reset:
		return "connection reset mid-body"
	case Truncate:
		return "truncated body"
	case Stall:
		return "stalled response"
	case StallBody:
		return "stalled body"
	}
	return "fault " + strconv.Itoa(int(f))
}

// Kinds of request a Rule applies to, as Counts names them.
const (
	KindAny  = ""
	KindList = "LIST"
	KindGet  = "GET"
	KindHead = "HEAD"
)

// Rule says which requests fail, and how. With Next set, the next Next requests of
// Kind fail; with Every set, every Every-th request of Kind does (the first, the
// (Every+1)-th, …) for as long as the rule stands. A rule with both fails a request
// when either says so.
type Rule struct {
	Fault Fault
	Kind  string
	Next  int
	Every int
}

type rule struct {
	Rule
	seen int
}

// Inject adds a rule; requests are matched against the rules in the order added,
// and the first that fails a request decides its fault.
func (s *Server) Inject(r Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, &rule{Rule: r})
}

// Heal removes every rule.
func (s *Server) Heal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = nil
}

// Faults is how many requests have been failed on purpose, and InFlight how many
// requests the server is answering now (a stalled one stays in flight until its
// client gives up).
func (s *Server) Faults() (faults, inFlight int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faulted, s.inFlight
}

// fault decides whether the request of kind fails. The caller holds mu.
func (s *Server) fault(kind string) Fault {
	for _, r := range s.rules {
		if r.Kind != KindAny && r.Kind != kind {
			continue
		}
		r.seen++
		fail := false
		if r.Next > 0 {
			r.Next--
			fail = true
		}
		if r.Every > 0 && (r.seen-1)%r.Every == 0 {
			fail = true
		}
		if fail {
			s.faulted++
			return r.Fault
		}
	}
	return 0
}

// serveFault answers with fault f, asking next for the true answer when f needs its
// headers and body.
func serveFault(w http.ResponseWriter, r *http.Request, f Fault, next http.Handler) {
	switch f {
	case SlowDown:
		errorXML(w, http.StatusServiceUnavailable, "SlowDown", "Please reduce your request rate.")
	case InternalError:
		errorXML(w, http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.")
	case AccessDenied:
		errorXML(w, http.StatusForbidden, "AccessDenied", "Access Denied")
	case Stall:
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	case Reset, Truncate, StallBody:
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		cutShort(w, rec, f)
	}
}

func errorXML(w http.ResponseWriter, status int, code, msg string) {
	body := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message><RequestId>fault</RequestId></Error>`, code, msg)
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write([]byte(body))
}

// cutShort writes the recorded answer straight onto the connection, cut in half —
// its body, or its headers when it has no body (a HEAD) — then breaks the connection
// as f says.
func cutShort(w http.ResponseWriter, rec *httptest.ResponseRecorder, f Fault) {
	body := rec.Body.Bytes()
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	res := rec.Result()
	var head bytes.Buffer
	fmt.Fprintf(&head, "HTTP/1.1 %d %s\r\n", res.StatusCode, http.StatusText(res.StatusCode))
	if len(body) > 0 {
		res.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	res.Header.Write(&head)
	head.WriteString("\r\n")
	wire := append(head.Bytes(), body...)
	if len(body) > 0 {
		wire = wire[:head.Len()+len(body)/2]
	} else {
		wire = wire[:head.Len()/2]
	}
	conn.Write(wire)
	switch f {
	case Reset:
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0) // Close sends RST, not FIN
		}
	case StallBody:
		// Wait until the client closes its end (a read then fails), or a minute.
		conn.SetReadDeadline(time.Now().Add(time.Minute))
		conn.Read(make([]byte, 1))
	}
}
