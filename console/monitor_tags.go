package console

import (
	"context"
	"fmt"
	"slices"
)

var monitorTagVerb = &verb{
	name:    "queue:monitor-tag",
	args:    "add|remove|list [tag...]",
	summary: "Add, remove or list the monitored tags",
	maxArgs: -1,
	about: `Monitored tags: every job pushed with a monitored tag (JobOptions.Tags)
is recorded under it, on every queue, the newest 1000 a tag and queue,
and the dashboard's Tags page lists them with where each is now.

  add tag...      monitor the tags, from the next push on
  remove tag...   stop monitoring the tags, and drop their records
  list            print the monitored tags, one a line`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		return func(ctx context.Context, s *session) error {
			if len(s.args) == 0 {
				return usagef("say add, remove or list")
			}
			op, tags := s.args[0], s.args[1:]
			switch op {
			case "list":
				if len(tags) > 0 {
					return usagef("list takes no tag")
				}
				all, err := s.ins.MonitoredTags(ctx)
				if err != nil {
					return err
				}
				for _, t := range all {
					fmt.Fprintln(s.out, t)
				}
				return nil
			case "add", "remove":
				if len(tags) == 0 {
					return usagef("name the tags to %s", op)
				}
				for _, t := range slices.Compact(slices.Sorted(slices.Values(tags))) {
					if op == "add" {
						if err := s.ins.MonitorTag(ctx, t); err != nil {
							return err
						}
						fmt.Fprintf(s.out, "Monitoring tag %s.\n", t)
						continue
					}
					if err := s.ins.UnmonitorTag(ctx, t); err != nil {
						return err
					}
					fmt.Fprintf(s.out, "Stopped monitoring tag %s.\n", t)
				}
				return nil
			}
			return usagef("unknown operation %q: say add, remove or list", op)
		}
	},
}
