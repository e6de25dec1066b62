package laravel_test

import (
	"testing"

	"github.com/jobgen/jobgen/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }
