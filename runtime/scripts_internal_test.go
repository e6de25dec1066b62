package runtime

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/internal/send"
	"github.com/jobgen/jobgen/runtime/lua"
)

// TestShebangScripts runs scripts that start with a shebang on every
// backend, the embedded server also through a second client that reaches
// it by address, as another process would: by EVAL (NOSCRIPT recovery),
// by EVALSHA of the whole text, loaded by SCRIPT LOAD, and in a pipeline.
func TestShebangScripts(t *testing.T) {
	t.Parallel()
	s := &script{Name: "shebang", Src: "#!lua flags=allow-oom\nreturn {KEYS[1], ARGV[1]}\n"}
	s.SHA = lua.SHA1(s.Src)
	loaded := &script{Name: "loaded", Src: "#!lua flags=allow-oom\nreturn 'loaded'\n"}
	loaded.SHA = lua.SHA1(loaded.Src)
	broken := "#!lua flags=allow-oom\nlocal a = 1\nreturn )\n"

	eachClient(t, func(t *testing.T, ctx context.Context, be redistest.Backend, rdb redis.UniversalClient) {
		clients := []redis.UniversalClient{rdb}
		if be.Name == "embedded" {
			byAddr := redis.NewClient(&redis.Options{Addr: rdb.(*redis.Client).Options().Addr})
			defer func() { _ = byAddr.Close() }()
			clients = append(clients, byAddr)
		}
		for _, c := range clients {
			key := redistest.Prefix(t) + ":k"
			for range 2 { // by text (NOSCRIPT), then by SHA
				got, err := call{Script: s, Keys: []string{key}, Args: []any{"a"}}.Run(ctx, c).Slice()
				require.NoError(t, err)
				require.Equal(t, []any{key, "a"}, got)
			}
			cmds, err := send.All(ctx, c, []call{{Script: s, Keys: []string{key}, Args: []any{"b"}}, {Script: s, Keys: []string{key}, Args: []any{"c"}}})
			require.NoError(t, err)
			require.Equal(t, []any{key, "c"}, cmds[1].Val())

			require.NoError(t, c.ScriptLoad(ctx, loaded.Src).Err())
			got, err := c.EvalSha(ctx, loaded.SHA, []string{key}).Result()
			require.NoError(t, err)
			require.Equal(t, "loaded", got)

			// A syntax error is reported on the line of the text sent.
			err = c.Eval(ctx, broken, []string{key}).Err()
			require.Error(t, err)
			require.Regexp(t, `(:3:|line:3\()`, err.Error())
		}
	})
}

// eachClient runs fn in parallel subtests, one per test backend, each
// with a client of its own.
func eachClient(t *testing.T, fn func(t *testing.T, ctx context.Context, be redistest.Backend, rdb redis.UniversalClient)) {
	t.Helper()
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			rdb, closeClient, err := openClient(be.URL)
			require.NoError(t, err)
			defer func() { _ = closeClient() }()
			fn(t, context.Background(), be, rdb)
		})
	}
}

// TestScriptShebangs checks the shebangs of the scripts in lua/: only
// flags, which the embedded server ignores.
func TestScriptShebangs(t *testing.T) {
	t.Parallel()
	var flagged []string
	for _, s := range allScripts {
		first, _, _ := strings.Cut(s.Src, "\n")
		if strings.HasPrefix(first, "#!") {
			require.True(t, strings.HasPrefix(first, "#!lua flags="), "%s: shebang %q", s.Name, first)
			flagged = append(flagged, s.Name+" ("+strings.TrimPrefix(first, "#!lua flags=")+")")
		}
	}
	t.Logf("scripts with flags: %v", flagged)
}

// TestAllScriptsAreTheLuaFiles checks that allScripts, which the script
// tests go through, holds every file of runtime/lua (joined with its
// helpers, as runtime/lua's own tests check).
func TestAllScriptsAreTheLuaFiles(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("lua/*.lua")
	require.NoError(t, err)
	var want []string
	for _, f := range files {
		want = append(want, strings.TrimSuffix(filepath.Base(f), ".lua"))
	}
	require.NotEmpty(t, want)
	var names []string
	for _, s := range allScripts {
		names = append(names, s.Name)
		require.Equal(t, lua.SHA1(s.Src), s.SHA, s.Name)
	}
	require.ElementsMatch(t, want, names)
}

// TestLoadScriptsLoadsEveryScript: after send.Load, a Redis of its own
// knows every script by its SHA, so that no first call of one goes out
// by source, and no script with flags goes unchecked by the server.
func TestLoadScriptsLoadsEveryScript(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer func() { _ = rdb.Close() }()
	require.NoError(t, send.Load(ctx, rdb))
	shas := make([]string, len(allScripts))
	for i, s := range allScripts {
		shas[i] = s.SHA
	}
	known, err := rdb.ScriptExists(ctx, shas...).Result()
	require.NoError(t, err)
	for i, s := range allScripts {
		require.True(t, known[i], "script %s was not loaded", s.Name)
	}
}
