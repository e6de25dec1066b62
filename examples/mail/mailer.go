package main

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"text/template"

	"github.com/jobgen/jobgen/runtime"
)

// Message is one email.
type Message struct {
	From, To, Subject, Body string
}

// Sender delivers email: an SMTP client in production, a fake in tests.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// PermanentError is a Sender's error for a message that will never be
// delivered, such as one to an address that does not exist. Other
// errors are taken as temporary.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return "permanent: " + e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

//go:embed templates/*.tmpl
var templateFiles embed.FS

// Mailer handles the mail jobs: it implements the generated Handlers
// interface, and holds what the handlers need. The worker calls its
// methods concurrently; it keeps no state of its own between calls.
type Mailer struct {
	sender Sender
	tmpl   *template.Template
	log    *slog.Logger
	from   string
}

// The compiler checks that Mailer handles every job of the package.
var _ Handlers = (*Mailer)(nil)

// NewMailer returns a Mailer sending from address from through sender.
func NewMailer(sender Sender, log *slog.Logger, from string) (*Mailer, error) {
	tmpl, err := template.ParseFS(templateFiles, "templates/*.tmpl")
	if err != nil {
		return nil, fmt.Errorf("mail templates: %w", err)
	}
	return &Mailer{sender: sender, tmpl: tmpl, log: log, from: from}, nil
}

// HandleSendWelcome sends the welcome email.
func (m *Mailer) HandleSendWelcome(ctx context.Context, job SendWelcome) error {
	return m.send(ctx, job.Email, "welcome", job)
}

// HandleSendPasswordReset sends the reset link.
func (m *Mailer) HandleSendPasswordReset(ctx context.Context, job SendPasswordReset) error {
	return m.send(ctx, job.Email, "reset", job)
}

// send renders template name with data and sends it to to. A temporary
// failure is returned as it is, so the worker retries the job on its
// backoff; a permanent one fails the job at once with runtime.FailRequest.
func (m *Mailer) send(ctx context.Context, to, name string, data any) error {
	subject, err := m.render(name+".subject", data)
	if err != nil {
		return runtime.FailRequest(err) // a broken template will not mend itself
	}
	body, err := m.render(name+".body", data)
	if err != nil {
		return runtime.FailRequest(err)
	}
	info, _ := runtime.JobInfoFrom(ctx)
	err = m.sender.Send(ctx, Message{From: m.from, To: to, Subject: subject, Body: body})
	var permanent *PermanentError
	switch {
	case errors.As(err, &permanent):
		m.log.WarnContext(ctx, "mail undeliverable", "to", to, "template", name, "err", err)
		return runtime.FailRequest(err)
	case err != nil:
		m.log.WarnContext(ctx, "mail not sent; will retry", "to", to, "template", name, "attempt", info.Attempt, "err", err)
		return err
	}
	m.log.InfoContext(ctx, "mail sent", "to", to, "template", name, "attempt", info.Attempt)
	return nil
}

func (m *Mailer) render(name string, data any) (string, error) {
	var b bytes.Buffer
	if err := m.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("render %s: %w", name, err)
	}
	return b.String(), nil
}
