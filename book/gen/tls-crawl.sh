# https against the demo site's TLS mode, logs (stderr) then report
# (stdout): an http root that redirects to https, two certificates that do
# not verify (no --ca-file; a name the certificate does not carry), and
# https to a plain-http port. One worker keeps the order of the log lines
# fixed. Ports, timings and dates are replaced as in stage3-report.sh, and
# the temporary directory by DIR.
set -euo pipefail
dir=$(mktemp -d)
target/debug/demo-site --tls --cert-out "$dir/site.pem" --port 0 >"$dir/url" 2>/dev/null &
site_pid=$!
target/debug/demo-site --port 0 >"$dir/plain-url" 2>/dev/null &
plain_pid=$!
trap 'kill "$site_pid" "$plain_pid" 2>/dev/null; rm -rf "$dir"' EXIT
until [ -s "$dir/url" ] && [ -s "$dir/plain-url" ]; do sleep 0.05; done
base=$(head -n 1 "$dir/url")
base=${base%/}
port=${base##*:}
plain=$(head -n 1 "$dir/plain-url")
plain=${plain%/}
plain_port=${plain##*:}

normalise() {
  sed -E -e "s#$dir#DIR#g" \
         -e "s/127\.0\.0\.1:$plain_port\b/127.0.0.1:HTTP_PORT/g" \
         -e 's/(127\.0\.0\.1|other\.test):[0-9]+/\1:PORT/g' \
         -e 's/in [0-9]+\.[0-9]+ secs/in X.XXX secs/' \
         -e 's/\([0-9]+\.[0-9]+ urls\/sec\/task\)/(Y.YYY urls\/sec\/task)/' \
         -e 's/^Date: .*/Date: DATE/'
}

echo "\$ demo-site --tls --cert-out DIR/site.pem"
echo "$base/" | normalise
echo

crawl() {
  echo "\$ stage3-crawler $* --exclude '/\$|/static/' --max-tasks 1" | normalise
  status=0
  target/debug/stage3-crawler "$@" --exclude '/$|/static/' --max-tasks 1 --progress never \
    2>"$dir/err" >"$dir/out" || status=$?
  normalise <"$dir/err"
  normalise <"$dir/out"
  echo "(exit status $status)"
  echo
}

crawl "http://127.0.0.1:$port/redirect/chain/4" --ca-file "$dir/site.pem"
crawl "$base/redirect/target.html"
crawl "https://other.test:$port/redirect/target.html" \
  --resolve "other.test:$port:127.0.0.1" --ca-file "$dir/site.pem"
crawl "${plain/http:/https:}/redirect/target.html" --max-tries 2
