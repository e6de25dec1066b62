package laravel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/laravel/internal/examplejobs"
	"github.com/jobgen/jobgen/runtime"
)

// secretHandlers implements examplejobs.Handlers, noting each job it
// runs.
type secretHandlers struct {
	mu  *sync.Mutex
	ran *[]string
}

func (h secretHandlers) HandleSendSecret(ctx context.Context, job examplejobs.SendSecret) error {
	h.mu.Lock()
	*h.ran = append(*h.ran, fmt.Sprintf("%d|%s", job.UserID, job.Secret))
	h.mu.Unlock()
	return nil
}

// generatedSecretMapper maps the jobs of examplejobs with its generated
// RegisterLaravel alone, under the app's key.
func generatedSecretMapper(t *testing.T) *laravel.Mapper {
	t.Helper()
	m := laravel.NewMapper()
	examplejobs.RegisterLaravel(m)
	enc, err := laravel.NewEncrypter(appKey)
	require.NoError(t, err)
	m.UseEncrypter(enc)
	require.NoError(t, m.Err())
	return m
}

// TestGeneratedEncryptedJob: a job annotated //job:laravel=X encrypted
// is dispatched through the bridge with nothing but the generated
// RegisterLaravel: its command goes on the queue sealed with the app's
// key, as Laravel seals a ShouldBeEncrypted job, and a Go worker opens
// and runs it.
func TestGeneratedEncryptedJob(t *testing.T) {
	t.Parallel()
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			prefix := redistest.Prefix(t) + "_laravel_database_"
			u := laravel.Scheme + be.URL
			if strings.Contains(u, "?") {
				u += "&prefix=" + prefix
			} else {
				u += "?prefix=" + prefix
			}
			q, closeQ, err := laravel.Open(ctx, u)
			require.NoError(t, err)
			defer closeQ()
			engine, err := runtime.Open(ctx, be.URL, runtime.EngineConfig{Prefix: prefix + "jobgen"})
			require.NoError(t, err)
			defer engine.Close()

			m := generatedSecretMapper(t)
			d, err := laravel.NewDispatcher(q, m)
			require.NoError(t, err)
			dctx := runtime.WithDispatcher(ctx, d)
			for i := range 3 {
				_, err := examplejobs.SendSecret{UserID: 100 + i, Secret: fmt.Sprintf("go-secret-%d", i)}.Dispatch(dctx)
				require.NoError(t, err, "an encrypted job dispatches through the generated mapping")
			}

			key := prefix + "queues:default"
			if q.Config().HashTag {
				key = prefix + "queues:{default}"
			}
			raw, err := q.Client().LRange(ctx, key, 0, -1).Result()
			require.NoError(t, err)
			require.Len(t, raw, 3)
			enc, err := laravel.NewEncrypter(appKey)
			require.NoError(t, err)
			for _, p := range raw {
				require.NotContains(t, p, "go-secret-", "the command is sealed")
				var payload struct {
					DisplayName string `json:"displayName"`
					Data        struct {
						CommandName string `json:"commandName"`
						Command     string `json:"command"`
					} `json:"data"`
				}
				require.NoError(t, json.Unmarshal([]byte(p), &payload))
				require.Equal(t, `App\Jobs\SendSecret`, payload.DisplayName)
				require.Equal(t, `App\Jobs\SendSecret`, payload.Data.CommandName)
				opened, err := enc.Decrypt(payload.Data.Command)
				require.NoError(t, err, "the app's key opens the command")
				require.Contains(t, string(opened), `O:19:"App\Jobs\SendSecret"`)
				require.Contains(t, string(opened), "go-secret-")
			}

			var mu sync.Mutex
			var ran []string
			r := runtime.NewRouter()
			examplejobs.Register(r, secretHandlers{&mu, &ran})
			w, err := laravel.NewWorker(q, m, r, laravel.WorkerConfig{
				Sleep: 50 * time.Millisecond, StopWhenEmpty: true, Failed: runtime.NewInspector(engine).Failed(),
			})
			require.NoError(t, err)
			require.NoError(t, w.Run(ctx))
			sort.Strings(ran)
			require.Equal(t, []string{"100|go-secret-0", "101|go-secret-1", "102|go-secret-2"}, ran)
		})
	}
}

// TestGeneratedEncryptedJobPHP: Laravel's own worker opens and runs the
// encrypted jobs a Go service dispatched through its generated
// RegisterLaravel (JOBGEN_TEST_PHP=1).
func TestGeneratedEncryptedJobPHP(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	b.env = append(b.env, "APP_KEY="+appKey)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := laravel.NewDispatcher(b.q, generatedSecretMapper(t))
	require.NoError(t, err)
	dctx := runtime.WithDispatcher(ctx, d)
	for i := range 2 {
		_, err := examplejobs.SendSecret{UserID: 200 + i, Secret: fmt.Sprintf("gen-secret-%d", i)}.OnQueue("generated").Dispatch(dctx)
		require.NoError(t, err)
	}
	b.run(t, ctx, "work.php", "generated", "1", "60", "2", "1", "0")
	var php []string
	for _, line := range b.results(t, ctx) {
		if strings.HasPrefix(line, "ran|SendSecret|") {
			php = append(php, line)
		}
	}
	sort.Strings(php)
	require.Equal(t, []string{"ran|SendSecret|200|gen-secret-0|1", "ran|SendSecret|201|gen-secret-1|1"}, php)
}
