package runtime_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

func TestRouterJobTypes(t *testing.T) {
	t.Parallel()
	r := runtime.NewRouter()
	runtime.Register(r, "test.Job", func(context.Context, testJob) error { return nil })
	runtime.Register(r, "a.Plain", func(context.Context, struct{ X int }) error { return nil })
	types := r.JobTypes()
	require.Len(t, types, 2)
	require.Equal(t, "a.Plain", types[0].Name)
	require.Equal(t, reflect.TypeFor[struct{ X int }](), types[0].Type)
	require.Equal(t, "test.Job", types[1].Name)
	require.Equal(t, reflect.TypeFor[testJob](), types[1].Type)
}
