package flight_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/loredb/lore/server"
	loreflight "github.com/loredb/lore/server/flight"
)

// With the HTTP server as its Tracker, a Flight SQL statement is listed by GET
// /v1/queries with its owner, and DELETE /v1/queries/{id} cancels one that runs.
func TestFlightStatementsAreTracked(t *testing.T) {
	f := newFixture(t, loreflight.Options{})
	tokens, err := server.LoadTokens(filepath.Join(f.home, "tokens"))
	if err != nil {
		t.Fatal(err)
	}
	hs, err := server.New(server.Options{Engine: f.eng, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(hs.Handler())
	defer web.Close()
	fs, err := loreflight.New(loreflight.Options{Engine: f.eng, Tokens: tokens, Tracker: hs})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := fs.GRPCServer()
	go gs.Serve(ln)
	defer gs.Stop()
	client, err := flightsql.NewClient(ln.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	type info struct {
		QueryID string `json:"query_id"`
		State   string `json:"state"`
		Subject string `json:"subject"`
	}
	list := func(token, state string) []info {
		req, _ := http.NewRequest("GET", web.URL+"/v1/queries?state="+state, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var doc struct{ Queries []info }
		if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		return doc.Queries
	}

	// The tracked Flight SQL server is a second one over the fixture's engine.
	fi, err := client.Execute(as(f.reader), "SELECT count(*) FROM ev")
	if err != nil {
		t.Fatal(err)
	}
	tq, err := flightsql.GetStatementQueryTicket(fi.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	id := string(tq.GetStatementHandle())
	found := false
	for _, q := range list(f.reader, "finished") {
		found = found || q.QueryID == id && q.Subject == "ann"
	}
	if !found {
		t.Fatalf("the Flight SQL statement %s is not listed: %+v", id, list(f.reader, "finished"))
	}

	failed := make(chan error, 1)
	go func() {
		_, err := client.Execute(as(f.reader), "SELECT count(*) FROM range(1000000000000)")
		failed <- err
	}()
	var running string
	for deadline := time.Now().Add(20 * time.Second); running == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, q := range list(f.reader, "running") {
			running = q.QueryID
		}
	}
	if running == "" {
		t.Fatal("the running Flight SQL statement is not listed")
	}
	req, _ := http.NewRequest("DELETE", web.URL+"/v1/queries/"+running, nil)
	req.Header.Set("Authorization", "Bearer "+f.reader)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	select {
	case err := <-failed:
		wantStatus(t, "a Flight SQL statement canceled over HTTP", err, codes.Canceled, "CANCELED")
	case <-time.After(30 * time.Second):
		t.Fatal("DELETE did not stop the Flight SQL statement")
	}
}
