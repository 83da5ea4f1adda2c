# `jobs-pipeline api` and `store` on a real redis-server and PostgreSQL: a
# job posted twice under one Idempotency-Key, an invalid one, the status of
# the job once stored, Ctrl-C to both, and the table. Ports become PORT.
set -euo pipefail
source book/gen/services.bash
trap stop_services EXIT
start_services

session() {
  echo "\$ PGPASSWORD=... jobs-pipeline api --port 0 --broker $broker --db $db &"
  start_service api api --port 0 --broker "$broker" --db "$db"
  cat "$dir/api.out"
  api_port=$(sed -E 's|.*listening on http://127\.0\.0\.1:([0-9]+)/.*|\1|;q' "$dir/api.out")
  echo "\$ PGPASSWORD=... jobs-pipeline store --broker $broker --db $db --consumer store-1 &"
  start_service store store --broker "$broker" --db "$db" --consumer store-1
  cat "$dir/store.out"
  echo
  echo "> POST /jobs, Idempotency-Key: order-17"
  send POST /jobs '{"name": "resize", "priority": 3}' order-17
  echo
  echo "> POST /jobs, Idempotency-Key: order-17 (a retry)"
  send POST /jobs '{"name": "resize", "priority": 3}' order-17
  echo
  echo "> POST /jobs"
  send POST /jobs '{"name": "thumbnail", "priority": 12}'
  echo
  local id
  id=$(send POST /jobs '{"name": "resize", "priority": 3}' order-17 | tail -1 | sed -E 's/.*"id":([0-9]+).*/\1/')
  wait_until bash -c "exec 5<>/dev/tcp/127.0.0.1/$api_port; printf 'GET /jobs/$id HTTP/1.0\r\n\r\n' >&5; grep -q stored <&5"
  echo "> GET /jobs/$id"
  send GET "/jobs/$id"
  echo
  echo "(Ctrl-C to both)"
  kill -INT "$store_pid" "$api_pid"
  wait "$store_pid" "$api_pid"
  tail -n +2 "$dir/store.out"
  tail -n +2 "$dir/api.out"
  echo
  echo "\$ psql $db -c 'SELECT id, doc FROM jobs'"
  "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -c 'SELECT id, doc FROM jobs'
}

session | sed -E 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g'
