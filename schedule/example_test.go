package schedule_test

import (
	"fmt"
	"time"

	"github.com/jobgen/jobgen/runtime"
	"github.com/jobgen/jobgen/schedule"
)

// pruneCarts, syncCRM and sendDigest stand for generated job types.
type pruneCarts struct{}

func (pruneCarts) JobName() string                { return "shop.PruneCarts" }
func (pruneCarts) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j pruneCarts) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type syncCRM struct{ Full bool }

func (syncCRM) JobName() string                { return "crm.Sync" }
func (syncCRM) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j syncCRM) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type sendDigest struct{}

func (sendDigest) JobName() string                { return "mail.SendDigest" }
func (sendDigest) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "mail"} }
func (j sendDigest) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// A schedule's entries, their names and their next ticks. On 29 March
// 2026 Paris skips from 02:00 to 03:00; a job at 02:30 runs once, at
// 03:00.
func ExampleSchedule() {
	s := schedule.New()
	s.Cron("0 3 * * *", pruneCarts{}).Timezone("Europe/Paris").WithoutOverlapping()
	s.Every(5*time.Minute, syncCRM{Full: false})
	s.DailyAt("09:00", sendDigest{}).Weekdays()
	s.DailyAt("02:30", pruneCarts{}).Timezone("Europe/Paris").Name("prune-half-past-two")

	entries, err := s.Entries()
	if err != nil {
		fmt.Println(err)
		return
	}
	from := time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC) // a Saturday
	for _, e := range entries {
		fmt.Printf("%-36s next %s\n", e.EntryName(), e.Next(from).Format("Mon 2006-01-02 15:04 MST"))
	}
	// Output:
	// shop.PruneCarts 0 3 * * * Europe/Paris next Sun 2026-03-29 03:00 CEST
	// crm.Sync @every 5m                   next Sat 2026-03-28 12:05 UTC
	// mail.SendDigest 0 9 * * 1-5          next Mon 2026-03-30 09:00 UTC
	// prune-half-past-two                  next Sun 2026-03-29 03:00 CEST
}
