package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// An action while Redis is frozen is answered with 504, saying that it
// may yet be applied, rather than hanging until the client gives up; the
// pause it sent is applied once Redis resumes.
func TestActionWhileRedisIsFrozen(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	ctx := context.Background()
	e, err := runtime.Open(ctx, "redis://"+srv.Addr, runtime.EngineConfig{Prefix: redistest.Prefix(t)})
	require.NoError(t, err)
	defer e.Close()
	h := httptest.NewServer(dashboard.New(e, dashboard.Options{Logger: quiet}))
	defer h.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	require.NoError(t, srv.Signal(syscall.SIGSTOP))
	req, err := http.NewRequest(http.MethodPost, h.URL+"/queues/emails/pause", nil)
	require.NoError(t, err)
	req.Header.Set("Origin", h.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := client.Do(req)
	require.NoError(t, srv.Signal(syscall.SIGCONT))
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	require.Equal(t, http.StatusGatewayTimeout, res.StatusCode)
	require.Contains(t, string(body), "may still be applied")
	require.NotContains(t, string(body), `http-equiv="refresh"`, "a reload would not repeat the POST")
	require.False(t, strings.Contains(string(body), srv.Addr))

	require.Eventually(t, func() bool {
		paused, err := runtime.NewInspector(e).QueuePaused(ctx, "emails")
		return err == nil && paused
	}, time.Minute, 50*time.Millisecond, "the pause is applied once Redis answers")
}
