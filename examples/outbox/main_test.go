package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/outbox/pgxoutbox"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// An order that commits gets its confirmation; one that rolls back gets
// neither a row nor an email.
func TestOrdersAndTheirConfirmations(t *testing.T) {
	dbURL := pgtest.URL(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool, err := pgxpool.New(ctx, dbURL)
	require.NoError(t, err)
	defer pool.Close()
	table := pgtest.Table(t, pgxoutbox.DB(pool))

	var mu sync.Mutex
	sent := map[string]int64{}
	a, err := open(ctx, config{DB: dbURL, Redis: "redis://" + redistest.Addr(t), Prefix: redistest.Prefix(t), Table: table,
		Send: func(_ context.Context, j SendOrderConfirmation) error {
			mu.Lock()
			defer mu.Unlock()
			sent[j.Email] = j.OrderID
			return nil
		}})
	require.NoError(t, err)
	defer a.Close()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()

	b := make([]byte, 4)
	_, _ = rand.Read(b)
	tag := hex.EncodeToString(b)
	good, bad := "ada-"+tag+"@example.com", "bob-"+tag+"@example.com"
	res, err := http.PostForm(srv.URL+"/orders", url.Values{"email": {good}, "amount": {"42"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, res.StatusCode)
	res, err = http.PostForm(srv.URL+"/orders", url.Values{"email": {bad}, "amount": {"0"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return sent[good] > 0
	}, 10*time.Second, 10*time.Millisecond)
	var id int64
	require.NoError(t, pool.QueryRow(ctx, "SELECT id FROM orders WHERE email = $1", good).Scan(&id))
	mu.Lock()
	require.Equal(t, id, sent[good], "the confirmation names the order saved")
	mu.Unlock()

	var n int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM orders WHERE email = $1", bad).Scan(&n))
	require.Zero(t, n, "the refused order rolled back")
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n))
	require.Zero(t, n, "the outbox is empty: nothing waits for the refused order")
	mu.Lock()
	for to := range sent {
		require.False(t, strings.HasPrefix(to, "bob-"), "the refused order's confirmation was sent")
	}
	mu.Unlock()
	cancel()
	require.NoError(t, <-done)
}
