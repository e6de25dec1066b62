package runtime

import (
	"crypto/tls"
	"net"
)

// tlsConfig verifies the server's certificate against addr's host name.
func tlsConfig(addr string) *tls.Config {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
}
