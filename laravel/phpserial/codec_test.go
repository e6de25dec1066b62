package phpserial_test

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/laravel/phpserial"
)

// Each input is what PHP 8.2's serialize() writes for a value; it must
// decode to want and encode back to the same bytes.
func TestRoundTripPHPOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want any
	}{
		{"null", "N;", nil},
		{"true", "b:1;", true},
		{"false", "b:0;", false},
		{"int", "i:-42;", int64(-42)},
		{"int max", "i:9223372036854775807;", int64(math.MaxInt64)},
		{"float", "d:0.1;", 0.1},
		{"float exp", "d:1.0E+25;", 1e25},
		{"float small", "d:1.5E-7;", 1.5e-7},
		{"float whole", "d:100;", 100.0},
		{"float 1e16", "d:10000000000000000;", 1e16},
		{"float 1e17", "d:1.0E+17;", 1e17},
		{"float 0.0001", "d:0.0001;", 0.0001},
		{"float 1e-5", "d:1.0E-5;", 1e-5},
		{"float inf", "d:-INF;", math.Inf(-1)},
		{"float denormal", "d:5.0E-324;", 5e-324},
		{"string", `s:5:"a"b;c";`, `a"b;c`},
		{"bytes", "s:3:\"\x00\xff\n\";", "\x00\xff\n"},
		{"list", "a:2:{i:0;i:1;i:1;s:1:\"x\";}", &phpserial.Array{Entries: []phpserial.Entry{{Key: int64(0), Value: int64(1)}, {Key: int64(1), Value: "x"}}}},
		{"map", `a:1:{s:1:"k";a:0:{}}`, &phpserial.Array{Entries: []phpserial.Entry{{Key: "k", Value: &phpserial.Array{Entries: []phpserial.Entry{}}}}}},
		{
			"object with visibility",
			"O:1:\"B\":4:{s:4:\"\x00A\x00a\";i:1;s:4:\"\x00*\x00b\";i:2;s:1:\"c\";i:3;s:4:\"\x00B\x00a\";i:5;}",
			&phpserial.Object{Class: "B", Props: []phpserial.Prop{
				{Name: "a", Visibility: phpserial.Private, Declarer: "A", Value: int64(1)},
				{Name: "b", Visibility: phpserial.Protected, Value: int64(2)},
				{Name: "c", Value: int64(3)},
				{Name: "a", Visibility: phpserial.Private, Declarer: "B", Value: int64(5)},
			}},
		},
		{
			"references",
			"a:4:{i:0;a:1:{i:0;i:1;}i:1;R:2;i:2;O:8:\"stdClass\":0:{}i:3;r:4;}",
			&phpserial.Array{Entries: []phpserial.Entry{
				{Key: int64(0), Value: &phpserial.Array{Entries: []phpserial.Entry{{Key: int64(0), Value: int64(1)}}}},
				{Key: int64(1), Value: phpserial.RefVar(2)},
				{Key: int64(2), Value: &phpserial.Object{Class: "stdClass", Props: []phpserial.Prop{}}},
				{Key: int64(3), Value: phpserial.Ref(4)},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := phpserial.Unmarshal([]byte(tt.in))
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			out, err := phpserial.Marshal(got)
			require.NoError(t, err)
			require.Equal(t, tt.in, string(out))
		})
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	v, err := phpserial.Unmarshal([]byte("a:4:{i:0;a:1:{i:0;i:1;}i:1;R:2;i:2;O:8:\"stdClass\":0:{}i:3;r:4;}"))
	require.NoError(t, err)
	got, ok := phpserial.Resolve(v, 4)
	require.True(t, ok)
	require.Equal(t, "stdClass", got.(*phpserial.Object).Class)
	got, ok = phpserial.Resolve(v, 3)
	require.True(t, ok)
	require.Equal(t, int64(1), got)
	_, ok = phpserial.Resolve(v, 6)
	require.False(t, ok)
}

func TestUnmarshalRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in    string
		unsupported bool
	}{
		{"empty", "", false},
		{"trailing", "N;N;", false},
		{"short string", `s:5:"abc";`, false},
		{"leading zero", "i:01;", false},
		{"plus", "i:+1;", false},
		{"minus zero", "i:-0;", false},
		{"bool 2", "b:2;", false},
		{"ref forward", "a:1:{i:0;r:2;}", false},
		{"ref zero", "r:0;", false},
		{"huge count", "a:99999999:{}", false},
		{"object int key", "O:1:\"A\":1:{i:0;N;}", false},
		{"bad mangling", "O:1:\"A\":1:{s:2:\"\x00a\";N;}", false},
		{"float junk", "d:0x10;", false},
		{"custom", `C:3:"Foo":0:{}`, true},
		{"enum", `E:7:"Foo:Bar";`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := phpserial.Unmarshal([]byte(tt.in))
			require.Error(t, err)
			require.Equal(t, tt.unsupported, errors.Is(err, phpserial.ErrUnsupported), err)
		})
	}
}

func TestMarshalRefuses(t *testing.T) {
	t.Parallel()
	for name, v := range map[string]any{
		"go type":         struct{}{},
		"dangling ref":    phpserial.Ref(1),
		"bad key":         &phpserial.Array{Entries: []phpserial.Entry{{Key: 1.5}}},
		"no class":        &phpserial.Object{},
		"private no decl": &phpserial.Object{Class: "A", Props: []phpserial.Prop{{Name: "x", Visibility: phpserial.Private}}},
	} {
		_, err := phpserial.Marshal(v)
		require.Error(t, err, name)
	}
}

// nestedClaims is levels arrays one inside another, each claiming as
// many entries as the bytes after it could hold, around a string of pad
// bytes; the innermost array holds only the string, so decoding fails at
// its end.
func nestedClaims(levels, pad int) []byte {
	var b strings.Builder
	for range levels {
		fmt.Fprintf(&b, "a:%d:{i:0;", pad/6)
	}
	fmt.Fprintf(&b, "s:%d:\"%s\";", pad, strings.Repeat("x", pad))
	b.WriteString(strings.Repeat("}", levels))
	return []byte(b.String())
}

// Each array's count is checked against the bytes left, which every
// level of nesting may claim again: decoding must not allocate the
// claims ahead (it took 258 MB for these 107 kB). Not parallel, so that
// the allocation count is this test's.
func TestUnmarshalNestedClaimsAllocateLittle(t *testing.T) {
	in := nestedClaims(500, 100_000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := phpserial.Unmarshal(in)
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64*len(in)))
}

func FuzzUnmarshal(f *testing.F) {
	f.Add(nestedClaims(20, 60))
	for _, s := range []string{
		"N;", "b:1;", "i:-3;", "d:1.0E+25;", "d:NAN;", `s:3:"abc";`,
		"a:2:{i:0;i:1;s:1:\"k\";a:0:{}}",
		"O:1:\"B\":2:{s:4:\"\x00A\x00a\";i:1;s:4:\"\x00*\x00b\";r:1;}",
		"a:3:{i:0;a:0:{}i:1;R:2;i:2;r:2;}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := phpserial.Unmarshal(in)
		if err != nil {
			return
		}
		// What decodes encodes, and the encoding is a fixed point.
		out, err := phpserial.Marshal(v)
		if err != nil {
			t.Fatalf("decoded %q but cannot encode it: %v", in, err)
		}
		v2, err := phpserial.Unmarshal(out)
		if err != nil {
			t.Fatalf("own encoding %q of %q does not decode: %v", out, in, err)
		}
		out2, err := phpserial.Marshal(v2)
		if err != nil || string(out2) != string(out) {
			t.Fatalf("encoding not stable: %q then %q (%v)", out, out2, err)
		}
	})
}

// An Index numbers values as Resolve does, and sizes each with what it
// holds.
func TestIndex(t *testing.T) {
	t.Parallel()
	root, err := phpserial.Unmarshal([]byte("O:1:\"B\":3:{s:1:\"a\";a:2:{i:0;i:1;i:1;R:3;}s:1:\"b\";r:1;s:1:\"c\";N;}"))
	require.NoError(t, err)
	x := phpserial.NewIndex(root)
	require.Equal(t, 5, x.Len()) // B, a, 1, r:1, null; R: takes no number
	for n := 0; n <= x.Len()+1; n++ {
		want, wantOK := phpserial.Resolve(root, n)
		got, _, ok := x.Value(n)
		require.Equal(t, wantOK, ok, n)
		require.Equal(t, want, got, n)
	}
	sizes := []int{}
	for n := 1; n <= x.Len(); n++ {
		_, size, _ := x.Value(n)
		sizes = append(sizes, size)
	}
	require.Equal(t, []int{6, 3, 1, 1, 1}, sizes)
}
