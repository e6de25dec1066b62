package rdb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// Notes: a pub/sub channel that tells running workers at once of what
// they would otherwise find at their next poll (a cancel, a restart).
// A note is a hint, never the truth: the worker checks the state it
// names with a script, as its poll would, so a note lost, repeated or
// late changes nothing but how soon the worker acts.
//
// On a Cluster the channel is a shard channel (SPUBLISH, SSUBSCRIBE,
// Redis 7): the note goes to the shard that owns the channel's slot,
// whose master every subscriber is connected to, instead of being
// broadcast over the cluster bus to every node as PUBLISH is. Anywhere
// else (one node, Sentinel, embedded://) it is a plain channel.

// Publish sends text on channel; it returns the number of subscribers
// that got it (on a Cluster, those of the channel's shard).
func (s *Store) Publish(ctx context.Context, channel, text string) (int64, error) {
	if cc, ok := s.c.(*redis.ClusterClient); ok {
		return cc.SPublish(ctx, channel, text).Result()
	}
	return s.c.Publish(ctx, channel, text).Result()
}

// Notes is a subscription to one channel, on a connection of its own,
// outside the client's pool. It is read by one goroutine (Next); Close
// may be called from any.
type Notes struct {
	ps      *redis.PubSub
	channel string
	pinged  bool // a PING went out after a silence, unanswered so far
}

// Note is one thing Next read: a message, or the confirmation that the
// subscription is in place (first made, or made again by go-redis after
// a reconnect), after which every message sent is received.
type Note struct {
	Text       string
	Subscribed bool
}

// Listen subscribes to channel. The confirmation comes as a Note with
// Subscribed set.
func (s *Store) Listen(ctx context.Context, channel string) (*Notes, error) {
	var ps *redis.PubSub
	var err error
	if cc, ok := s.c.(*redis.ClusterClient); ok {
		ps = cc.SSubscribe(ctx)
		err = ps.SSubscribe(ctx, channel)
	} else {
		ps = s.c.Subscribe(ctx)
		err = ps.Subscribe(ctx, channel)
	}
	if err != nil {
		_ = ps.Close()
		if cc, ok := s.c.(*redis.ClusterClient); ok {
			// The channel's slot may have a new master (a failover): look
			// again before the next try.
			cc.ReloadState(ctx)
		}
		return nil, fmt.Errorf("subscribe to %q: %w", channel, err)
	}
	return &Notes{ps: ps, channel: channel}, nil
}

// Next returns the next message or subscription confirmation. After
// idle with nothing read it sends a PING; a second silence as long is
// an error, the connection being taken for dead (a server gone without
// closing it). Any error leaves the subscription unfit: Close it and
// Listen again.
func (n *Notes) Next(ctx context.Context, idle time.Duration) (Note, error) {
	for {
		v, err := n.ps.ReceiveTimeout(ctx, idle)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && !n.pinged && ctx.Err() == nil {
				n.pinged = true
				if err := n.ps.Ping(ctx); err != nil {
					return Note{}, fmt.Errorf("ping the subscription to %q: %w", n.channel, err)
				}
				continue
			}
			return Note{}, fmt.Errorf("read the subscription to %q: %w", n.channel, err)
		}
		n.pinged = false
		switch m := v.(type) {
		case *redis.Message:
			return Note{Text: m.Payload}, nil
		case *redis.Subscription:
			if m.Kind == "subscribe" || m.Kind == "ssubscribe" {
				return Note{Subscribed: true}, nil
			}
			// The server ends a shard subscription when the channel's
			// slot moves to another node.
			return Note{}, fmt.Errorf("subscription to %q ended by the server (%s)", n.channel, m.Kind)
		}
	}
}

// Close ends the subscription and closes its connection; a Next under
// way returns an error.
func (n *Notes) Close() error { return n.ps.Close() }
