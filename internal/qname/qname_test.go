package qname_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/qname"
)

func TestValidate(t *testing.T) {
	cases := []struct {
		name, err string
	}{
		{"emails", ""},
		{"emails.high-1:x/y", ""},
		{"ü", ""},
		{strings.Repeat("q", qname.MaxLen), ""},
		{"", "queue name is empty"},
		{strings.Repeat("q", qname.MaxLen+1), `queue name "qqqqqqqqqqqqqqqqqqqq"... is longer than 200 bytes`},
		{strings.Repeat("ü", 101), "is longer than 200 bytes"},
		{"a{b", `queue name "a{b" contains "{", which would break its cluster hash tag`},
		{"a}b", `queue name "a}b" contains "}", which would break its cluster hash tag`},
		{"a#b", `queue name "a#b" contains "#", which is kept for the names of partitions (queue#1)`},
		{"emails#2", `queue name "emails#2" contains "#"`},
		{"..", `queue name ".." is a path's dot segment, which no link can name`},
		{".", `queue name "." is a path's dot segment`},
		{"...", ""},
		{"billing,tries=3", `queue name "billing,tries=3" contains ",", which separates the queues of a list (queue:work --queue high,low)`},
	}
	for _, c := range cases {
		err := qname.Validate(c.name)
		if c.err == "" {
			require.NoError(t, err, c.name)
			continue
		}
		require.ErrorContains(t, err, c.err, c.name)
		require.True(t, strings.HasPrefix(err.Error(), "queue name "), "the error starts with what it is about: %v", err)
	}
}
