package laravel_test

import (
	"testing"

	"github.com/jobgen/jobgen/laravel"
)

// To fuzz, with the minimizing of each new input cut short:
//
//	go test -run '^$' -fuzz FuzzDecodeCommand -fuzztime 5m -fuzzminimizetime 5s ./laravel/
//
// Go minimizes every new interesting input for up to -fuzzminimizetime,
// 60 s by default, and tries nothing new meanwhile; on a busy machine
// that shows as a minute of "0/sec" at a time, which looks like a stall
// though no input is slow.

// Whatever a queue holds, decoding a payload or its command returns an
// error or a value; it never panics.
func FuzzDecodePayload(f *testing.F) {
	f.Add([]byte(`{"uuid":"u","displayName":"X","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":3,"backoff":"1,5","data":{"commandName":"App\\Jobs\\SendWelcomeEmail","command":"O:25:\"App\\Jobs\\SendWelcomeEmail\":1:{s:6:\"userId\";i:7;}"},"id":"i","attempts":1}`))
	f.Add([]byte(`{"job":"X@handle","data":[],"attempts":1.0e+2,"retryUntil":1.7e+09,"backoff":[1,2]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := laravel.DecodePayload(b)
		if err != nil {
			return
		}
		p.BackoffDelays()
		if cmd, ok := p.Command(); ok {
			_, _ = laravel.DecodeCommand[SendWelcomeEmail](cmd.Command, cmd.CommandName)
			_, _ = laravel.DecodeCommand[ResizeAvatar](cmd.Command, cmd.CommandName)
			_, _ = laravel.DecodeCommand[anyJob](cmd.Command, cmd.CommandName)
		}
		if _, err := p.Encode(); err != nil {
			t.Fatalf("decoded %q but cannot encode it: %v", b, err)
		}
	})
}

// anyJob (mapper_test.go) takes any value, itself and lists of lists of
// itself, where references can repeat values: the seeds include the
// shapes of a reference bomb and of many references, which once took
// exponential and quadratic time. They are small, as the fuzzer spends
// its time on its seeds' size (TestDecodeCommandReferenceBomb and
// TestDecodeCommandManyReferences hold the large ones).
func FuzzDecodeCommand(f *testing.F) {
	f.Add(sendWelcome)
	f.Add("O:25:\"App\\Jobs\\SendWelcomeEmail\":2:{s:6:\"userId\";r:1;s:4:\"tags\";a:1:{i:0;R:3;}}")
	f.Add(referenceBomb(20))
	f.Add(manyReferences(50))
	f.Add("O:1:\"A\":2:{s:4:\"next\";r:1;s:4:\"nest\";a:1:{i:0;a:2:{i:0;r:1;i:1;r:1;}}}")
	f.Fuzz(func(t *testing.T, cmd string) {
		_, _ = laravel.DecodeCommand[SendWelcomeEmail](cmd, `App\Jobs\SendWelcomeEmail`)
		_, _ = laravel.DecodeCommand[ResizeAvatar](cmd, `App\Jobs\SendWelcomeEmail`)
		_, _ = laravel.DecodeCommand[anyJob](cmd, "A")
	})
}
