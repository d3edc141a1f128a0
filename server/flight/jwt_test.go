package flight_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/codes"

	"github.com/loredb/lore/server"
	loreflight "github.com/loredb/lore/server/flight"
)

// A JWT the HTTP API accepts is accepted by Flight SQL as the same principal, and one
// it refuses (expired, signed with another secret) is refused here too.
func TestFlightJWT(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef-flight")
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, secret, 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := server.LoadJWTVerifier(file, "", server.JWTConfig{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, loreflight.Options{JWT: v})
	token := func(key []byte, role string, exp time.Time) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "svc-bi", "lore_role": role, "exp": exp.Unix()}).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	reader := token(secret, "reader", time.Now().Add(time.Hour))
	info, err := f.client.Execute(as(reader), "SELECT count(*) FROM ev")
	if err != nil {
		t.Fatalf("a JWT reader: %v", err)
	}
	if len(info.Endpoint) == 0 {
		t.Fatal("no endpoint")
	}
	_, err = f.client.Execute(as(reader), "ANALYZE ev")
	wantStatus(t, "a JWT reader's ANALYZE", err, codes.PermissionDenied, "FORBIDDEN")
	_, err = f.client.Execute(as(token(secret, "reader", time.Now().Add(-time.Hour))), "SELECT 1")
	wantStatus(t, "an expired JWT", err, codes.Unauthenticated, "UNAUTHENTICATED")
	_, err = f.client.Execute(as(token([]byte("another-secret-another-secret-00"), "admin", time.Now().Add(time.Hour))), "SELECT 1")
	wantStatus(t, "a JWT of another secret", err, codes.Unauthenticated, "UNAUTHENTICATED")
}
