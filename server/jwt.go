package server

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// JWTConfig says which JSON Web Tokens a server accepts as bearer tokens, beside
// its tokens file: an identity provider signs them, and the server holds only the
// key that checks them.
type JWTConfig struct {
	// HS256Secret checks tokens signed with HMAC-SHA256; at least 32 bytes.
	HS256Secret []byte
	// RS256Key checks tokens signed with RSA PKCS#1 v1.5 and SHA-256.
	RS256Key *rsa.PublicKey
	// RoleClaim names the claim that holds the role, "admin" or "reader". Default
	// "lore_role".
	RoleClaim string
	// Audience and Issuer, when set, must be the token's aud (one of) and iss.
	Audience, Issuer string
	// Leeway is the clock skew allowed on exp and nbf. Default 30 s.
	Leeway time.Duration
	// now is the clock, for tests. Default time.Now.
	now func() time.Time
}

// JWTVerifier checks JWT bearer tokens: signature by a configured algorithm only
// (never "none", never an HMAC made with an RSA public key), exp required, nbf,
// audience and issuer; the principal is the sub claim with the role claim's role.
type JWTVerifier struct {
	cfg    JWTConfig
	parser *jwt.Parser
}

// minSecret is the least HS256 secret: shorter ones can be guessed offline from one
// token.
const minSecret = 32

// NewJWTVerifier checks cfg and returns its verifier.
func NewJWTVerifier(cfg JWTConfig) (*JWTVerifier, error) {
	var methods []string
	if cfg.HS256Secret != nil {
		if len(cfg.HS256Secret) < minSecret {
			return nil, fmt.Errorf("the HS256 secret is %d bytes; at least %d are needed", len(cfg.HS256Secret), minSecret)
		}
		methods = append(methods, jwt.SigningMethodHS256.Alg())
	}
	if cfg.RS256Key != nil {
		methods = append(methods, jwt.SigningMethodRS256.Alg())
	}
	if len(methods) == 0 {
		return nil, errors.New("JWT: neither an HS256 secret nor an RS256 public key is configured")
	}
	if cfg.RoleClaim == "" {
		cfg.RoleClaim = "lore_role"
	}
	if cfg.Leeway == 0 {
		cfg.Leeway = 30 * time.Second
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	opts := []jwt.ParserOption{jwt.WithValidMethods(methods), jwt.WithExpirationRequired(),
		jwt.WithLeeway(cfg.Leeway), jwt.WithTimeFunc(cfg.now)}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	return &JWTVerifier{cfg: cfg, parser: jwt.NewParser(opts...)}, nil
}

// LoadJWTVerifier reads the HS256 secret file and the RS256 public key file (PEM:
// a PKIX or PKCS#1 public key, or a certificate); either may be "", not both.
func LoadJWTVerifier(secretFile, publicKeyFile string, cfg JWTConfig) (*JWTVerifier, error) {
	if secretFile != "" {
		b, err := os.ReadFile(secretFile)
		if err != nil {
			return nil, err
		}
		cfg.HS256Secret = []byte(strings.TrimRight(string(b), "\r\n"))
	}
	if publicKeyFile != "" {
		b, err := os.ReadFile(publicKeyFile)
		if err != nil {
			return nil, err
		}
		if cfg.RS256Key, err = jwt.ParseRSAPublicKeyFromPEM(b); err != nil {
			return nil, fmt.Errorf("%s: %w", publicKeyFile, err)
		}
	}
	return NewJWTVerifier(cfg)
}

// looksLikeJWT tells a compact JWS (three dot-separated parts) from a Lore token.
func looksLikeJWT(token string) bool { return strings.Count(token, ".") == 2 }

// Verify checks token and returns its principal, or UNAUTHENTICATED saying why
// (never the token itself).
func (v *JWTVerifier) Verify(token string) (lore.Principal, error) {
	claims := jwt.MapClaims{}
	_, err := v.parser.ParseWithClaims(token, claims, v.key)
	if err != nil {
		return lore.Principal{}, errs.New(errs.Unauthenticated, "the JWT is not accepted: %s", jwtReason(err))
	}
	sub, _ := claims["sub"].(string)
	if strings.TrimSpace(sub) == "" {
		return lore.Principal{}, errs.New(errs.Unauthenticated, "the JWT has no sub claim to name its principal")
	}
	role, _ := claims[v.cfg.RoleClaim].(string)
	switch lore.Role(role) {
	case lore.RoleAdmin, lore.RoleReader:
	default:
		return lore.Principal{}, errs.New(errs.Unauthenticated, "the JWT's %s claim is %q; want admin or reader", v.cfg.RoleClaim, role)
	}
	return lore.Principal{Name: sub, Role: lore.Role(role)}, nil
}

// key gives the key of the token's algorithm; WithValidMethods already refused
// any algorithm not configured.
func (v *JWTVerifier) key(t *jwt.Token) (any, error) {
	switch t.Method.Alg() {
	case jwt.SigningMethodHS256.Alg():
		if v.cfg.HS256Secret != nil {
			return v.cfg.HS256Secret, nil
		}
	case jwt.SigningMethodRS256.Alg():
		if v.cfg.RS256Key != nil {
			return v.cfg.RS256Key, nil
		}
	}
	return nil, fmt.Errorf("algorithm %s is not configured", t.Method.Alg())
}

// jwtReason is the short reason a JWT is refused, for the client and the log.
func jwtReason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "it has expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return "it is not valid yet (nbf)"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "it has no exp claim"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "its signature or algorithm is not one this server checks"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "its audience is not this server's"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "its issuer is not this server's"
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "it is malformed"
	}
	return "it does not verify"
}
