package outbox_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/runtime"
)

// The relay's wake settings are checked, each error naming its field,
// and a Poll shorter than the default Cooldown shortens it.
func TestRelayConfigCooldownAndHold(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		for _, c := range []struct {
			cfg  outbox.RelayConfig
			name string
		}{
			{outbox.RelayConfig{Poll: 10 * time.Millisecond, Cooldown: 20 * time.Millisecond}, "RelayConfig.Cooldown"},
			{outbox.RelayConfig{Cooldown: -time.Millisecond}, "RelayConfig.Cooldown"},
			{outbox.RelayConfig{Cooldown: 50 * time.Millisecond, Hold: 10 * time.Millisecond}, "RelayConfig.Hold"},
		} {
			c.cfg.DB = b.db
			_, err := outbox.NewRelay(b.engine, c.cfg)
			require.ErrorIs(t, err, runtime.ErrInvalid)
			require.ErrorContains(t, err, c.name)
		}
		for _, cfg := range []outbox.RelayConfig{{Poll: 2 * time.Millisecond}, {Cooldown: 2 * time.Second, Poll: 3 * time.Second}} {
			cfg.DB = b.db
			_, err := outbox.NewRelay(b.engine, cfg)
			require.NoError(t, err)
		}
	})
}
