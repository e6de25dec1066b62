package console_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

func TestPush(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		out := b.ok(t, "queue:push", "test.Greet", "--queue", "mail", "--json", `{"Name": "ada"}`)
		require.True(t, strings.HasPrefix(out, "Pushed test.Greet (console_test.greet) to queue mail: "), out)
		id := strings.TrimSpace(out[strings.LastIndex(out, " ")+1:])

		batch, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "mail", 1, time.Minute)
		require.NoError(t, err)
		require.Len(t, batch.Jobs, 1)
		env, err := runtime.DecodeEnvelope("mail", batch.Jobs[0].ID, batch.Jobs[0].Payload)
		require.NoError(t, err)
		require.Equal(t, id, env.ID)
		require.Equal(t, "test.Greet", env.Name)
		j, err := runtime.Decode[greet](env.Body)
		require.NoError(t, err)
		require.Equal(t, greet{Name: "ada"}, j)

		// The job type's own options: boom has Tries 2.
		b.ok(t, "queue:push", "test.Boom", "--json", `{"N": 3}`)
		batch, err = runtime.NewBroker(b.engine).Reserve(b.ctx, "default", 1, time.Minute)
		require.NoError(t, err)
		require.Len(t, batch.Jobs, 1)
		env, err = runtime.DecodeEnvelope("default", batch.Jobs[0].ID, batch.Jobs[0].Payload)
		require.NoError(t, err)
		require.Equal(t, 2, env.Tries)
	})
}

func TestPushRefuses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		code, _, stderr := b.run(t, "queue:push", "test.Nope", "--json", `{}`)
		require.Equal(t, 2, code)
		require.Contains(t, stderr, `no job type is registered as "test.Nope" in this binary, so its fields are unknown; registered: [test.Boom test.Greet]`)

		code, _, stderr = b.run(t, "queue:push", "test.Greet", "--json", `{"Nmae": "ada"}`)
		require.Equal(t, 2, code)
		require.Contains(t, stderr, `--json does not decode into console_test.greet (test.Greet): json: unknown field "Nmae"`)

		code, _, stderr = b.run(t, "queue:push", "test.Greet", "--json", `{"Name": 1}`)
		require.Equal(t, 2, code)
		require.Contains(t, stderr, "--json does not decode")
		require.Zero(t, b.sizes(t, "default").Total())
	})
}
