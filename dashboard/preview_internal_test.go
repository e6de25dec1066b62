package dashboard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// A preview, which cuts strings before encoding them, begins as the
// whole JSON does, and knows the whole's size.
func TestBodyPreviewIsThePrefixOfTheWhole(t *testing.T) {
	t.Parallel()
	odd := "é\"\n<\x01\u2028\\ab\tc\x7f\x1f\b\f" + strings.Repeat("ab\"cdefgh\\ijklmnop\x00qr", 99) + "\xff\xfe"
	for _, s := range []string{"", "abcdefgh", "abcdefg\"", "0123456789abcdef~}|{", odd, strings.Repeat("x", 100_000), strings.Repeat(odd, 300)} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(s))
		require.Equal(t, b.Len()-1, jsonStringLen(s), "%q", s)

		body, err := msgpack.Marshal(map[string]any{"A": s, "L": []any{s, 3, map[string]any{"n": s}}, "Z": "end"})
		require.NoError(t, err)
		whole, err := bodyJSON(body)
		require.NoError(t, err)
		preview, size, err := bodyPreview(body, 4096)
		require.NoError(t, err)
		require.Equal(t, len(whole), size)
		require.True(t, strings.HasPrefix(whole, cutUTF8(preview, 4096)))
		require.LessOrEqual(t, len(preview), 5*(4096*2+500), "three cut strings and the rest")
	}
}
