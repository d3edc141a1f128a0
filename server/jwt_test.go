package server_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/loredb/lore/server"
)

func sign(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestJWT(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef-test")
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	dir := t.TempDir()
	secretFile, pubFile := filepath.Join(dir, "secret"), filepath.Join(dir, "pub.pem")
	if err := os.WriteFile(secretFile, append(secret, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pubFile, pubPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	both, err := server.LoadJWTVerifier(secretFile, pubFile, server.JWTConfig{Audience: "lore", Issuer: "https://idp.test"})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fixtureOptions{serverOpts: server.Options{JWT: both}})
	now := time.Now()
	claims := func(sub, role string, extra ...any) jwt.MapClaims {
		c := jwt.MapClaims{"sub": sub, "lore_role": role, "aud": "lore", "iss": "https://idp.test",
			"exp": now.Add(time.Hour).Unix(), "iat": now.Unix()}
		for i := 0; i+1 < len(extra); i += 2 {
			if extra[i+1] == nil {
				delete(c, extra[i].(string))
			} else {
				c[extra[i].(string)] = extra[i+1]
			}
		}
		return c
	}
	hsAdmin := sign(t, jwt.SigningMethodHS256, secret, claims("alice@idp", "admin"))
	rsReader := sign(t, jwt.SigningMethodRS256, rsaKey, claims("svc-dash", "reader"))

	r := f.stmt(hsAdmin, map[string]any{"sql": "SELECT count(*) FROM ev"})
	if r.status != 200 || r.json(t)["record"].(map[string]any)["subject"] != "alice@idp" {
		t.Fatalf("HS256 admin: %d %s", r.status, r.body)
	}
	if r := f.do("GET", "/v1/statistics", hsAdmin, nil); r.status != 200 {
		t.Errorf("HS256 admin on an admin endpoint: %d %s", r.status, r.body)
	}
	if r := f.stmt(rsReader, map[string]any{"sql": "SELECT count(*) FROM ev"}); r.status != 200 {
		t.Fatalf("RS256 reader: %d %s", r.status, r.body)
	}
	if r := f.do("GET", "/v1/statistics", rsReader, nil); r.status != 403 {
		t.Errorf("RS256 reader on an admin endpoint: %d %s", r.status, r.body)
	}
	if r := f.stmt(rsReader, map[string]any{"sql": "ANALYZE ev"}); r.status != 403 {
		t.Errorf("RS256 reader runs ANALYZE: %d %s", r.status, r.body)
	}
	// The tokens file still works beside JWTs.
	if r := f.stmt(f.reader, map[string]any{"sql": "SELECT 1"}); r.status != 200 {
		t.Errorf("a file token: %d", r.status)
	}

	otherKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	refused := map[string]string{
		"expired":                      sign(t, jwt.SigningMethodHS256, secret, claims("a", "admin", "exp", now.Add(-time.Hour).Unix())),
		"not yet valid":                sign(t, jwt.SigningMethodHS256, secret, claims("a", "admin", "nbf", now.Add(time.Hour).Unix())),
		"no exp":                       sign(t, jwt.SigningMethodHS256, secret, claims("a", "admin", "exp", nil)),
		"wrong secret":                 sign(t, jwt.SigningMethodHS256, []byte("another secret of thirty-two bytes!!"), claims("a", "admin")),
		"other RSA key":                sign(t, jwt.SigningMethodRS256, otherKey, claims("a", "admin")),
		"HS384":                        sign(t, jwt.SigningMethodHS384, secret, claims("a", "admin")),
		"alg none":                     sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims("a", "admin")),
		"HMAC with the RSA public key": sign(t, jwt.SigningMethodHS256, pubPEM, claims("a", "admin")),
		"role superuser":               sign(t, jwt.SigningMethodHS256, secret, claims("a", "superuser")),
		"role in another claim":        sign(t, jwt.SigningMethodHS256, secret, claims("a", "", "lore_role", nil, "role", "admin")),
		"no sub":                       sign(t, jwt.SigningMethodHS256, secret, claims("", "admin")),
		"wrong audience":               sign(t, jwt.SigningMethodHS256, secret, claims("a", "admin", "aud", "other")),
		"wrong issuer":                 sign(t, jwt.SigningMethodHS256, secret, claims("a", "admin", "iss", "https://evil.test")),
		"malformed":                    "a.b.c",
	}
	for name, tok := range refused {
		r := f.stmt(tok, map[string]any{"sql": "SELECT 1"})
		if r.status != 401 || r.code(t) != "UNAUTHENTICATED" || r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}

	// A server that checks RS256 only refuses HS256, even signed with its public key.
	rsOnly, err := server.LoadJWTVerifier("", pubFile, server.JWTConfig{RoleClaim: "https://lore/role"})
	if err != nil {
		t.Fatal(err)
	}
	g := newFixture(t, fixtureOptions{serverOpts: server.Options{JWT: rsOnly}})
	custom := jwt.MapClaims{"sub": "bob", "https://lore/role": "reader", "exp": now.Add(time.Minute).Unix()}
	if r := g.stmt(sign(t, jwt.SigningMethodRS256, rsaKey, custom), map[string]any{"sql": "SELECT 1"}); r.status != 200 {
		t.Errorf("RS256 with a custom role claim: %d %s", r.status, r.body)
	}
	for name, tok := range map[string]string{
		"HS256 with the public key": sign(t, jwt.SigningMethodHS256, pubPEM, custom),
		"HS256 with the secret":     sign(t, jwt.SigningMethodHS256, secret, custom),
	} {
		if r := g.stmt(tok, map[string]any{"sql": "SELECT 1"}); r.status != 401 {
			t.Errorf("RS256-only server, %s: %d %s", name, r.status, r.body)
		}
	}
	for _, bad := range []server.JWTConfig{{}, {HS256Secret: []byte("short")}} {
		if _, err := server.NewJWTVerifier(bad); err == nil {
			t.Errorf("config %+v: no error", bad)
		}
	}
}
