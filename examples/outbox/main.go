// Command outbox is an HTTP service that takes orders and emails their
// confirmations, through jobgen's transactional outbox: the handler
// inserts the order and dispatches its confirmation in one PostgreSQL
// transaction, so that a confirmation is sent if and only if its order
// was saved. A relay moves committed confirmations to Redis, and a worker
// sends them; all three run in this one process.
//
//	go run ./examples/outbox -db postgres://postgres@127.0.0.1:5432/postgres
//	curl -d email=ada@example.com -d amount=42 localhost:8080/orders
//
// An order whose amount is not positive is refused after its INSERT, and
// its transaction rolls back: no order, and no email.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/outbox/pgxoutbox"
	"github.com/jobgen/jobgen/runtime"

	_ "github.com/jobgen/jobgen/runtime/embedded" // embedded:// for the example
)

func main() {
	db := flag.String("db", os.Getenv("DATABASE_URL"), "PostgreSQL URL (default $DATABASE_URL)")
	url := flag.String("redis", "embedded://", "Redis URL, or embedded:// for an in-process server")
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve on")
	flag.Parse()
	if *db == "" {
		fmt.Fprintln(os.Stderr, "outbox: -db or DATABASE_URL is required: a PostgreSQL URL")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := open(ctx, config{DB: *db, Redis: *url, Prefix: "outbox-example", Send: func(ctx context.Context, j SendOrderConfirmation) error {
		slog.Info("sent the confirmation", "order", j.OrderID, "to", j.Email)
		return nil
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "outbox:", err)
		os.Exit(1)
	}
	defer a.Close()
	go func() { _ = a.Run(ctx) }()
	srv := &http.Server{Addr: *addr, Handler: a.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Shutdown(context.Background()) }()
	slog.Info("taking orders", "addr", *addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "outbox:", err)
		os.Exit(1)
	}
}

// config says what the app connects to, and how it sends an email.
type config struct {
	DB, Redis, Prefix string
	// Table is the outbox table; default jobgen_outbox.
	Table string
	Send  func(context.Context, SendOrderConfirmation) error
}

// app is the service: its database, engine, relay and worker.
type app struct {
	pool   *pgxpool.Pool
	engine *runtime.Engine
	wake   *pgxoutbox.Listener
	relay  *outbox.Relay
	worker *runtime.Worker
}

// open connects, creates the tables, and sets up the relay and worker.
func open(ctx context.Context, cfg config) (*app, error) {
	pool, err := pgxpool.New(ctx, cfg.DB)
	if err != nil {
		return nil, err
	}
	a := &app{pool: pool}
	if a.engine, err = runtime.Open(ctx, cfg.Redis, runtime.EngineConfig{Prefix: cfg.Prefix, OutboxTable: cfg.Table}); err != nil {
		a.Close()
		return nil, err
	}
	db := pgxoutbox.DB(pool)
	if err := runtime.MigrateOutbox(ctx, db, cfg.Table); err != nil {
		a.Close()
		return nil, err
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS orders (id bigserial PRIMARY KEY, email text NOT NULL, amount bigint NOT NULL)`); err != nil {
		a.Close()
		return nil, err
	}
	if a.wake, err = pgxoutbox.Listen(ctx, pool, cfg.Table); err != nil {
		a.Close()
		return nil, err
	}
	if a.relay, err = outbox.NewRelay(a.engine, outbox.RelayConfig{DB: db, Wake: a.wake}); err != nil {
		a.Close()
		return nil, err
	}
	r := runtime.NewRouter()
	Register(r, handlers{send: cfg.Send})
	if a.worker, err = runtime.NewWorker(a.engine, r, runtime.WorkerConfig{Queues: []string{"emails"}}); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// Run runs the relay and the worker until ctx ends.
func (a *app) Run(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- a.relay.Run(ctx) }()
	err := a.worker.Run(ctx)
	return errors.Join(err, <-done)
}

// Close closes what open opened.
func (a *app) Close() {
	if a.wake != nil {
		a.wake.Close()
	}
	if a.engine != nil {
		_ = a.engine.Close()
	}
	a.pool.Close()
}

// Handler serves POST /orders: email and amount, as a form.
func (a *app) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /orders", a.order)
	return mux
}

// order inserts the order and dispatches its confirmation in one
// transaction.
func (a *app) order(w http.ResponseWriter, r *http.Request) {
	ctx := runtime.WithDispatcher(r.Context(), a.engine)
	email := r.FormValue("email")
	amount, _ := strconv.ParseInt(r.FormValue("amount"), 10, 64)
	tx, err := a.pool.Begin(ctx)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer func() { _ = tx.Rollback(ctx) }() // a no-op once committed
	var id int64
	if err := tx.QueryRow(ctx, `INSERT INTO orders (email, amount) VALUES ($1, $2) RETURNING id`, email, amount).Scan(&id); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if _, err := (SendOrderConfirmation{OrderID: id, Email: email}).DispatchTx(ctx, pgxoutbox.Tx(tx)); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	// A check after the writes, to show a rollback: the order and its
	// confirmation go together.
	if amount <= 0 {
		http.Error(w, "amount must be positive", http.StatusUnprocessableEntity)
		return
	}
	if err := tx.Commit(ctx); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, "order %d\n", id)
}

// handlers are the job handlers (the generated Handlers interface).
type handlers struct {
	send func(context.Context, SendOrderConfirmation) error
}

func (h handlers) HandleSendOrderConfirmation(ctx context.Context, j SendOrderConfirmation) error {
	return h.send(ctx, j)
}
