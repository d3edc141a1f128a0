package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// lore serve listens, prints a first-start admin token that works, refuses to listen
// beyond loopback without --insecure, and stops when its context ends.
func TestServeListensAndShutsDown(t *testing.T) {
	if r := Main([]string{"serve", "--addr", "0.0.0.0:0"}, nil, io.Discard, io.Discard); r != exitUsage {
		t.Fatalf("beyond loopback without --insecure: exit %d", r)
	}
	home := t.TempDir()
	srv := startServe(t, "--addr", "127.0.0.1:0", "--home", home)
	token, url := srv.token, srv.url
	req, _ := http.NewRequest("POST", url+"/v1/statement", strings.NewReader(`{"sql":"SELECT 41 + 1 AS x"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"rows":[[42]]`) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	srv.stop()
	raw, err := os.ReadFile(filepath.Join(home, "tokens"))
	if err != nil || strings.Contains(string(raw), token) || !strings.HasPrefix(string(raw), "sha256:") {
		t.Fatalf("tokens file: %v %q", err, raw)
	}
}

// served is a lore serve running in the test: what it printed, and how to stop it.
type served struct {
	t                  *testing.T
	token, url, flight string
	cancel             context.CancelFunc
	exit               chan int
}

// startServe runs lore serve with args (in a fresh home unless they name one) until
// the test ends (or stop), and reads the first-start admin token and where it
// listens from what it prints; an address beyond loopback is reached on 127.0.0.1.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	if !slices.Contains(args, "--home") {
		args = append([]string{"--home", t.TempDir()}, args...)
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{t: t, cancel: cancel, exit: make(chan int, 1)}
	go func() {
		s.exit <- runServe(ctx, &env{stdout: pw, stderr: io.Discard}, args)
		pw.Close()
	}()
	wantFlight := slices.Contains(args, "--flight-addr")
	sc := bufio.NewScanner(pr)
	for (s.url == "" || wantFlight && s.flight == "") && sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "lore_") {
			s.token = strings.TrimSpace(line)
		}
		if m := regexp.MustCompile(`(https?)://\S*:(\d+) `).FindStringSubmatch(line); m != nil {
			s.url = m[1] + "://127.0.0.1:" + m[2]
		}
		if m := regexp.MustCompile(`grpc://([0-9.:]+)`).FindStringSubmatch(line); m != nil {
			s.flight = m[1]
		}
	}
	go io.Copy(io.Discard, pr)
	if s.url == "" || wantFlight && s.flight == "" {
		cancel()
		t.Fatalf("lore serve printed no address (token %q url %q flight %q)", s.token, s.url, s.flight)
	}
	t.Cleanup(func() {
		cancel()
		<-s.exit
	})
	return s
}

// stop ends lore serve and checks that it exits cleanly.
func (s *served) stop() {
	s.t.Helper()
	s.cancel()
	select {
	case code := <-s.exit:
		if code != exitOK {
			s.t.Fatalf("lore serve exited %d", code)
		}
		s.exit <- code // for the cleanup
	case <-time.After(15 * time.Second):
		s.t.Fatal("lore serve did not stop")
	}
}
