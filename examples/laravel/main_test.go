package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDemo(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), nil, &out))
	require.Equal(t, "sent a welcome email to ada@example.com (user 1), attempt 1\n"+
		"sent a welcome email to grace@example.com (user 2), attempt 1\n", out.String())
}
