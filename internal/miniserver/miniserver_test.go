package miniserver

import (
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
