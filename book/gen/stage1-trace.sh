# One Fetcher's life in the runtime's trace log: stage 1 fetching the demo
# site's /notes.txt (plain text, so no links: one URL, one Fetcher).
# Timestamps are cut and durations replaced by <t>. The response can arrive
# in one readable event or in two, and the event may or may not say the
# peer has closed, depending on timing; so an event shows only its
# readable/writable/error flags, and a repeat of the same event in the next
# turn is left out.
set -euo pipefail
coproc SITE { exec target/debug/demo-site 2>/dev/null; }
trap 'kill "$SITE_PID"' EXIT
read -r site <&"${SITE[0]}"
echo "\$ RUST_LOG=runtime=trace cargo run -p stage1-callbacks -- http://127.0.0.1:PORT/notes.txt"
RUST_LOG=runtime=trace target/debug/stage1-callbacks "${site}notes.txt" 2>&1 \
  | sed -E -e 's/^\[[^ ]+ TRACE runtime\] //' \
           -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' \
           -e 's/fetched in [0-9]+\.[0-9]s/fetched in X.Xs/' \
           -e 's/[0-9]+(\.[0-9]+)?(ns|µs|ms|s)\b/<t>/g' \
  | awk '
      /^event token=/ {
        flags = ""
        if ($0 ~ /readable: true/) flags = flags " readable"
        if ($0 ~ /writable: true/) flags = flags " writable"
        if ($0 ~ /error: true/) flags = flags " error"
        line = $2 flags
        event = "event " line
        if (event == last_event && pending != "") { pending = ""; next }
        if (pending != "") print pending
        pending = ""
        print event
        last_event = event
        next
      }
      /^loop turn/ { if (pending != "") print pending; pending = $0; next }
      { if (pending != "") print pending; pending = ""; print; last_event = "" }
      END { if (pending != "") print pending }'
