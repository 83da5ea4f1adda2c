# `jobs-pipeline`: three POSTs (one of them invalid), a GET, then Ctrl-C
# (SIGINT), then the store file. Requests go through bash's /dev/tcp; lines
# starting with `>` are what the client sent. The port varies and becomes
# PORT; the store lives in a fresh temporary directory.
set -euo pipefail
bin="$PWD/target/debug/jobs-pipeline"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

send() { # METHOD BODY: one request on its own connection, and the response
  local method=$1 body=${2:-}
  echo "> $method /jobs${body:+ $body}"
  exec 5<>"/dev/tcp/127.0.0.1/$port"
  if [ -n "$body" ]; then
    printf '%s /jobs HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
      "$method" "${#body}" "$body" >&5
  else
    printf '%s /jobs HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' "$method" >&5
  fi
  tr -d '\r' <&5
  exec 5>&-
  echo
}

session() {
  cd "$dir"
  coproc SERVER { exec "$bin" --port 0 --store jobs.jsonl; }
  # Our own copy of the server's stdout: bash drops the coproc's when the
  # server exits, and we read on until then.
  exec 6<&"${SERVER[0]}"
  local line
  read -r line <&6 && echo "$line"
  port=${line#*127.0.0.1:}
  port=${port%%/*}
  read -r line <&6 && echo "$line"
  echo
  send POST '{"name": "resize", "priority": 3}'
  send POST '{"name": "thumbnail", "priority": 12}'
  send POST '{"name": "crop", "priority": 0}'
  send GET
  echo "(Ctrl-C)"
  kill -INT "$SERVER_PID"
  while read -r line <&6; do echo "$line"; done
  echo
  echo "\$ cat jobs.jsonl"
  cat jobs.jsonl
}

session | sed -E 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g'
