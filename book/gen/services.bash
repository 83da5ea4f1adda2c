# Shared by the real-services-*.sh listings (sourced, not a listing itself):
# start a throwaway redis-server and PostgreSQL on free ports of 127.0.0.1 in
# a temporary directory, and stop them. PostgreSQL refuses to run as root,
# so as root it runs as the `postgres` user of Debian's package.

pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
bin="$PWD/target/debug/jobs-pipeline"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Waits (polling, at most 30 s) until the command succeeds.
wait_until() {
  local tries=0
  until "$@" >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -gt 600 ]; then
      echo "timed out waiting for: $*" >&2
      return 1
    fi
    sleep 0.05
  done
}

start_services() {
  dir=$(mktemp -d)
  chmod 755 "$dir"
  export PGPASSWORD="listing-$RANDOM-secret"
  printf '%s' "$PGPASSWORD" >"$dir/pw"
  if [ "$(id -u)" -eq 0 ]; then chown -R postgres "$dir"; fi
  redis_port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly no \
    >/dev/null 2>&1 &
  redis_pid=$!
  as_postgres "$pg_bin/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync \
    --pwfile="$dir/pw" >/dev/null
  echo "host all all 127.0.0.1/32 scram-sha-256" >"$dir/data/pg_hba.conf"
  pg_port=$(free_port)
  as_postgres "$pg_bin/postgres" -D "$dir/data" -k "$dir" -p "$pg_port" \
    -c listen_addresses=127.0.0.1 >/dev/null 2>&1 &
  wait_until redis-cli -p "$redis_port" ping
  wait_until "$pg_bin/pg_isready" -q -h 127.0.0.1 -p "$pg_port"
  broker="redis://127.0.0.1:$redis_port/jobs"
  db="postgres://postgres@127.0.0.1:$pg_port/postgres"
}

stop_services() {
  if [ -f "$dir/data/postmaster.pid" ]; then
    kill -INT "$(head -1 "$dir/data/postmaster.pid")" 2>/dev/null || true
    wait_until test ! -e "$dir/data/postmaster.pid" || true
  fi
  kill "$redis_pid" 2>/dev/null || true
  wait "$redis_pid" 2>/dev/null || true
  rm -rf "$dir"
}

# Starts `jobs-pipeline ARGS...` in the background, its stdout and stderr in
# $dir/NAME.out and $dir/NAME.err, and waits for its first line.
start_service() {
  local name=$1
  shift
  "$bin" "$@" >"$dir/$name.out" 2>"$dir/$name.err" &
  eval "${name}_pid=$!"
  wait_until test -s "$dir/$name.out"
}

# One request on its own connection: METHOD PATH [BODY [KEY]].
send() {
  local method=$1 path=$2 body=${3:-} key=${4:-}
  exec 5<>"/dev/tcp/127.0.0.1/$api_port"
  {
    printf '%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n' "$method" "$path"
    if [ -n "$key" ]; then printf 'Idempotency-Key: %s\r\n' "$key"; fi
    if [ -n "$body" ]; then printf 'Content-Length: %d\r\n\r\n%s' "${#body}" "$body"; else printf '\r\n'; fi
  } >&5
  tr -d '\r' <&5
  exec 5>&-
}
