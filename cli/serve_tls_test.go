package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key, and
// returns their files and a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "lore test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pool
}

// lore serve with TLS listens beyond loopback without --insecure, answers a client
// that trusts its certificate, and a client that does not, or speaks plain HTTP,
// gets nothing.
func TestServeTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	if r := Main([]string{"serve", "--tls-cert", certFile}, nil, io.Discard, io.Discard); r != exitUsage {
		t.Fatalf("--tls-cert without --tls-key: exit %d", r)
	}
	srv := startServe(t, "--addr", "0.0.0.0:0", "--tls-cert", certFile, "--tls-key", keyFile)
	url, token := srv.url, srv.token
	if !strings.HasPrefix(url, "https://") {
		t.Fatalf("url %s", url)
	}
	port := url[strings.LastIndex(url, ":")+1:]
	post := func(c *http.Client, url string) (*http.Response, error) {
		req, _ := http.NewRequest("POST", url+"/v1/statement", strings.NewReader(`{"sql":"SELECT 41 + 1 AS x"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		return c.Do(req)
	}
	trusting := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := post(trusting, url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"rows":[[42]]`) || resp.TLS == nil {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	// Tokens are still required over TLS.
	req, _ := http.NewRequest("GET", url+"/v1/queries", nil)
	if resp, err := trusting.Do(req); err != nil || resp.StatusCode != 401 {
		t.Errorf("no token over TLS: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if _, err := post(&http.Client{Timeout: 10 * time.Second}, url); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client that does not trust the certificate: %v", err)
	}
	if resp, err := post(&http.Client{Timeout: 10 * time.Second}, "http://127.0.0.1:"+port); err == nil && resp.StatusCode == 200 {
		t.Errorf("plain HTTP to the TLS port answered 200")
	}
}
