package console_test

import (
	"bufio"
	"context"
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

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/console"
	"github.com/jobgen/jobgen/internal/redistest"
)

// writeCert writes a self-signed certificate for 127.0.0.1 and its key
// into dir, and returns their paths and the certificate.
func writeCert(t *testing.T, dir string) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "jobgen test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err = x509.ParseCertificate(der)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	return certFile, keyFile, cert
}

// --tls-cert and --tls-key serve the dashboard over HTTPS.
func TestDashboardServesTLS(t *testing.T) {
	t.Parallel()
	b := setup(t, redistest.Backends(t)[0])
	certFile, keyFile, cert := writeCert(t, t.TempDir())
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan int, 1)
	go func() {
		c := &console.Command{Name: "app", Stdout: io.Discard, Stderr: pw,
			Getenv: func(k string) string { return map[string]string{console.DashboardPasswordEnv: "s3cret"}[k] }}
		done <- c.Run(ctx, []string{"dashboard", "--addr", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile, "--redis", b.url, "--prefix", b.prefix})
		_ = pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	require.Contains(t, line, " on https://127.0.0.1:")
	url := strings.Fields(line[strings.Index(line, "https://"):])[0]

	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.SetBasicAuth("admin", "s3cret")
	res, err := client.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NotNil(t, res.TLS)

	cancel()
	require.Equal(t, 0, <-done)

	// One without the other is a usage error; a bad pair fails at once.
	code, _, stderr := b.run(t, "dashboard", "--tls-cert", certFile)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--tls-cert and --tls-key go together")
	code, _, stderr = b.run(t, "dashboard", "--addr", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", certFile)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "--tls-cert "+certFile)
}
