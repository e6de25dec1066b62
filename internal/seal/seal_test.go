package seal

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func key(id string, n int) Key { return Key{ID: id, Secret: bytes.Repeat([]byte{byte(len(id))}, n)} }

func TestSealThenOpen(t *testing.T) {
	r, err := New(key("k1", 32))
	require.NoError(t, err)
	sealed, err := r.Seal([]byte("body"), []byte("01JDJOBID"))
	require.NoError(t, err)
	require.True(t, IsSealed(sealed))
	require.False(t, bytes.Contains(sealed, []byte("body")))
	got, err := r.Open(sealed, []byte("01JDJOBID"))
	require.NoError(t, err)
	require.Equal(t, []byte("body"), got)

	// Two seals of one body differ (a nonce each).
	again, err := r.Seal([]byte("body"), []byte("01JDJOBID"))
	require.NoError(t, err)
	require.NotEqual(t, sealed, again)
}

// TestRotation: a ring with a new key first seals with it and still
// opens what the old key sealed; a ring without the old key names it.
func TestRotation(t *testing.T) {
	old, err := New(key("old", 16))
	require.NoError(t, err)
	sealed, err := old.Seal([]byte("x"), nil)
	require.NoError(t, err)
	rotated, err := New(key("new", 32), key("old", 16))
	require.NoError(t, err)
	require.Equal(t, []string{"new", "old"}, rotated.IDs())
	got, err := rotated.Open(sealed, nil)
	require.NoError(t, err)
	require.Equal(t, []byte("x"), got)
	fresh, err := rotated.Seal([]byte("y"), nil)
	require.NoError(t, err)
	_, err = old.Open(fresh, nil)
	require.ErrorIs(t, err, ErrDecrypt)
	require.ErrorContains(t, err, `key "new", which is not in the key ring (keys: old)`)
}

func TestOpenRefusesWhatWasNotSealedSo(t *testing.T) {
	r, err := New(key("k1", 24))
	require.NoError(t, err)
	sealed, err := r.Seal([]byte("body"), []byte("id-1"))
	require.NoError(t, err)
	altered := bytes.Clone(sealed)
	altered[len(altered)-1] ^= 1
	for name, tc := range map[string]struct {
		b, ad []byte
		want  string
	}{
		"altered":          {altered, []byte("id-1"), "authentication failed"},
		"another job's ID": {sealed, []byte("id-2"), "authentication failed"},
		"clear body":       {[]byte{0x81, 0xa1, 'N', 1}, nil, "not a sealed payload"},
		"truncated":        {sealed[:10], []byte("id-1"), "truncated"},
		"empty":            {nil, nil, "not a sealed payload"},
	} {
		_, err := r.Open(tc.b, tc.ad)
		require.ErrorIs(t, err, ErrDecrypt, name)
		require.ErrorContains(t, err, tc.want, name)
	}
	require.False(t, IsSealed([]byte{0x81, 0xa1, 'N', 1}))
}

func TestNewRefusesBadKeys(t *testing.T) {
	for name, tc := range map[string]struct {
		keys []Key
		want string
	}{
		"none":         {nil, "no keys"},
		"empty ID":     {[]Key{key("", 32)}, "ID must be 1 to 255 bytes"},
		"long ID":      {[]Key{{ID: strings.Repeat("i", 256), Secret: make([]byte, 32)}}, "ID must be 1 to 255 bytes"},
		"twice":        {[]Key{key("a", 32), key("a", 16)}, `key ID "a" appears twice`},
		"short secret": {[]Key{key("a", 10)}, `key "a": secret is 10 bytes, want 16, 24 or 32`},
	} {
		_, err := New(tc.keys...)
		var inv *InvalidError
		require.True(t, errors.As(err, &inv), name)
		require.ErrorContains(t, err, tc.want, name)
	}
}

func TestParseKeys(t *testing.T) {
	s1, s2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 16)
	keys, err := ParseKeys(" new:" + base64.StdEncoding.EncodeToString(s1) + ", old:" + base64.StdEncoding.EncodeToString(s2))
	require.NoError(t, err)
	require.Equal(t, []Key{{ID: "new", Secret: s1}, {ID: "old", Secret: s2}}, keys)
	keys, err = ParseKeys("  ")
	require.NoError(t, err)
	require.Nil(t, keys)
	_, err = ParseKeys("nocolon")
	require.ErrorContains(t, err, "item 1: want id:base64-secret")
	_, err = ParseKeys("a:not base64!")
	require.ErrorContains(t, err, `key "a": secret is not standard base64`)
}
