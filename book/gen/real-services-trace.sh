# One job through `jobs-pipeline store`, with both clients' trace on: the
# RESP bytes to and from Redis, and the PostgreSQL messages. The job is
# queued first (by the api, untraced); the listing ends at the store's
# first acknowledgement. Ports, stream ids and parameter statuses are
# normalised or left out.
set -euo pipefail
source book/gen/services.bash
trap stop_services EXIT
start_services

start_service api api --port 0 --broker "$broker" --db "$db"
api_port=$(sed -E 's|.*listening on http://127\.0\.0\.1:([0-9]+)/.*|\1|;q' "$dir/api.out")
send POST /jobs '{"name": "resize", "priority": 3}' order-17 >/dev/null
RUST_LOG=redis_client=trace,jobs_pipeline::postgres=trace \
  start_service store store --broker "$broker" --db "$db" --consumer store-1
wait_until grep -q EXPIRE "$dir/store.err"
wait_until sh -c "grep -A4 EXPIRE '$dir/store.err' | grep -c '^\[.*< ' | grep -q 4"
kill -INT "$store_pid" "$api_pid"
wait "$store_pid" "$api_pid" || true

# The trace lines, without env_logger's time and target; the debug line
# that repeats a notice the trace already shows goes.
grep -v '^\[[^]]* DEBUG ' "$dir/store.err" |
  sed -E 's/^\[[^]]* TRACE [^]]*\] //' |
  awk '/EXPIRE/ { acked = 1 } { print } acked && /^< / { if (++replies == 4) exit }' |
  grep -v '^< ParameterStatus' |
  sed -E 's/[0-9]{13}-[0-9]+/TIME-SEQ/g; s/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g'
