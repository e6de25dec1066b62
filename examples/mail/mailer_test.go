package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// fakeSender records messages, or fails with err.
type fakeSender struct {
	mu   sync.Mutex
	sent []Message
	err  error
}

func (s *fakeSender) Send(ctx context.Context, m Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.sent = append(s.sent, m)
	return nil
}

func newTestMailer(t *testing.T, s Sender) *Mailer {
	t.Helper()
	m, err := NewMailer(s, slog.New(slog.NewTextHandler(io.Discard, nil)), "hello@example.com")
	require.NoError(t, err)
	return m
}

// Handlers are plain methods: a test calls them directly.
func TestMailerRendersAndSends(t *testing.T) {
	t.Parallel()
	s := &fakeSender{}
	m := newTestMailer(t, s)

	require.NoError(t, m.HandleSendWelcome(context.Background(), SendWelcome{Email: "ada@example.com", Name: "Ada"}))
	require.NoError(t, m.HandleSendPasswordReset(context.Background(), SendPasswordReset{Email: "ada@example.com", Token: "t0k"}))
	require.Equal(t, []Message{
		{From: "hello@example.com", To: "ada@example.com", Subject: "Welcome, Ada", Body: "Hi Ada,\n\nthanks for signing up."},
		{From: "hello@example.com", To: "ada@example.com", Subject: "Reset your password",
			Body: "Someone asked to reset the password of ada@example.com.\nTo choose a new one, open https://example.com/reset/t0k"},
	}, s.sent)
}

// A temporary error is returned for the worker to retry; a permanent
// one fails the job at once.
func TestMailerErrors(t *testing.T) {
	t.Parallel()
	temporary := errors.New("421 try again later")
	m := newTestMailer(t, &fakeSender{err: temporary})
	err := m.HandleSendWelcome(context.Background(), SendWelcome{Email: "ada@example.com"})
	require.ErrorIs(t, err, temporary)
	require.NotContains(t, err.Error(), "failed by its handler")

	permanent := &PermanentError{Err: errors.New("550 no such user")}
	m = newTestMailer(t, &fakeSender{err: permanent})
	err = m.HandleSendWelcome(context.Background(), SendWelcome{Email: "x@example.com"})
	require.ErrorIs(t, err, permanent)
	require.Contains(t, err.Error(), "failed by its handler") // runtime.FailJob
}

// recorder is a runtime.Dispatcher that keeps what is dispatched
// instead of sending it to Redis.
type recorder struct {
	mu   sync.Mutex
	jobs []*runtime.PendingDispatch
}

func (r *recorder) Dispatch(ctx context.Context, p *runtime.PendingDispatch) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs = append(r.jobs, p)
	return "fake-id", nil
}

// Code that dispatches is tested with a fake dispatcher on the context.
func TestSignUpQueuesWelcome(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	ctx := runtime.WithDispatcher(context.Background(), rec)

	require.NoError(t, SignUp(ctx, "ada@example.com", "Ada"))
	require.Error(t, SignUp(ctx, "not-an-address", "X"))

	require.Len(t, rec.jobs, 1)
	require.Equal(t, SendWelcome{Email: "ada@example.com", Name: "Ada"}, rec.jobs[0].Job())
	require.Equal(t, "mail", rec.jobs[0].Queue())
	require.Zero(t, rec.jobs[0].DelayDuration())
}
