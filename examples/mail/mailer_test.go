package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/jobtest"
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
	require.Contains(t, err.Error(), "failed by its handler") // runtime.FailRequest
}

// Code that dispatches is tested with a fake dispatcher on the context:
// jobtest.Fake records what is dispatched instead of sending it.
func TestSignUpQueuesWelcome(t *testing.T) {
	t.Parallel()
	fake := jobtest.NewFake()
	ctx := fake.Context(context.Background())

	require.NoError(t, SignUp(ctx, "ada@example.com", "Ada"))
	require.Error(t, SignUp(ctx, "not-an-address", "X"))

	jobtest.AssertDispatchedTimes[SendWelcome](t, fake, 1)
	jobtest.AssertDispatched(t, fake, func(j SendWelcome) bool { return j.Email == "ada@example.com" && j.Name == "Ada" })
	jobtest.AssertNotDispatched[SendPasswordReset](t, fake)
	require.Equal(t, "mail", fake.Dispatches()[0].Queue)
}

// jobtest.Harness runs the real engine and a worker on an in-process
// Redis: the test dispatches as the application does, and Drain runs
// the jobs through the real handlers.
func TestSignUpSendsWelcome(t *testing.T) {
	t.Parallel()
	h := jobtest.NewHarness(t, jobtest.HarnessConfig{})
	s := &fakeSender{}
	Register(h.Router, newTestMailer(t, s))
	ctx := h.Context(context.Background())

	require.NoError(t, SignUp(ctx, "ada@example.com", "Ada"))
	require.NoError(t, h.Drain(ctx))
	require.Len(t, s.sent, 1)
	require.Equal(t, "Welcome, Ada", s.sent[0].Subject)
}
