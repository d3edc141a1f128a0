package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
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
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	exit := make(chan int, 1)
	go func() {
		exit <- runServe(ctx, &env{stdout: pw, stderr: io.Discard}, []string{"--addr", "127.0.0.1:0", "--home", home})
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var token, url string
	for url == "" && sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "lore_") {
			token = strings.TrimSpace(line)
		}
		if m := regexp.MustCompile(`http://[0-9.:]+`).FindString(line); m != "" {
			url = m
		}
	}
	go io.Copy(io.Discard, pr)
	if token == "" || url == "" {
		t.Fatalf("token %q url %q", token, url)
	}
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
	cancel()
	select {
	case code := <-exit:
		if code != exitOK {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("lore serve did not stop")
	}
	raw, err := os.ReadFile(filepath.Join(home, "tokens"))
	if err != nil || strings.Contains(string(raw), token) || !strings.HasPrefix(string(raw), "sha256:") {
		t.Fatalf("tokens file: %v %q", err, raw)
	}
}
