//go:build unix

package runtime

import (
	"os"
	"os/signal"
	"syscall"
)

func notifyPause(ch chan os.Signal) { signal.Notify(ch, syscall.SIGUSR2, syscall.SIGCONT) }

func isPauseSignal(s os.Signal) bool { return s == syscall.SIGUSR2 }
