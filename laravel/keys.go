package laravel

import "strings"

// queueKeys are the Redis keys of one Laravel queue, as
// Illuminate\Queue\RedisQueue names them, with the connection's prefix:
// "queues:" + the queue's name, then suffixes. Under Redis Cluster the
// name goes in braces, "queues:{emails}", so the four share a slot.
type queueKeys struct {
	// Ready is a list of payloads, oldest first: queues:NAME.
	Ready string
	// Delayed is a zset of payloads by the unix second they are due:
	// queues:NAME:delayed.
	Delayed string
	// Reserved is a zset of reserved payloads by the unix second their
	// retry_after runs out: queues:NAME:reserved.
	Reserved string
	// Notify is a list with one entry per ready job, which block_for
	// waits on with BLPOP: queues:NAME:notify.
	Notify string
}

// hasHashTag reports whether name holds a hash tag of its own, "{...}"
// with something between the braces: Laravel 13's RedisQueue then does
// not wrap it, and an app on Laravel 12 or before names its queues so
// on a cluster ("{default}").
func hasHashTag(name string) bool {
	i := strings.IndexByte(name, '{')
	return i >= 0 && strings.IndexByte(name[i+1:], '}') > 0
}

// keysFor returns the keys of queue under prefix.
func keysFor(prefix, queue string, hashTag bool) queueKeys {
	name := queue
	if hashTag && !hasHashTag(queue) {
		name = "{" + queue + "}"
	}
	base := prefix + "queues:" + name
	return queueKeys{Ready: base, Delayed: base + ":delayed", Reserved: base + ":reserved", Notify: base + ":notify"}
}

// restartKey is where Laravel's queue:restart leaves its signal, in the
// cache store: Cache::forever('illuminate:queue:restart', time()). With
// the redis cache store it is the cache connection's prefix plus the
// cache prefix ("laravel_cache:" by default) plus this name.
const restartKey = "illuminate:queue:restart"
