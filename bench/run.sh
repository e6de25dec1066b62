#!/usr/bin/env bash
# Runs the comparison of jobgen with asynq, gocraft/work and taskq: every
# system, every phase, one Redis, one process. Arguments go to jobbench
# (see docs/benchmarks.md, or `bench/run.sh -h`).
#
# Unless -redis is given, it starts a redis-server of its own on a free
# loopback port (nothing saved to disk), runs against its db 9, and stops
# it at the end. It installs nothing: redis-server must be on PATH.
set -euo pipefail
cd "$(dirname "$0")"

have_redis=""
for a in "$@"; do
  case "$a" in -redis|--redis|-redis=*|--redis=*) have_redis=1 ;; esac
done

bin=$(mktemp -d)
cleanup() { rm -rf "$bin"; }
trap cleanup EXIT
go build -o "$bin/jobbench" ./cmd/jobbench

if [ -z "$have_redis" ]; then
  if ! command -v redis-server >/dev/null 2>&1; then
    echo "bench/run.sh: redis-server is not installed; install it (Debian/Ubuntu: apt-get install redis-server) or pass -redis redis://host:port/N" >&2
    exit 1
  fi
  # shellcheck source=../scripts/lib/ports.sh
  . ../scripts/lib/ports.sh
  port=$(free_port)
  dir=$(mktemp -d)
  mkdir "$dir/server"
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir/server" \
    --logfile "$dir/server/redis.log" --daemonize yes --pidfile "$dir/server/redis.pid"
  # Stops the server, waits for it to exit (it writes its log into $dir
  # while it shuts down), then deletes $dir.
  cleanup() {
    ../scripts/cluster stop "$dir" || true
    rm -rf "$bin"
  }
  for _ in $(seq 100); do
    redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break
    sleep 0.05
  done
  redis-cli -p "$port" ping | grep -q PONG || { echo "bench/run.sh: redis-server did not start on port $port" >&2; cat "$dir/server/redis.log" >&2; exit 1; }
  echo "bench/run.sh: redis-server $(redis-server --version | grep -o 'v=[0-9.]*') on 127.0.0.1:$port" >&2
  set -- -redis "redis://127.0.0.1:$port/9" "$@"
fi

"$bin/jobbench" "$@"
