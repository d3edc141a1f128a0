package server

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/loredb/lore"
)

// TokenStore maps bearer tokens to principals. It keeps only the SHA-256 of each
// token, as the tokens file does, and compares in constant time. It is safe for
// concurrent use; Reload replaces its entries while requests are served.
//
// The file has one token a line: "sha256:<64 hex digits> <role> <name>", role admin
// or reader, the name the rest of the line; blank lines and lines starting with # are
// ignored.
type TokenStore struct {
	path    string
	mu      sync.RWMutex
	entries []tokenEntry
}

type tokenEntry struct {
	hash      [sha256.Size]byte
	principal lore.Principal
}

// LoadTokens reads the tokens file at path.
func LoadTokens(path string) (*TokenStore, error) {
	s := &TokenStore{path: path}
	if err := s.Reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// Reload reads the file again. On an error the store keeps its entries: a bad edit
// does not lock everyone out.
func (s *TokenStore) Reload() error {
	entries, err := readTokens(s.path)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.entries = entries
	s.mu.Unlock()
	return nil
}

// Len is the number of tokens known.
func (s *TokenStore) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.entries)
}

// Lookup returns the principal of token. Every entry is compared, in constant time,
// so that the time taken says nothing about which hash came close.
func (s *TokenStore) Lookup(token string) (lore.Principal, bool) {
	h := sha256.Sum256([]byte(token))
	s.mu.RLock()
	defer s.mu.RUnlock()
	var found lore.Principal
	ok := 0
	for _, e := range s.entries {
		if subtle.ConstantTimeCompare(h[:], e.hash[:]) == 1 {
			found, ok = e.principal, 1
		}
	}
	return found, ok == 1
}

func readTokens(path string) ([]tokenEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read tokens file: %w", err)
	}
	defer f.Close()
	var out []tokenEntry
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseTokenLine(line)
		if err != nil {
			// The line itself is not repeated: it may hold a token pasted by mistake.
			return nil, fmt.Errorf("tokens file %s, line %d: %w", path, n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cannot read tokens file: %w", err)
	}
	return out, nil
}

func parseTokenLine(line string) (tokenEntry, error) {
	fields := strings.Fields(line)
	if len(fields) < 3 {
		return tokenEntry{}, fmt.Errorf(`want "sha256:<hex> <role> <name>"`)
	}
	digest, ok := strings.CutPrefix(fields[0], "sha256:")
	b, err := hex.DecodeString(digest)
	if !ok || err != nil || len(b) != sha256.Size {
		return tokenEntry{}, fmt.Errorf("the first field is not sha256:<64 hex digits> (tokens are stored hashed; see HashToken)")
	}
	role := lore.Role(fields[1])
	if role != lore.RoleAdmin && role != lore.RoleReader {
		return tokenEntry{}, fmt.Errorf("role %q is neither admin nor reader", fields[1])
	}
	var e tokenEntry
	copy(e.hash[:], b)
	e.principal = lore.Principal{Name: strings.Join(fields[2:], " "), Role: role}
	return e, nil
}

// HashToken is the tokens-file form of a token's hash: "sha256:<hex>".
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(h[:])
}

// TokenLine is the tokens-file line of token for principal p.
func TokenLine(token string, p lore.Principal) string {
	return fmt.Sprintf("%s %s %s\n", HashToken(token), p.Role, p.Name)
}

// NewToken returns a new random token (256 bits).
func NewToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("BUG: no randomness: %v", err))
	}
	return "lore_" + hex.EncodeToString(b[:])
}

// AddToken appends a new token for p to the tokens file at path (created, mode 0600,
// when missing) and returns the token: the only time it is ever shown.
func AddToken(path string, p lore.Principal) (string, error) {
	if p.Role != lore.RoleAdmin && p.Role != lore.RoleReader {
		return "", fmt.Errorf("role %q is neither admin nor reader", p.Role)
	}
	if strings.TrimSpace(p.Name) == "" || strings.ContainsAny(p.Name, "\n\r") {
		return "", fmt.Errorf("a token needs a name on one line")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("cannot create the tokens file's directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("cannot open tokens file: %w", err)
	}
	tok := NewToken()
	if _, err := f.WriteString(TokenLine(tok, p)); err != nil {
		f.Close()
		return "", fmt.Errorf("cannot write tokens file: %w", err)
	}
	return tok, f.Close()
}
