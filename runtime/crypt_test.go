package runtime_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// secretJob is an encrypted job type, as the annotation `encrypted` makes
// one.
type secretJob struct{ Card string }

func (secretJob) JobName() string { return "test.Secret" }
func (secretJob) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Encrypted: true}
}
func (j secretJob) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

func newKey(t *testing.T, id string) runtime.Key {
	t.Helper()
	secret := make([]byte, 32)
	_, err := rand.Read(secret)
	require.NoError(t, err)
	return runtime.Key{ID: id, Secret: secret}
}

func ring(t *testing.T, keys ...runtime.Key) *runtime.KeyRing {
	t.Helper()
	r, err := runtime.NewKeyRing(keys...)
	require.NoError(t, err)
	return r
}

func TestKeyRing(t *testing.T) {
	t.Parallel()
	k1, k2 := newKey(t, "k1"), newKey(t, "k2")
	ad := []byte("job:1")
	sealed, err := ring(t, k1).Seal([]byte("4111 1111"), ad)
	require.NoError(t, err)
	require.False(t, bytes.Contains(sealed, []byte("4111")))

	t.Run("rotation: any key opens, the first seals", func(t *testing.T) {
		r := ring(t, k2, k1)
		plain, err := r.Open(sealed, ad)
		require.NoError(t, err)
		require.Equal(t, "4111 1111", string(plain))
		again, err := r.Seal(plain, ad)
		require.NoError(t, err)
		_, err = ring(t, k1).Open(again, ad)
		require.ErrorIs(t, err, runtime.ErrDecrypt)
		require.ErrorContains(t, err, `key "k2", which is not in the key ring (keys: k1)`)
	})
	t.Run("another secret under the same ID", func(t *testing.T) {
		_, err := ring(t, newKey(t, "k1")).Open(sealed, ad)
		require.ErrorIs(t, err, runtime.ErrDecrypt)
		require.ErrorContains(t, err, "authentication failed")
	})
	t.Run("other associated data", func(t *testing.T) {
		_, err := ring(t, k1).Open(sealed, []byte("job:2"))
		require.ErrorIs(t, err, runtime.ErrDecrypt)
	})
	t.Run("every single flipped byte", func(t *testing.T) {
		r := ring(t, k1)
		for i := range sealed {
			bad := bytes.Clone(sealed)
			bad[i] ^= 0x20
			_, err := r.Open(bad, ad)
			require.ErrorIs(t, err, runtime.ErrDecrypt, "byte %d", i)
		}
	})
	t.Run("truncated and foreign", func(t *testing.T) {
		r := ring(t, k1)
		for _, b := range [][]byte{nil, {1}, {1, 5, 'k'}, sealed[:len(sealed)-1][:20], []byte("plain msgpack")} {
			_, err := r.Open(b, ad)
			require.ErrorIs(t, err, runtime.ErrDecrypt)
		}
	})
}

func TestNewKeyRingErrors(t *testing.T) {
	t.Parallel()
	good := runtime.Key{ID: "a", Secret: make([]byte, 16)}
	for name, keys := range map[string][]runtime.Key{
		"none":         nil,
		"empty ID":     {{ID: "", Secret: make([]byte, 32)}},
		"short secret": {{ID: "a", Secret: make([]byte, 15)}},
		"duplicate":    {good, good},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := runtime.NewKeyRing(keys...)
			require.ErrorIs(t, err, runtime.ErrInvalid)
		})
	}
}

func TestParseKeyRing(t *testing.T) {
	t.Parallel()
	k1, k2 := newKey(t, "2025-06"), newKey(t, "2025-01")
	s := k1.ID + ":" + base64.StdEncoding.EncodeToString(k1.Secret) + ", " + k2.ID + ":" + base64.StdEncoding.EncodeToString(k2.Secret)
	r, err := runtime.ParseKeyRing(s)
	require.NoError(t, err)
	require.Equal(t, []string{"2025-06", "2025-01"}, r.IDs())
	for _, bad := range []string{"nokey", "a:not base64!", "a:" + base64.StdEncoding.EncodeToString(k1.Secret) + ","} {
		_, err := runtime.ParseKeyRing(bad)
		require.ErrorIs(t, err, runtime.ErrInvalid, bad)
	}
	// An unset variable is no ring, and no error: no encryption.
	for _, none := range []string{"", "  "} {
		r, err := runtime.ParseKeyRing(none)
		require.NoError(t, err)
		require.Nil(t, r)
		require.Empty(t, r.IDs())
	}
}

// forEachCryptBackend is forEachWorkerBackend with a key ring on the
// engine.
func forEachCryptBackend(t *testing.T, keys *runtime.KeyRing, fn func(t *testing.T, b wbundle, be redistest.Backend)) {
	t.Helper()
	forEachBusBackend(t, runtime.EngineConfig{Keys: keys}, fn)
}

// payloadsKey is the hash of a queue's payloads (internal/keyspace).
func payloadsKey(b wbundle, queue string) string { return b.prefix + ":{" + queue + "}:payloads" }

// payloadOf reads job id's payload as stored in Redis.
func payloadOf(t *testing.T, b wbundle, queue, id string) []byte {
	t.Helper()
	p, err := b.rdb.HGet(b.ctx, payloadsKey(b, queue), id).Bytes()
	require.NoError(t, err)
	return p
}

func TestEncryptedJobs(t *testing.T) {
	k1 := newKey(t, "k1")
	forEachCryptBackend(t, ring(t, k1), func(t *testing.T, b wbundle, be redistest.Backend) {
		var got []string
		runtime.Register(b.router, "test.Secret", func(ctx context.Context, j secretJob) error {
			got = append(got, j.Card)
			return nil
		})
		ids := b.dispatch(t, secretJob{Card: "4111-1111-1111-1111"})

		stored := payloadOf(t, b, "default", ids[0])
		require.False(t, bytes.Contains(stored, []byte("4111")), "the card number is not stored in the clear")
		env, err := runtime.DecodeEnvelope("default", ids[0], stored)
		require.NoError(t, err)
		require.True(t, env.Encrypted)

		// A worker whose ring has a newer key first still opens it.
		e2 := b.open(t, be, runtime.EngineConfig{Keys: ring(t, newKey(t, "k2"), k1)})
		w, err := runtime.NewWorker(e2, b.router, runtime.WorkerConfig{StopWhenEmpty: true, Logger: quiet, Sleep: 50 * time.Millisecond})
		require.NoError(t, err)
		require.NoError(t, w.Run(b.ctx))
		require.Equal(t, []string{"4111-1111-1111-1111"}, got)
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "default"))
	})
}

func TestEncryptedJobNeedsKeyRing(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		_, err := secretJob{Card: "x"}.dispatch(b.ctx)
		require.ErrorIs(t, err, runtime.ErrNoKeyRing)
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "default"))
	})
}

func (j secretJob) dispatch(ctx context.Context) (string, error) { return runtime.Dispatch(ctx, j) }

// TestTamperedPayloadFails: a sealed body altered in Redis fails
// authentication and goes to the failed store at once, without retries
// and without running the handler.
func TestTamperedPayloadFails(t *testing.T) {
	forEachCryptBackend(t, ring(t, newKey(t, "k1")), func(t *testing.T, b wbundle, _ redistest.Backend) {
		ran := false
		runtime.Register(b.router, "test.Secret", func(ctx context.Context, j secretJob) error {
			ran = true
			return nil
		})
		id := b.dispatch(t, secretJob{Card: "4111"})[0]
		env, err := runtime.DecodeEnvelope("default", id, payloadOf(t, b, "default", id))
		require.NoError(t, err)
		env.Body[len(env.Body)-3] ^= 1
		tampered, err := env.Encode()
		require.NoError(t, err)
		require.NoError(t, b.rdb.HSet(b.ctx, payloadsKey(b, "default"), id, tampered).Err())

		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true, Tries: 5})
		require.False(t, ran)
		failed := b.failed(t, "default")
		require.Len(t, failed, 1)
		require.Equal(t, 1, failed[0].Attempts)
		require.Contains(t, failed[0].Error, "authentication failed")
		require.Contains(t, failed[0].Error, runtime.ErrDecrypt.Error())
	})
}

// TestWrongKeyFailsCleanly: a worker without the sealing key fails the
// job with a clear error; nothing panics and nothing is retried.
func TestWrongKeyFailsCleanly(t *testing.T) {
	forEachCryptBackend(t, ring(t, newKey(t, "k1")), func(t *testing.T, b wbundle, be redistest.Backend) {
		runtime.Register(b.router, "test.Secret", func(ctx context.Context, j secretJob) error {
			return errors.New("must not run")
		})
		b.dispatch(t, secretJob{Card: "4111"}, secretJob{Card: "5500"})
		// One worker with an unknown key ID, then one with another secret
		// under the sealing key's ID.
		for _, keys := range []*runtime.KeyRing{ring(t, newKey(t, "k9")), ring(t, newKey(t, "k1"))} {
			e := b.open(t, be, runtime.EngineConfig{Keys: keys})
			w, err := runtime.NewWorker(e, b.router, runtime.WorkerConfig{Once: true, Tries: 3, Logger: quiet, Sleep: 50 * time.Millisecond})
			require.NoError(t, err)
			require.NoError(t, w.Run(b.ctx))
		}
		failed := b.failed(t, "default")
		require.Len(t, failed, 2)
		errs := failed[0].Error + "\n" + failed[1].Error
		require.Contains(t, errs, `not in the key ring (keys: k9)`)
		require.Contains(t, errs, "authentication failed")
		for _, f := range failed {
			require.Equal(t, 1, f.Attempts)
			require.Equal(t, "test.Secret", f.Name)
		}
	})
}

// TestPlaintextForEncryptedTypeRefused: a payload written in the clear
// for an encrypted job type, as someone with write access to Redis might
// slip in, is failed, not run.
func TestPlaintextForEncryptedTypeRefused(t *testing.T) {
	forEachCryptBackend(t, ring(t, newKey(t, "k1")), func(t *testing.T, b wbundle, _ redistest.Backend) {
		ran := false
		runtime.Register(b.router, "test.Secret", func(ctx context.Context, j secretJob) error {
			ran = true
			return nil
		})
		body, err := runtime.Encode(secretJob{Card: "4111"})
		require.NoError(t, err)
		require.NoError(t, b.engine.Push(b.ctx, &runtime.Envelope{Name: "test.Secret", Queue: "default", Body: body}))
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true})
		require.False(t, ran)
		failed := b.failed(t, "default")
		require.Len(t, failed, 1)
		require.Contains(t, failed[0].Error, "payload is not sealed")
	})
}
