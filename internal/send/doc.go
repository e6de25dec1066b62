// Package send is how the engine's script calls reach Redis.
//
// A Call is one script of runtime/lua with its keys and arguments. Run
// sends one by SHA; All sends several in one pipeline. Both recover from
// NOSCRIPT (a server that lost its scripts to SCRIPT FLUSH, a restart or
// a failover) by sending the calls that failed again by source, which
// loads them: go-redis does that for a single Script.Run, but not inside
// a pipeline, so Again is the one place the pipelines of this project do
// it.
//
// On top of that:
//   - Pushed sends push calls and, when the engine waits for replicas, a
//     WAIT on the same connection, per master on a cluster;
//   - Flights is the group commit of pushes: pushes made at the same time
//     from several goroutines share calls;
//   - WaitCluster waits on the doorbells of several queues of a Redis
//     Cluster, whose slots a multi-key BLPOP cannot span.
//
// What a call means (its keys, arguments and reply) is the runtime's
// business; this package only gets calls to Redis and their answers back.
package send
