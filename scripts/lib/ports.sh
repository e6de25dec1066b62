# Sourced by the scripts that start servers on loopback (scripts/test,
# scripts/cluster, scripts/postgres, bench/run.sh, bench/outbox/run.sh).
#
# free_port [TAKEN...] prints a loopback TCP port that nothing listens on
# and that is none of TAKEN (the ports already picked for this start: a
# cluster node's own and its bus port must differ). The kernel hands out
# the port (python3), or, without python3, a random one is tried; either
# way the port is checked with a connection, which fails on a port
# nothing listens on. A server started on it may still find it taken
# meanwhile: the callers start it again on another (server_port_taken).
free_port() {
  local p i
  for i in $(seq 50); do
    p=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
      || shuf -i 20000-55000 -n 1)
    [ "$p" != 6379 ] || continue
    case " $* " in *" $p "*) continue ;; esac
    if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then continue; fi
    echo "$p"
    return 0
  done
  echo "free_port: no free loopback port found in 50 tries" >&2
  return 1
}

# server_port_taken LOG reports whether a redis-server's log says it
# could not bind a port.
server_port_taken() {
  [ -f "$1" ] && grep -q "Address already in use" "$1"
}
