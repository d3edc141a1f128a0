package cli

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/loredb/lore"
	"github.com/loredb/lore/server"
)

// lore serve --flight-addr serves Flight SQL with the same tokens, prints where, keeps
// the loopback rule, and stops on its context.
func TestServeFlightSQL(t *testing.T) {
	if r := Main([]string{"serve", "--flight-addr", "0.0.0.0:0"}, nil, io.Discard, io.Discard); r != exitUsage {
		t.Fatalf("Flight SQL beyond loopback without --insecure: exit %d", r)
	}
	srv := startServe(t, "--addr", "127.0.0.1:0", "--flight-addr", "127.0.0.1:0", "--home", t.TempDir())
	token, addr := srv.token, srv.flight
	client, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	call := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
	info, err := client.Execute(call, "SELECT 41 + 1 AS x")
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := client.DoGet(call, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	if !rdr.Next() || rdr.RecordBatch().Column(0).(*array.Int32).Value(0) != 42 {
		t.Fatalf("no 42: %v", rdr.Err())
	}
	rdr.Release()
	srv.stop()
}

// On shutdown a Flight SQL statement still running at the deadline is canceled: the
// gRPC server stops gracefully, then for good, and the statement's context ends.
func TestServeFlightShutdownCancelsAtDeadline(t *testing.T) {
	home := t.TempDir()
	tokensPath := filepath.Join(home, "tokens")
	token, err := server.AddToken(tokensPath, lore.Principal{Name: "root", Role: lore.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := server.LoadTokens(tokensPath)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := lore.Open(context.Background(), lore.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var out strings.Builder
	served := make(chan error, 1)
	fl, err := startFlight(&env{stdout: &out, stderr: io.Discard}, serveConfig{flightAddr: "127.0.0.1:0"}, eng, nil, tokens, nil, nil, slog.New(slog.DiscardHandler), served)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.close()
	addr := regexp.MustCompile(`grpc://([0-9.:]+)`).FindStringSubmatch(out.String())
	if addr == nil {
		t.Fatalf("printed %q", out.String())
	}
	client, err := flightsql.NewClient(addr[1], nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	call := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
	failed := make(chan error, 1)
	go func() {
		_, err := client.Execute(call, "SELECT count(*) FROM range(1000000000000)") // hours
		failed <- err
	}()
	time.Sleep(300 * time.Millisecond) // let it start
	stopped := make(chan struct{})
	go func() { fl.stop(200*time.Millisecond, slog.New(slog.DiscardHandler)); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the Flight SQL server did not stop")
	}
	select {
	case err := <-failed:
		if err == nil {
			t.Fatal("the statement finished")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the statement still runs")
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
