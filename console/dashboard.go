package console

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/runtime"
)

// DashboardPasswordEnv names the environment variable that, when set,
// puts the dashboard command behind HTTP basic authentication as user
// "admin" with that password.
const DashboardPasswordEnv = "JOBGEN_DASHBOARD_PASSWORD"

var dashboardVerb = &verb{
	name:    "dashboard",
	summary: "Serve the web dashboard of the queues",
	maxArgs: 0,
	about: `Serve the dashboard (package dashboard): queues, workers, jobs per
minute, failed jobs, batches, with pause, resume, clear, retry and
forget; from the application's binary, its periodic jobs too
(console.WithSchedule), with pause, resume and run now. It listens on
loopback unless --addr names another address; set
$` + DashboardPasswordEnv + ` to ask for basic authentication (user
"admin"), which it needs to listen beyond loopback unless told
--insecure. It answers only requests for loopback names and the hosts
given with --host, so that no other site reaches it by DNS rebinding.
Ctrl-C or SIGTERM stops it.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var addr string
		var readOnly, insecure bool
		var hosts []string
		fs.stringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on", "")
		fs.meta["addr"] = "HOST:PORT"
		fs.boolVar(&readOnly, "read-only", false, "show the queues, refuse every action")
		fs.Var(&listValue{p: &hosts}, "host", "names users reach the dashboard by, besides localhost, 127.0.0.1 and ::1 (NAME or NAME:PORT; * for any)")
		fs.add("host", "")
		fs.meta["host"] = "NAME[,NAME]"
		fs.boolVar(&insecure, "insecure", false, "listen beyond loopback with no password, and say so on every page")
		var tlsCert, tlsKey string
		fs.stringVar(&tlsCert, "tls-cert", "", "serve HTTPS with this certificate (PEM; with --tls-key)", "")
		fs.stringVar(&tlsKey, "tls-key", "", "the certificate's private key (PEM)", "")
		fs.meta["tls-cert"], fs.meta["tls-key"] = "FILE", "FILE"
		return func(ctx context.Context, s *session) error {
			if (tlsCert == "") != (tlsKey == "") {
				return usagef("--tls-cert and --tls-key go together")
			}
			opts := dashboard.Options{ReadOnly: readOnly, Router: c.Router, Schedule: c.Schedule, Logger: c.logger(), Hosts: hosts}
			if c.Outbox != nil && c.Outbox.DB != nil {
				opts.OutboxDB, opts.OutboxTable = c.Outbox.DB, c.outboxTable()
			}
			pw := c.getenv(DashboardPasswordEnv)
			if pw != "" {
				opts.Authorize = dashboard.BasicAuth("admin", pw)
			}
			if pw == "" && !loopbackAddr(addr) {
				if !insecure {
					return fmt.Errorf("%w: --addr %s is reachable beyond this machine, and no password is set: set $%s, or pass --insecure to serve the queues, their payloads and their actions to anyone who can reach it", runtime.ErrInvalid, addr, DashboardPasswordEnv)
				}
				opts.Banner = "Open to anyone who can reach " + addr + ": no password is set (--insecure). Set $" + DashboardPasswordEnv + "."
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			srv := &http.Server{Handler: dashboard.New(s.engine, opts), ReadHeaderTimeout: 10 * time.Second}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			go func() {
				<-ctx.Done()
				shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				_ = srv.Shutdown(shut)
			}()
			scheme := "http"
			serve := func() error { return srv.Serve(ln) }
			if tlsCert != "" {
				// Load the pair now, so that a bad one fails at once.
				if _, err := tls.LoadX509KeyPair(tlsCert, tlsKey); err != nil {
					_ = ln.Close()
					return fmt.Errorf("--tls-cert %s, --tls-key %s: %w", tlsCert, tlsKey, err)
				}
				scheme = "https"
				serve = func() error { return srv.ServeTLS(ln, tlsCert, tlsKey) }
			}
			fmt.Fprintf(s.errOut, "Dashboard of prefix %s on %s://%s/ (Ctrl-C stops it)\n", s.engine.Config().Prefix, scheme, ln.Addr())
			if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		}
	},
}

// loopbackAddr says whether addr (HOST:PORT) listens on loopback only.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
