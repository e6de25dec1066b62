#!/usr/bin/env bash
# Runs the comparison of jobgen's transactional outbox with River: every
# phase, both systems, one PostgreSQL, one Redis, one process. Arguments
# go to outboxbench (see docs/benchmarks.md, or `bench/outbox/run.sh -h`),
# but for these two, which say how durable the servers it starts are:
#
#   -fsync=on|off              PostgreSQL's fsync and full_page_writes
#                              (default on, as in production)
#   -appendfsync=everysec|always|no
#                              Redis's AOF fsync policy (default everysec,
#                              which docs/outbox.md asks for at least; no
#                              turns the AOF off)
#
# Unless -postgres is given, it starts a PostgreSQL of its own
# (scripts/postgres: Debian's postgresql package, a free loopback port);
# unless -redis is given, a redis-server of its own on a free loopback
# port, its AOF in a temporary directory. It stops both at the end. It
# installs nothing.
set -euo pipefail
cd "$(dirname "$0")"

have_pg="" have_redis="" fsync=on appendfsync=everysec
args=()
for a in "$@"; do
  case "$a" in
    -fsync=*|--fsync=*) fsync=${a#*=}; continue ;;
    -appendfsync=*|--appendfsync=*) appendfsync=${a#*=}; continue ;;
    -postgres|--postgres|-postgres=*|--postgres=*) have_pg=1 ;;
    -redis|--redis|-redis=*|--redis=*) have_redis=1 ;;
  esac
  args+=("$a")
done
set -- "${args[@]+"${args[@]}"}"
case $fsync in on|off) ;; *) echo "bench/outbox/run.sh: -fsync must be on or off" >&2; exit 2 ;; esac
case $appendfsync in everysec|always|no) ;; *) echo "bench/outbox/run.sh: -appendfsync must be everysec, always or no" >&2; exit 2 ;; esac

work=$(mktemp -d)
# Not under $work: the server runs as the postgres user, who may not
# enter a directory of mktemp's.
pgdir="${TMPDIR:-/tmp}/outboxbench-pg-$$"
# Stops what this script started: PostgreSQL (scripts/postgres stop
# deletes its directory), then Redis, waiting for it to exit, since it
# writes its log into $work while it shuts down.
cleanup() {
  [ -z "$have_pg" ] && ../../scripts/postgres stop "$pgdir" || true
  [ -z "$have_redis" ] && ../../scripts/cluster stop "$work" || true
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/outboxbench" ./cmd/outboxbench

# free_port
# shellcheck source=../../scripts/lib/ports.sh
. ../../scripts/lib/ports.sh

if [ -z "$have_pg" ]; then
  url=$(POSTGRES_FSYNC=$fsync ../../scripts/postgres start "$pgdir")
  echo "bench/outbox/run.sh: PostgreSQL $(ls -d /usr/lib/postgresql/*/ 2>/dev/null | sort -V | tail -1 | xargs basename) on $url, fsync and full_page_writes $fsync" >&2
  set -- -postgres "$url" "$@"
fi

if [ -z "$have_redis" ]; then
  if ! command -v redis-server >/dev/null 2>&1; then
    echo "bench/outbox/run.sh: redis-server is not installed; install it (Debian/Ubuntu: apt-get install redis-server) or pass -redis redis://host:port/N" >&2
    exit 1
  fi
  port=$(free_port)
  mkdir "$work/server"
  aof=(--appendonly no)
  [ "$appendfsync" = no ] || aof=(--appendonly yes --appendfsync "$appendfsync")
  redis-server --port "$port" --bind 127.0.0.1 --save "" "${aof[@]}" --dir "$work/server" \
    --logfile "$work/server/redis.log" --daemonize yes --pidfile "$work/server/redis.pid"
  for _ in $(seq 100); do
    redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break
    sleep 0.05
  done
  redis-cli -p "$port" ping | grep -q PONG || { echo "bench/outbox/run.sh: redis-server did not start on port $port" >&2; cat "$work/server/redis.log" >&2; exit 1; }
  echo "bench/outbox/run.sh: redis-server $(redis-server --version | grep -o 'v=[0-9.]*') on 127.0.0.1:$port, appendfsync $appendfsync" >&2
  set -- -redis "redis://127.0.0.1:$port/0" "$@"
fi

"$work/outboxbench" "$@"
