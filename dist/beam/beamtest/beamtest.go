// Package beamtest holds what the tests of Lore's Beam pipelines share.
package beamtest

import (
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
)

// JobServer starts a prism job server on a free loopback port for the rest of the
// test and returns its endpoint (host:port), which the universal runner reaches over
// the portable Job API as it would Flink's or Spark's.
func JobServer(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if _, err := prism.CreateJobServer(ctx, prism.Options{Port: port}); err != nil {
		t.Fatal(err)
	}
	return "localhost:" + strconv.Itoa(port)
}
