package rdb

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/urlscheme"
)

// BadURLError says why a Redis URL cannot be opened. runtime wraps its
// Reason in runtime.ErrInvalid.
type BadURLError struct {
	// Reason is the problem, in words that never hold the URL's password.
	Reason string
}

func (e *BadURLError) Error() string { return e.Reason }

func badURL(format string, a ...any) error {
	return &BadURLError{Reason: fmt.Sprintf(format, a...)}
}

// OpenClient returns a go-redis client for rawURL, in the forms
// runtime.Open takes, and a function that closes it. A URL that is no
// URL, or of an unknown scheme, or that names embedded:// in a program
// that does not import runtime/embedded, returns a *BadURLError; an
// empty one is runtime's to refuse, and its go-redis log is runtime's
// to quiet (QuietLog).
func OpenClient(rawURL string) (redis.UniversalClient, func() error, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error repeats the whole URL, password included.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, badURL("Redis URL is not a valid URL: %v", err)
	}
	switch u.Scheme {
	case "redis", "rediss":
		opt, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, nil, badURL("Redis URL %s: %v", RedactURL(rawURL), err)
		}
		c := redis.NewClient(opt)
		return c, c.Close, nil
	case "redis+sentinel", "rediss+sentinel":
		return openSentinel(u)
	case "redis+cluster", "rediss+cluster":
		opt := &redis.ClusterOptions{Addrs: strings.Split(u.Host, ",")}
		opt.Username, opt.Password, opt.TLSConfig = access(u)
		c := redis.NewClusterClient(opt)
		return c, c.Close, nil
	case "embedded":
		open, ok := urlscheme.Lookup("embedded")
		if !ok {
			return nil, nil, badURL("embedded:// needs the in-process server, which production binaries leave out: import _ %q in the program or test that uses it", "github.com/jobgen/jobgen/runtime/embedded")
		}
		return open(u.Host + u.Path)
	}
	return nil, nil, badURL("Redis URL scheme %q: want redis, rediss, redis+sentinel, redis+cluster or embedded", u.Scheme)
}

func openSentinel(u *url.URL) (redis.UniversalClient, func() error, error) {
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if parts[0] == "" {
		return nil, nil, badURL("Sentinel URL %s has no master name: want redis+sentinel://host:port/mastername[/db]", RedactURL(u.String()))
	}
	opt := &redis.FailoverOptions{MasterName: parts[0], SentinelAddrs: strings.Split(u.Host, ",")}
	if len(parts) > 1 {
		db, err := strconv.Atoi(parts[1])
		if err != nil {
			return nil, nil, badURL("Sentinel URL %s: db %q is not a number", RedactURL(u.String()), parts[1])
		}
		opt.DB = db
	}
	opt.Username, opt.Password, opt.TLSConfig = access(u)
	c := redis.NewFailoverClient(opt)
	return c, c.Close, nil
}

// RedactURL hides the password of a URL for error messages.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// access returns the user, password and TLS configuration of a URL
// naming several servers, host1:port,host2:port (Sentinel, Cluster):
// TLS for a scheme that begins "rediss", verifying each server's
// certificate against the first's host name.
func access(u *url.URL) (user, password string, tc *tls.Config) {
	if u.User != nil {
		user = u.User.Username()
		password, _ = u.User.Password()
	}
	if strings.HasPrefix(u.Scheme, "rediss+") {
		tc = tlsConfig(strings.Split(u.Host, ",")[0])
	}
	return user, password, tc
}

// tlsConfig verifies the server's certificate against addr's host name.
func tlsConfig(addr string) *tls.Config {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
}
