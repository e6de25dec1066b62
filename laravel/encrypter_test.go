package laravel_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// SendSecret is App\Jobs\SendSecret, which Laravel seals.
type SendSecret struct {
	UserID int    `php:"userId"`
	Secret string `php:"secret"`
}

func (SendSecret) JobName() string                { return "test.SendSecret" }
func (SendSecret) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j SendSecret) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

const appKey = "base64:" + "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=" // 0..31

func TestEncrypterRoundTripAndKeys(t *testing.T) {
	t.Parallel()
	old, err := laravel.NewEncrypter("base64:" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32))))
	require.NoError(t, err)
	sealed, err := old.Encrypt([]byte("s:5:\"hello\";"))
	require.NoError(t, err)
	got, err := old.Decrypt(sealed)
	require.NoError(t, err)
	require.Equal(t, "s:5:\"hello\";", string(got))

	// A new key with the old one as previous opens it; the new one alone
	// does not.
	rotated, err := laravel.NewEncrypter(appKey, "base64:"+base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32))))
	require.NoError(t, err)
	got, err = rotated.Decrypt(sealed)
	require.NoError(t, err)
	require.Equal(t, "s:5:\"hello\";", string(got))
	fresh, err := laravel.NewEncrypter(appKey)
	require.NoError(t, err)
	_, err = fresh.Decrypt(sealed)
	require.ErrorContains(t, err, "MAC is invalid")

	// A tampered value fails its MAC.
	raw, _ := base64.StdEncoding.DecodeString(sealed)
	tampered := base64.StdEncoding.EncodeToString([]byte(strings.Replace(string(raw), `"value":"`, `"value":"A`, 1)))
	_, err = old.Decrypt(tampered)
	require.Error(t, err)

	for _, bad := range []string{"short", "base64:!!", "base64:" + base64.StdEncoding.EncodeToString(make([]byte, 16))} {
		_, err := laravel.NewEncrypter(bad)
		require.ErrorIs(t, err, runtime.ErrInvalid, bad)
	}
}

func secretMapper(t *testing.T) *laravel.Mapper {
	t.Helper()
	m := newMapper()
	laravel.MapEncrypted[SendSecret](m, `App\Jobs\SendSecret`, SendSecret{}.JobName())
	enc, err := laravel.NewEncrypter(appKey)
	require.NoError(t, err)
	m.UseEncrypter(enc)
	return m
}

// Laravel seals a ShouldBeEncrypted job with the app's key; a Go worker
// with the key opens and runs it. A Go dispatch of it is sealed so that
// Laravel's worker opens and runs it. Neither payload shows the secret.
func TestEncryptedJobsBothWays(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	b.env = append(b.env, "APP_KEY="+appKey)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 20
	b.run(t, ctx, "push_secret.php", fmt.Sprint(n), "secrets")
	raw, err := b.q.Client().LRange(ctx, b.prefix+"queues:secrets", 0, -1).Result()
	require.NoError(t, err)
	require.Len(t, raw, n)
	for _, p := range raw {
		require.NotContains(t, p, "secret-", "Laravel sealed the command")
	}

	var mu sync.Mutex
	var ran []string
	rt := newRecorder(0).router()
	runtime.Register(rt, SendSecret{}.JobName(), func(ctx context.Context, j SendSecret) error {
		mu.Lock()
		ran = append(ran, fmt.Sprintf("%d|%s", j.UserID, j.Secret))
		mu.Unlock()
		return nil
	})
	w, err := laravel.NewWorker(b.q, secretMapper(t), rt, laravel.WorkerConfig{
		Queues: []string{"secrets"}, Sleep: 50 * time.Millisecond, StopWhenEmpty: true, Failed: runtime.NewInspector(b.engine).Failed(),
	})
	require.NoError(t, err)
	require.NoError(t, w.Run(ctx))
	require.Len(t, ran, n)
	sort.Strings(ran)
	require.Contains(t, ran, "7|secret-7")

	// Without the key, the worker cannot open them, and says why.
	b.run(t, ctx, "push_secret.php", "1", "keyless")
	w, err = laravel.NewWorker(b.q, newMapperWithSecret(), rt, laravel.WorkerConfig{
		Queues: []string{"keyless"}, Sleep: 50 * time.Millisecond, StopWhenEmpty: true, Failed: runtime.NewInspector(b.engine).Failed(),
	})
	require.NoError(t, err)
	require.NoError(t, w.Run(ctx))
	failed, err := runtime.NewInspector(b.engine).Failed().List(ctx, "laravel", 0, 10)
	require.NoError(t, err)
	require.Len(t, failed, 1)
	require.Contains(t, failed[0].Error, "call Mapper.UseEncrypter")

	// Go dispatches, sealed; Laravel's worker opens and runs them.
	d, err := laravel.NewDispatcher(b.q, secretMapper(t))
	require.NoError(t, err)
	for i := range 3 {
		_, err := dispatch(ctx, d, runtime.NewPendingDispatch(SendSecret{UserID: 100 + i, Secret: fmt.Sprintf("go-secret-%d", i)}).OnQueue("fromgo"))
		require.NoError(t, err)
	}
	raw, err = b.q.Client().LRange(ctx, b.prefix+"queues:fromgo", 0, -1).Result()
	require.NoError(t, err)
	for _, p := range raw {
		require.NotContains(t, p, "go-secret-")
	}
	b.run(t, ctx, "work.php", "fromgo", "1", "60", "3", "1", "0")
	var php []string
	for _, line := range b.results(t, ctx) {
		if strings.HasPrefix(line, "ran|SendSecret|") {
			php = append(php, line)
		}
	}
	sort.Strings(php)
	require.Equal(t, []string{"ran|SendSecret|100|go-secret-0|1", "ran|SendSecret|101|go-secret-1|1", "ran|SendSecret|102|go-secret-2|1"}, php)
}

// newMapperWithSecret maps SendSecret with no key.
func newMapperWithSecret() *laravel.Mapper {
	m := newMapper()
	laravel.Map[SendSecret](m, `App\Jobs\SendSecret`, SendSecret{}.JobName())
	return m
}
