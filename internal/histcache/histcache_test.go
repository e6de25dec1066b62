package histcache

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeReader is a Redis of hashes that counts what it is asked.
type fakeReader struct {
	hashes         map[string]map[string]string
	counts, hashed []string
}

func (f *fakeReader) CountExisting(_ context.Context, keys []string) (int64, error) {
	f.counts = append(f.counts, keys...)
	n := int64(0)
	for _, k := range keys {
		if _, ok := f.hashes[k]; ok {
			n++
		}
	}
	return n, nil
}

func (f *fakeReader) Hashes(_ context.Context, keys []string) ([]map[string]string, error) {
	f.hashed = append(f.hashed, keys...)
	out := make([]map[string]string, len(keys))
	for i, k := range keys {
		out[i] = f.hashes[k]
		if out[i] == nil {
			out[i] = map[string]string{}
		}
	}
	return out, nil
}

// TestEndedHashesAreReadOnce: a hash whose span ended is read once and
// then served from the cache; an open one is read every time.
func TestEndedHashesAreReadOnce(t *testing.T) {
	ctx := context.Background()
	r := &fakeReader{hashes: map[string]map[string]string{"h1": {"a": "1"}, "h2": {"b": "2"}}}
	var c Cache
	keys, settled := []string{"h1", "h2"}, []bool{true, false}
	got, err := c.Read(ctx, r, keys, settled, time.Hour, false)
	require.NoError(t, err)
	require.Equal(t, []map[string]string{{"a": "1"}, {"b": "2"}}, got)
	require.Equal(t, []string{"h1", "h2"}, r.hashed)

	r.hashes["h1"] = map[string]string{"a": "changed"} // no longer read
	r.hashes["h2"] = map[string]string{"b": "3"}
	r.hashed = nil
	got, err = c.Read(ctx, r, keys, settled, time.Hour, false)
	require.NoError(t, err)
	require.Equal(t, []map[string]string{{"a": "1"}, {"b": "3"}}, got)
	require.Equal(t, []string{"h2"}, r.hashed)

	// Kept for keep only: past it, an ended hash is read again.
	var short Cache
	_, err = short.Read(ctx, r, keys, settled, -time.Second, false)
	require.NoError(t, err)
	r.hashed = nil
	_, err = short.Read(ctx, r, keys, settled, time.Hour, false)
	require.NoError(t, err)
	require.Equal(t, []string{"h1", "h2"}, r.hashed)
}

// TestAnEmptyHistoryCostsOneCount: keys of one slot, none of the ended
// ones existing, are answered by one count, and not read.
func TestAnEmptyHistoryCostsOneCount(t *testing.T) {
	ctx := context.Background()
	r := &fakeReader{hashes: map[string]map[string]string{"open": {"n": "1"}}}
	var c Cache
	got, err := c.Read(ctx, r, []string{"e1", "e2", "e3", "open"}, []bool{true, true, true, false}, time.Hour, true)
	require.NoError(t, err)
	require.Equal(t, []map[string]string{{}, {}, {}, {"n": "1"}}, got)
	require.Equal(t, []string{"e1", "e2", "e3"}, r.counts)
	require.Equal(t, []string{"open"}, r.hashed)
}
