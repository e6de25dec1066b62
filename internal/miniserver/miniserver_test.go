package miniserver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWithoutShebang(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ src, want string }{
		{"#!lua flags=allow-oom\n-- a\nreturn 1\n", "\n-- a\nreturn 1\n"},
		{"#!lua\nreturn 1", "\nreturn 1"},
		{"#!lua flags=allow-oom", ""},
		{"-- a\nreturn 1\n", "-- a\nreturn 1\n"},
		{"return '#!lua'", "return '#!lua'"},
		{"", ""},
	} {
		require.Equal(t, c.want, withoutShebang(c.src), "%q", c.src)
	}
}

// The embedded server never evicts, and says so as Redis does.
func TestConfigGetEvictionPolicy(t *testing.T) {
	t.Parallel()
	c, closer, err := Open(t.Name())
	require.NoError(t, err)
	defer func() { _ = closer() }()
	v, err := c.ConfigGet(context.Background(), "maxmemory-policy").Result()
	require.NoError(t, err)
	require.Equal(t, map[string]string{"maxmemory-policy": "noeviction"}, v)
}
