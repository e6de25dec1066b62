// Command worker is version 2 of the rolling deploy fault test's worker
// (package workermain), with version 2 of the job (../mail).
package main

import (
	"context"
	"os"

	"github.com/jobgen/jobgen/faults/internal/rolling/v2/mail"
	"github.com/jobgen/jobgen/faults/internal/rolling/workermain"
	"github.com/jobgen/jobgen/runtime"
)

type handlers struct{ l *workermain.Ledger }

func (h handlers) HandleSendEmail(ctx context.Context, job mail.SendEmail) error {
	return h.l.Run(ctx, job.Seq, job.Recipient)
}

func main() {
	os.Exit(workermain.Main(2, func(r *runtime.Router, l *workermain.Ledger) { mail.Register(r, handlers{l}) }))
}
