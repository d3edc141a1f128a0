package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// lore serve's admission and guardrail flags reach the engine: /metrics shows the
// limits, a ceiling stops a statement, and a request may not raise it.
func TestServeLimitFlags(t *testing.T) {
	for _, bad := range [][]string{{"--ceiling", "max_result_rows"}, {"--ceiling", "memory_limit=1GiB"}, {"--ceiling", "max_result_rows=lots"},
		{"--rate-limit", "fast"}} {
		if r := Main(append([]string{"serve"}, bad...), nil, io.Discard, io.Discard); r != exitUsage {
			t.Errorf("%v: exit %d", bad, r)
		}
	}
	srv := startServe(t, "--addr", "127.0.0.1:0", "--max-running", "1", "--max-queued", "2",
		"--ceiling", "max_result_rows=3", "--ceiling", "max_execution_ms=60000")
	url, token := srv.url, srv.token
	do := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code := func(body string) string {
		var m struct{ Error struct{ Code string } }
		json.Unmarshal([]byte(body), &m)
		return m.Error.Code
	}
	if st, body := do("POST", "/v1/statement", `{"sql": "SELECT * FROM range(10)"}`); st != 503 || code(body) != "RESOURCE_EXHAUSTED" {
		t.Errorf("over the max_result_rows ceiling: %d %s", st, body)
	}
	if st, body := do("POST", "/v1/statement", `{"sql": "SELECT * FROM range(3)"}`); st != 200 {
		t.Errorf("within the ceiling: %d %s", st, body)
	}
	if st, body := do("POST", "/v1/statement", `{"sql": "SELECT 1", "settings": {"max_result_rows": 100}}`); st != 400 || code(body) != "INVALID_SETTING" {
		t.Errorf("raising a ceiling: %d %s", st, body)
	}
	st, body := do("GET", "/metrics", "")
	if st != 200 || !strings.Contains(body, "\nlore_admission_max_running 1\n") || !strings.Contains(body, "\nlore_admission_max_queued 2\n") {
		t.Errorf("/metrics: %d\n%s", st, body)
	}
}
