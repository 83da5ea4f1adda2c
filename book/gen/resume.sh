# A crawl with --state, killed with SIGKILL once its journal has 60 lines,
# then resumed by running the same command again. Shown: the journal's
# first lines, its first statistic with the lines before it, the resumed
# run's log line and the end of its report. Ports and checksums become PORT and CRC (a
# checksum covers the port); the counts at the kill depend on timing, so
# they become N.
set -euo pipefail
root=$PWD
dir=$(mktemp -d)
"$root/target/debug/demo-site" --delay-ms 10 --port 0 >"$dir/url" 2>/dev/null &
site=$!
trap 'kill "$site" 2>/dev/null; rm -rf "$dir"' EXIT
until [ -s "$dir/url" ]; do sleep 0.05; done
base=$(head -n 1 "$dir/url")
port=${base##*:}
port=${port%/}
cd "$dir"
normalise() {
  sed -E -e "s/127\.0\.0\.1:$port/127.0.0.1:PORT/g" \
         -e 's/^[0-9a-f]{8} /CRC /' \
         -e 's/[0-9]+ URLs done, [0-9]+ skipped, [0-9]+ to fetch/N URLs done, N skipped, N to fetch/' \
         -e 's/^Date: .*/Date: DATE/'
}
echo '$ stage3-crawler http://127.0.0.1:PORT/ --max-tasks 5 --state crawl-state > report.txt &'
"$root/target/debug/stage3-crawler" "$base" --max-tasks 5 --state crawl-state \
  >/dev/null 2>&1 &
crawler=$!
until [ "$(cat crawl-state/journal 2>/dev/null | wc -l)" -ge 60 ]; do sleep 0.01; done
echo '$ kill -9 %1'
kill -9 "$crawler"
wait "$crawler" 2>/dev/null || true
echo '$ head -n 4 crawl-state/journal'
head -n 4 crawl-state/journal | normalise
echo '$ grep -B 2 -m 1 done crawl-state/journal     # the root page is done, after its links'
grep -B 2 -m 1 '"done"' crawl-state/journal | normalise
echo '$ stage3-crawler http://127.0.0.1:PORT/ --max-tasks 5 --state crawl-state > report.txt'
"$root/target/debug/stage3-crawler" "$base" --max-tasks 5 --state crawl-state \
  2>&1 >report.txt | grep 'resuming' | normalise
echo '$ tail -n 4 report.txt'
tail -n 4 report.txt | normalise
