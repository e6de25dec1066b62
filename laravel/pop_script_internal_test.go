package laravel

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
)

// The pop script on its own: it reserves the first job under the pair
// whose job it is, whichever pair that is, and otherwise changes nothing.
func TestPopScriptPairs(t *testing.T) {
	t.Parallel()
	for _, b := range redistest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			u := Scheme + b.URL
			if strings.Contains(u, "?") {
				u += "&"
			} else {
				u += "?"
			}
			q, closer, err := Open(ctx, u+"prefix="+redistest.Prefix(t)+"_")
			require.NoError(t, err)
			t.Cleanup(func() { _ = closer() })
			k := q.keys("default")
			keys := []string{k.Ready, k.Reserved, k.Notify}
			jobs := make([][]byte, 10)
			for i := range jobs {
				jobs[i] = []byte{'j', byte('0' + i)}
			}
			require.NoError(t, q.Push(ctx, "default", jobs...))
			run := func(args ...any) []any {
				t.Helper()
				v, err := q.run(ctx, scriptPop, keys, append([]any{90}, args...)...).Slice()
				require.NoError(t, err)
				return v
			}

			// Looking only: the first 8 jobs, nothing popped.
			require.Equal(t, []any{"moved", "j0", "j1", "j2", "j3", "j4", "j5", "j6", "j7"}, run())
			// No pair's job is first.
			require.Equal(t, "moved", run("j1", "r1", "j2", "r2")[0])
			// The second pair's job is first.
			require.Equal(t, []any{"reserved", int64(2), "j1"}, run("j9", "r9", "j0", "r0", "j1", "r1"))
			members, err := q.rdb.ZRange(ctx, k.Reserved, 0, -1).Result()
			require.NoError(t, err)
			require.Equal(t, []string{"r0"}, members)
			n, err := q.rdb.LLen(ctx, k.Notify).Result()
			require.NoError(t, err)
			require.EqualValues(t, 9, n, "one notify entry popped")

			// A job and no payload to reserve it as is refused, before
			// anything is written.
			_, err = q.run(ctx, scriptPop, keys, 90, "j1").Result()
			require.ErrorContains(t, err, "pairs")
			n, err = q.rdb.LLen(ctx, k.Ready).Result()
			require.NoError(t, err)
			require.EqualValues(t, 9, n)

			// The last job: no next.
			require.NoError(t, q.rdb.LTrim(ctx, k.Ready, -1, -1).Err())
			require.Equal(t, []any{"reserved", int64(1)}, run("j9", "r9"))
			require.Empty(t, run("j9", "r9"), "empty")
		})
	}
}
