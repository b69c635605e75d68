# A private PostgreSQL server for the test suite: sourced by scripts/run-tests.
# The cluster lives in a temp dir, listens on 127.0.0.1 at a free port and on a
# unix socket in that dir, and is stopped by its data directory (never a
# system-wide server). initdb and the server refuse to run as root, so as
# root they run as the unprivileged `postgres` user (Debian's package makes it).
#
#   start_postgres   exports SUBAGENT_TEST_PG_CONNINFO (TCP), SUBAGENT_TEST_PG_SOCKET_CONNINFO,
#                    SUBAGENT_TEST_PG_RESTART (a command line that restarts the server),
#                    SUBAGENT_TEST_PG_DIR
#   stop_postgres    stops it and removes the temp dir

pg_bindir () {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    [[ -x "$dir/pg_ctl" ]] && { echo "$dir"; return 0; }
  done
  command -v pg_ctl >/dev/null && { dirname "$(command -v pg_ctl)"; return 0; }
  echo "run-tests: PostgreSQL's pg_ctl is not installed (scripts/install-deps installs postgresql)" >&2
  return 1
}

# Runs "$@" as the cluster's owner.
pg_as_owner () {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

pg_free_port () {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_postgres () {
  local bindir port user
  bindir=$(pg_bindir) || return 1
  SUBAGENT_TEST_PG_DIR=$(mktemp -d /tmp/subagent-postgres.XXXXXX)
  chmod 755 "$SUBAGENT_TEST_PG_DIR"
  mkdir "$SUBAGENT_TEST_PG_DIR/data" "$SUBAGENT_TEST_PG_DIR/socket"
  if [[ $(id -u) -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || { echo "run-tests: no postgres user to run the server as" >&2; return 1; }
    chown postgres: "$SUBAGENT_TEST_PG_DIR/data" "$SUBAGENT_TEST_PG_DIR/socket"
    user=postgres
  else
    user=$(id -un)
  fi
  chmod 700 "$SUBAGENT_TEST_PG_DIR/data"
  if ! pg_as_owner "$bindir/initdb" -D "$SUBAGENT_TEST_PG_DIR/data" -U "$user" --auth=trust \
       --no-sync -E UTF8 --locale=C >"$SUBAGENT_TEST_PG_DIR/initdb.log" 2>&1; then
    echo "run-tests: initdb failed; its log:" >&2
    tail -n 30 "$SUBAGENT_TEST_PG_DIR/initdb.log" >&2
    return 1
  fi
  port=$(pg_free_port)
  # fsync off: the tests check the protocol, not the disk; the server stays
  # crash-safe across `pg_ctl restart` (a clean shutdown). Benchmarks set
  # SUBAGENT_PG_FSYNC=on to compare durable stores with durable stores.
  if ! pg_as_owner "$bindir/pg_ctl" -D "$SUBAGENT_TEST_PG_DIR/data" -w -t 60 \
       -l "$SUBAGENT_TEST_PG_DIR/socket/server.log" \
       -o "-c listen_addresses=127.0.0.1 -p $port -k $SUBAGENT_TEST_PG_DIR/socket -c fsync=${SUBAGENT_PG_FSYNC:-off} -c max_connections=200" \
       start >/dev/null; then
    echo "run-tests: PostgreSQL did not start; its log:" >&2
    tail -n 30 "$SUBAGENT_TEST_PG_DIR/socket/server.log" >&2
    return 1
  fi
  export SUBAGENT_TEST_PG_DIR
  export SUBAGENT_TEST_PG_CONNINFO="host=127.0.0.1 port=$port user=$user dbname=postgres"
  export SUBAGENT_TEST_PG_SOCKET_CONNINFO="host=$SUBAGENT_TEST_PG_DIR/socket port=$port user=$user dbname=postgres"
  if [[ $(id -u) -eq 0 ]]; then
    export SUBAGENT_TEST_PG_RESTART="runuser -u postgres -- $bindir/pg_ctl -D $SUBAGENT_TEST_PG_DIR/data -w -t 60 -m fast -l $SUBAGENT_TEST_PG_DIR/socket/server.log restart"
  else
    export SUBAGENT_TEST_PG_RESTART="$bindir/pg_ctl -D $SUBAGENT_TEST_PG_DIR/data -w -t 60 -m fast -l $SUBAGENT_TEST_PG_DIR/socket/server.log restart"
  fi
  if ! "$bindir/psql" "$SUBAGENT_TEST_PG_CONNINFO" -qAtc 'SELECT 1' >/dev/null; then
    echo "run-tests: PostgreSQL started but does not answer on $SUBAGENT_TEST_PG_CONNINFO" >&2
    return 1
  fi
}

stop_postgres () {
  [[ -n "${SUBAGENT_TEST_PG_DIR:-}" && -d "$SUBAGENT_TEST_PG_DIR/data" ]] || return 0
  local bindir
  bindir=$(pg_bindir) || return 0
  pg_as_owner "$bindir/pg_ctl" -D "$SUBAGENT_TEST_PG_DIR/data" -w -t 60 -m fast stop >/dev/null 2>&1 || true
  rm -rf "$SUBAGENT_TEST_PG_DIR"
  unset SUBAGENT_TEST_PG_DIR SUBAGENT_TEST_PG_CONNINFO SUBAGENT_TEST_PG_SOCKET_CONNINFO SUBAGENT_TEST_PG_RESTART
}
