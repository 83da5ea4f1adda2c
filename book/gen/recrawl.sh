# A crawl of the demo site (with validators) into a journal and an archive;
# then the site again, ten of its pages revised, crawled again with
# --recrawl. Shown: the recrawl's log line, its report's lines of the pages
# that changed and the page that is new, its counters, and the records the
# archive holds, by kind. Ports and the date become PORT and DATE.
set -euo pipefail
root=$PWD
dir=$(mktemp -d)
site=
trap 'kill $site 2>/dev/null; rm -rf "$dir"' EXIT
start_site() {
  "$root/target/debug/demo-site" --validators --port "$1" "${@:2}" >"$dir/url" 2>/dev/null &
  site=$!
  until [ -s "$dir/url" ]; do sleep 0.05; done
}
start_site 0
base=$(head -n 1 "$dir/url")
port=${base##*:}
port=${port%/}
cd "$dir"
normalise() {
  sed -E -e "s/127\.0\.0\.1:$port/127.0.0.1:PORT/g" -e 's/^Date: .*/Date: DATE/' \
         -e 's/in [0-9.]+ secs .*/in N secs/'
}
echo '$ stage3-crawler http://127.0.0.1:PORT/ --state crawl-state --warc crawl.warc -q > first.txt'
"$root/target/debug/stage3-crawler" "$base" --state crawl-state --warc crawl.warc -q >first.txt
kill "$site"
wait "$site" 2>/dev/null || true
: >"$dir/url"
echo '$ demo-site --validators --revised 10 --port PORT &       # ten pages changed'
start_site "$port" --revised 10
echo '$ stage3-crawler http://127.0.0.1:PORT/ --state crawl-state --warc crawl.warc --recrawl > again.txt'
"$root/target/debug/stage3-crawler" "$base" --state crawl-state --warc crawl.warc --recrawl \
  2>&1 >again.txt | grep 'recrawl 1' | normalise
echo '$ grep -E " (changed|new)$" again.txt | cut -d " " -f 1,2,7     # URL, status, what became of it'
grep -E ' (changed|new)$' again.txt | cut -d ' ' -f 1,2,7 | normalise
echo '$ sed -n "/^Finished/,/^Todo/p" again.txt'
sed -n '/^Finished/,/^Todo/p' again.txt | normalise
echo '$ warcio index -f warc-type,warc-profile crawl.warc | sort | uniq -c'
"$root/.ci/venv/bin/warcio" index -f warc-type,warc-profile crawl.warc | sort | uniq -c
