package dashboard

import (
	"bytes"
	"cmp"
	"context"
	"crypto/subtle"
	"database/sql"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobgen/jobgen/runtime"
	"github.com/jobgen/jobgen/schedule"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configures the dashboard. The zero value is usable: read and
// write, open to whoever reaches the handler.
type Options struct {
	// Authorize runs before every request. It returns true to let the
	// request through; when it returns false it must have written the
	// response itself (a 401 with a challenge, a redirect to a login
	// page). Actions are POSTs, so a hook that allows some users only to
	// read can refuse r.Method == http.MethodPost. Default: everyone.
	Authorize func(w http.ResponseWriter, r *http.Request) bool
	// ReadOnly hides every action and refuses every POST.
	ReadOnly bool
	// Hosts are the names, besides the loopback ones (localhost,
	// 127.0.0.1, ::1), that the dashboard answers requests for, by their
	// Host header: "jobs.example.com", or "jobs.example.com:8443" for one
	// port only. A request for any other host is refused with 421, so
	// that a page of another site cannot reach a dashboard on loopback or
	// a private network by DNS rebinding. Set it to the names users reach
	// the dashboard by; "*" answers any host.
	Hosts []string
	// Banner, if set, is shown at the top of every page: a warning such
	// as the dashboard command's when it runs with no password.
	Banner string
	// Router, if set, offers a form to dispatch a job of any type
	// registered on it, built from the type's fields (not in read-only
	// mode). An application's binary passes its own router.
	Router *runtime.Router
	// Schedule, if set, is the application's periodic jobs: the Periodic
	// page lists its entries with their next and last runs (as kept in
	// the engine's Redis), and pauses, resumes and runs them now (not in
	// read-only mode). Without it, that page says how to pass one. An
	// application's binary built with package console passes its own
	// (console.WithSchedule) to myapp dashboard.
	Schedule *schedule.Schedule
	// Refresh is how often pages fetch their numbers again. Default 2s;
	// negative turns live refresh off.
	Refresh time.Duration
	// PageSize is the number of jobs on a page. Default 50.
	PageSize int
	// Title names the dashboard in the page header. Default "jobgen".
	Title string
	// Logger receives errors of actions that run in the background.
	// Default slog.Default().
	Logger *slog.Logger
	// OutboxDB, if set, is the database holding the outbox table named
	// OutboxTable (runtime.DefaultOutboxTable if empty): the overview's
	// Outbox card then reads the backlog and the relays' last pass from
	// it (outbox.ReadHealth), so that a dead relay or a Redis outage
	// shows, rather than what a relay last published to Redis.
	OutboxDB    *sql.DB
	OutboxTable string
}

func (o *Options) setDefaults() {
	if o.Refresh == 0 {
		o.Refresh = 2 * time.Second
	}
	if o.PageSize <= 0 {
		o.PageSize = 50
	}
	if o.Title == "" {
		o.Title = "jobgen"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// contentSecurityPolicy allows only the handler's own script, style and
// images: no inline script, no inline style, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// handler is the dashboard.
type handler struct {
	e     *runtime.Engine
	ins   *runtime.Inspector
	opts  Options
	pages map[string]*template.Template
	mux   *http.ServeMux
	cop   *http.CrossOriginProtection

	mu    sync.Mutex
	tasks map[string]*task
	notes map[string]note

	// now is the clock of the overview and of the pages' X-Dashboard-Now:
	// time.Now, but in tests.
	now func() time.Time
	// scanBytes, if set, is a test's budget of payload bytes for a
	// search across queues, in place of scanBytes.
	scanBytes atomic.Int64
}

// New returns the dashboard of engine as an http.Handler. Mount it with
// http.StripPrefix under any path: its links are relative.
func New(engine *runtime.Engine, opts Options) http.Handler {
	opts.setDefaults()
	h := &handler{e: engine, ins: runtime.NewInspector(engine), opts: opts, pages: parsePages(), mux: http.NewServeMux(),
		cop: http.NewCrossOriginProtection(), tasks: map[string]*task{}, notes: map[string]note{}, now: time.Now}
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	h.mux.Handle("GET /static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") { // a folder: its files are not listed
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}))
	h.mux.HandleFunc("GET /{$}", h.overview)
	h.mux.HandleFunc("GET /workers", h.workers)
	h.mux.HandleFunc("GET /queues/{queue}", h.queue)
	h.mux.HandleFunc("GET /queues/{queue}/clear", h.confirmClear)
	h.mux.HandleFunc("GET /failed", h.failed)
	h.mux.HandleFunc("GET /failed/flush", h.confirmFlush)
	h.mux.HandleFunc("GET /jobs", h.findJob)
	h.mux.HandleFunc("GET /jobs/{id}", h.job)
	h.mux.HandleFunc("GET /jobs/{id}/cancel", h.confirmCancel)
	h.mux.HandleFunc("GET /jobs/{id}/payload", h.payload)
	h.mux.HandleFunc("GET /jobs/{id}/result", h.result)
	h.mux.HandleFunc("GET /recent", h.recent)
	h.mux.HandleFunc("GET /history", h.history)
	h.mux.HandleFunc("GET /redis", h.redisPage)
	h.mux.HandleFunc("GET /tags", h.tags)
	h.mux.HandleFunc("GET /search", h.search)
	h.mux.HandleFunc("GET /completed", h.completed)
	h.mux.HandleFunc("GET /metrics", h.metrics)
	h.mux.HandleFunc("GET /batches", h.findBatch)
	h.mux.HandleFunc("GET /batches/{id}", h.batch)
	h.mux.HandleFunc("GET /workflows", h.findWorkflow)
	h.mux.HandleFunc("GET /workflows/{id}", h.workflow)
	h.mux.HandleFunc("GET /tasks/{id}", h.task)
	h.mux.HandleFunc("GET /dispatch", h.dispatchForm)
	h.mux.HandleFunc("GET /schedule", h.schedule)

	h.mux.HandleFunc("POST /queues/{queue}/pause", h.pause)
	h.mux.HandleFunc("POST /queues/{queue}/resume", h.resume)
	h.mux.HandleFunc("POST /queues/{queue}/clear", h.clear)
	h.mux.HandleFunc("POST /queues/{queue}/limits", h.setLimits)
	h.mux.HandleFunc("POST /failed/act", h.failedAct)
	h.mux.HandleFunc("POST /failed/retry-all", h.retryAll)
	h.mux.HandleFunc("POST /failed/flush", h.flush)
	h.mux.HandleFunc("POST /batches/{id}/cancel", h.cancelBatch)
	h.mux.HandleFunc("POST /jobs/{id}/cancel", h.cancelJob)
	h.mux.HandleFunc("POST /batches/{id}/retry", h.retryBatch)
	h.mux.HandleFunc("POST /workflows/{id}/cancel", h.cancelWorkflow)
	h.mux.HandleFunc("POST /workflows/{id}/retry", h.retryWorkflow)
	h.mux.HandleFunc("POST /dispatch", h.dispatch)
	h.mux.HandleFunc("POST /tags/add", h.tagAct(true))
	h.mux.HandleFunc("POST /tags/remove", h.tagAct(false))
	h.mux.HandleFunc("POST /schedule/pause", h.pauseEntry)
	h.mux.HandleFunc("POST /schedule/resume", h.resumeEntry)
	h.mux.HandleFunc("POST /schedule/run", h.runEntry)
	return h
}

// ServeHTTP sets the security headers, asks Authorize, refuses
// cross-origin and (read-only) all POSTs, then serves the page.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "same-origin")
	if !h.hostAllowed(r.Host) {
		http.Error(w, "misdirected request: this dashboard does not answer for host "+strconv.Quote(r.Host)+"; add it to dashboard.Options.Hosts (the dashboard command's --host)", http.StatusMisdirectedRequest)
		return
	}
	if h.opts.Authorize != nil && !h.opts.Authorize(w, r) {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if err := h.cop.Check(r); err != nil {
			http.Error(w, "cross-origin request refused", http.StatusForbidden)
			return
		}
		if h.opts.ReadOnly {
			http.Error(w, "the dashboard is read-only", http.StatusForbidden)
			return
		}
	}
	if strings.HasPrefix(r.URL.Path, "/static/") || r.Method != http.MethodGet && r.Method != http.MethodPost {
		h.mux.ServeHTTP(w, r)
		return
	}
	if r.Method == http.MethodPost {
		h.serveWithin(w, r, actionTimeout, h.actionTimedOut)
		return
	}
	h.serveWithin(w, r, pageTimeout, func(w http.ResponseWriter, r *http.Request, err error) {
		h.fail(w, r, http.StatusGatewayTimeout, fmt.Errorf("the page was not ready within %v: %w", pageTimeout, err))
	})
}

// actionTimeout bounds an action (a POST): a Redis that is frozen gets
// an answer in about this long rather than after the client's timeouts
// and retries (10 to 40 s), saying that the action may yet be applied.
const actionTimeout = 5 * time.Second

// actionTimedOut answers an action that Redis did not answer within
// actionTimeout. It was sent, so it may still be applied when Redis
// answers: the page says so, and does not reload itself, as a reload
// would not repeat the POST.
func (h *handler) actionTimedOut(w http.ResponseWriter, r *http.Request, err error) {
	h.opts.Logger.Error("dashboard: an action had no answer from Redis in time", "path", r.URL.Path, "err", err)
	h.renderStatus(w, r, http.StatusGatewayTimeout, "error", "Error", map[string]any{"Status": http.StatusGatewayTimeout,
		"Message": fmt.Sprintf("Redis did not answer within %v. The action was sent and may still be applied when Redis answers: "+
			"look at the page again before repeating it.", actionTimeout)}, true)
}

// pageTimeout bounds a page's Redis calls: a Redis that is frozen, not
// down, gets an error page in about this long, not when the client's
// own timeouts and retries give up.
const pageTimeout = 2 * time.Second

// serveWithin serves a request into a buffer, and sends the response if
// it is ready within timeout; otherwise it lets the late response go and
// answers with late.
func (h *handler) serveWithin(w http.ResponseWriter, r *http.Request, timeout time.Duration, late func(http.ResponseWriter, *http.Request, error)) {
	// A page's reads stop at the deadline. An action runs on without it:
	// cut short between its calls, it would be half done, and a call
	// sent is applied when Redis answers whether or not anyone waits.
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	run := ctx
	if r.Method != http.MethodGet {
		run = context.WithoutCancel(r.Context())
	}
	bw := &bufferedWriter{header: http.Header{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.mux.ServeHTTP(bw, r.WithContext(run))
	}()
	select {
	case <-done:
		for k, v := range bw.header {
			w.Header()[k] = v
		}
		w.WriteHeader(cmp.Or(bw.status, http.StatusOK))
		_, _ = bw.buf.WriteTo(w)
	case <-ctx.Done():
		late(w, r, ctx.Err())
	}
}

// bufferedWriter holds a response until it is complete.
type bufferedWriter struct {
	header http.Header
	status int
	buf    bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }
func (b *bufferedWriter) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}
func (b *bufferedWriter) Write(p []byte) (int, error) { return b.buf.Write(p) }

// loopbackHosts are the names the dashboard always answers for.
var loopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// hostAllowed says whether the dashboard answers a request whose Host
// header is host: a loopback name on any port, or one of Options.Hosts
// (with its port, if it names one).
func (h *handler) hostAllowed(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	name := host
	if n, _, err := net.SplitHostPort(host); err == nil {
		name = n
	}
	name = strings.TrimSuffix(strings.Trim(name, "[]"), ".")
	if slices.Contains(loopbackHosts, name) {
		return true
	}
	for _, allowed := range h.opts.Hosts {
		allowed = strings.ToLower(allowed)
		if allowed == "*" || allowed == name || allowed == host {
			return true
		}
	}
	return false
}

// BasicAuth returns an Authorize hook that asks for HTTP basic
// authentication with user and password, compared in constant time.
// Wrong guesses back off, per client address: after 5, each further one
// locks the client out for twice as long as the last, from 1 s up to an
// hour, so that an address gets about 40 guesses a day. An address's
// count is forgotten when it gives the right password, or a day after
// its last wrong one. A request while locked out gets 429 with
// Retry-After, its password unchecked. Behind a proxy every client has
// the proxy's address.
func BasicAuth(user, password string) func(http.ResponseWriter, *http.Request) bool {
	g := &guesses{byClient: map[string]*guessState{}, now: time.Now}
	return func(w http.ResponseWriter, r *http.Request) bool {
		client := r.RemoteAddr
		if host, _, err := net.SplitHostPort(client); err == nil {
			client = host
		}
		if wait := g.lockedFor(client); wait > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
			http.Error(w, "too many wrong passwords: try again later", http.StatusTooManyRequests)
			return false
		}
		u, p, ok := r.BasicAuth()
		if ok && password != "" &&
			subtle.ConstantTimeCompare([]byte(u), []byte(user)) == 1 &&
			subtle.ConstantTimeCompare([]byte(p), []byte(password)) == 1 {
			g.forget(client)
			return true
		}
		if ok {
			g.wrong(client)
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="jobgen dashboard", charset="UTF-8"`)
		http.Error(w, "authentication required", http.StatusUnauthorized)
		return false
	}
}

// guesses tracks wrong passwords per client.
type guesses struct {
	mu       sync.Mutex
	byClient map[string]*guessState
	now      func() time.Time
}

type guessState struct {
	fails       int       // wrong guesses since the count began
	last        time.Time // the last of them
	lockedUntil time.Time
	lock        time.Duration // the last lockout
}

const (
	freeGuesses = 5
	// guessMemory is how long after its last wrong guess an address's
	// count is kept: the lockouts grow for as long as the guesses go on.
	guessMemory = 24 * time.Hour
	maxLockout  = time.Hour
	maxClients  = 10_000
)

func (g *guesses) lockedFor(client string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if st := g.byClient[client]; st != nil {
		return st.lockedUntil.Sub(g.now())
	}
	return 0
}

func (g *guesses) wrong(client string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	st := g.byClient[client]
	if st == nil || st.stale(now) {
		if len(g.byClient) >= maxClients {
			g.prune(now)
		}
		st = &guessState{}
		g.byClient[client] = st
	}
	st.fails++
	st.last = now
	if st.fails > freeGuesses {
		st.lock = min(max(2*st.lock, time.Second), maxLockout)
		st.lockedUntil = now.Add(st.lock)
	}
}

// stale reports whether the count may be forgotten at now.
func (st *guessState) stale(now time.Time) bool {
	return now.Sub(st.last) > guessMemory && now.After(st.lockedUntil)
}

func (g *guesses) forget(client string) {
	g.mu.Lock()
	delete(g.byClient, client)
	g.mu.Unlock()
}

// prune drops the clients whose count may be forgotten.
func (g *guesses) prune(now time.Time) {
	for c, st := range g.byClient {
		if st.stale(now) {
			delete(g.byClient, c)
		}
	}
}

// base is the relative path from the page r asks for back to the
// dashboard's root ("./", "../", ...), whatever prefix it is mounted
// under.
func base(r *http.Request) string {
	depth := strings.Count(r.URL.EscapedPath(), "/") - 1
	if depth <= 0 {
		return "./"
	}
	return strings.Repeat("../", depth)
}

// redirect sends the browser to path (from the dashboard's root) after a
// POST.
func redirect(w http.ResponseWriter, r *http.Request, path string) {
	seeOther(w, base(r)+strings.TrimPrefix(path, "/"))
}

// seeOther redirects to a relative location as it is: http.Redirect
// would resolve it against the path StripPrefix left, losing the prefix.
func seeOther(w http.ResponseWriter, location string) {
	w.Header().Set("Location", location)
	w.WriteHeader(http.StatusSeeOther)
}

// fail writes an error page. An error of Redis (a 5xx) is logged, and
// the page says only that Redis failed: its message may name internal
// addresses.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	msg := err.Error()
	if status >= 500 {
		h.opts.Logger.Error("dashboard: a page could not be read from Redis", "path", r.URL.Path, "err", err)
		msg = "Redis could not be reached, or did not answer in time; the dashboard's log has the details."
	}
	h.renderStatus(w, r, status, "error", "Error", map[string]any{"Status": status, "Message": msg}, true)
}

func (h *handler) failf(w http.ResponseWriter, r *http.Request, status int, format string, args ...any) {
	h.fail(w, r, status, fmt.Errorf(format, args...))
}
