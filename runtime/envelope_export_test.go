package runtime

import "github.com/jobgen/jobgen/internal/wire"

// IDTime is wire.IDTime, for the tests of package runtime_test.
func IDTime(id string) (int64, bool) { return wire.IDTime(id) }
