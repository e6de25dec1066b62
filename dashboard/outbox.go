package dashboard

import (
	"context"

	"github.com/jobgen/jobgen/outbox"
)

// outboxHealth reads the outbox from its database, for the overview's
// card; nil without Options.OutboxDB.
func (h *handler) outboxHealth(ctx context.Context) (*outbox.Health, error) {
	if h.opts.OutboxDB == nil {
		return nil, nil
	}
	health, err := outbox.ReadHealth(ctx, h.opts.OutboxDB, h.opts.OutboxTable)
	if err != nil {
		return nil, err
	}
	return &health, nil
}
