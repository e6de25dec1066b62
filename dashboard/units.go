package dashboard

import (
	"fmt"
	"time"
)

// secondsDur is n seconds as a time.Duration.
func secondsDur(n int64) time.Duration { return time.Duration(n) * time.Second }

// bytesHuman writes n bytes in B, KB, MB or GB (of 1024).
func bytesHuman(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GB", float64(n)/(1<<30))
}
