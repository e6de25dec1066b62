package laravel_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/laravel"
)

func TestReadEnv(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), ".env")
	require.NoError(t, os.WriteFile(p, []byte(`# a comment
APP_NAME="Shop Front"
export REDIS_HOST=10.0.0.5 # the cache host
REDIS_PASSWORD='p#ss "x"'
REDIS_PREFIX=${APP_NAME}_
EMPTY=

QUOTED="a \"b\" ${REDIS_HOST}"
`), 0o600))
	env, err := laravel.ReadEnv(p)
	require.NoError(t, err)
	require.Equal(t, map[string]string{
		"APP_NAME": "Shop Front", "REDIS_HOST": "10.0.0.5", "REDIS_PASSWORD": `p#ss "x"`,
		"REDIS_PREFIX": "Shop Front_", "EMPTY": "", "QUOTED": `a "b" 10.0.0.5`,
	}, env)

	require.NoError(t, os.WriteFile(p, []byte("JUSTAWORD\n"), 0o600))
	_, err = laravel.ReadEnv(p)
	require.ErrorContains(t, err, ".env:1: not KEY=VALUE")
}
