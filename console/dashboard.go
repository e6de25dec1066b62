package console

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jobgen/jobgen/dashboard"
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
(console.WithSchedule), with pause, resume and run now. It listens on loopback unless --addr names another address; set
$` + DashboardPasswordEnv + ` to ask for basic authentication (user
"admin"). Ctrl-C or SIGTERM stops it.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var addr string
		var readOnly bool
		fs.stringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on", "")
		fs.meta["addr"] = "HOST:PORT"
		fs.boolVar(&readOnly, "read-only", false, "show the queues, refuse every action")
		return func(ctx context.Context, s *session) error {
			opts := dashboard.Options{ReadOnly: readOnly, Router: c.Router, Schedule: c.Schedule, Logger: c.logger()}
			if pw := c.getenv(DashboardPasswordEnv); pw != "" {
				opts.Authorize = dashboard.BasicAuth("admin", pw)
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
			fmt.Fprintf(s.errOut, "Dashboard of prefix %s on http://%s/ (Ctrl-C stops it)\n", s.engine.Config().Prefix, ln.Addr())
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		}
	},
}
