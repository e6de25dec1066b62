package laravel

// ClassOf is Mapper.classOf, for the benchmarks of package laravel_test.
func ClassOf(m *Mapper, job []byte) (string, bool) { return m.classOf(job) }

// PHPOnly is Mapper.phpOnly, for the benchmarks of package laravel_test.
func PHPOnly(m *Mapper, job []byte) error { return m.phpOnly(job) }
