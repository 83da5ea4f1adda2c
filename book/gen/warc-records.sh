# Stage 3 archives a one-page crawl of the demo site it starts itself
# (robots.txt, then the index page), and warcio, the archivists' tool,
# checks the file. The records are printed with each body but the
# requests' cut to its length. The random record ids become <urn:uuid:1>,
# 2, ... in order of appearance (the same numbers in both listings, so the
# links between records stay visible); ports, dates, digests and offsets
# become PORT, DATE, sha1:… and OFFSET.
set -euo pipefail
root=$PWD
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
warcio=$root/.ci/venv/bin/warcio
if [ ! -x "$warcio" ]; then
  echo "book/gen/warc-records.sh: $warcio is missing; run .ci/test, which installs it" >&2
  exit 1
fi
cd "$dir"
normalise() {
  python3 -c '
import re, sys
ids = {}
def number(m):
    return "<urn:uuid:%d>" % ids.setdefault(m.group(0), len(ids) + 1)
for line in sys.stdin:
    line = re.sub(r"<urn:uuid:[0-9a-f-]+>", number, line)
    line = re.sub(r"127\.0\.0\.1:[0-9]+", "127.0.0.1:PORT", line)
    line = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "DATE", line)
    line = re.sub(r"sha1:[A-Z2-7]{32}", "sha1:…", line)
    line = re.sub(r"offset \d+", "offset OFFSET", line)
    sys.stdout.write(line)
'
}
echo '$ stage3-crawler --max-pages 1 --warc crawl.warc'
PATH="$root/target/debug:$PATH" stage3-crawler --max-pages 1 --warc crawl.warc >/dev/null 2>&1
echo '$ warcio check -v crawl.warc'
"$warcio" check -v crawl.warc | normalise
echo
echo '$ cat crawl.warc        # the response bodies cut short here'
python3 - crawl.warc <<'PY' | normalise
import re, sys
data = open(sys.argv[1], 'rb').read()
while data:
    end = data.index(b'\r\n\r\n') + 4
    head = data[:end].decode()
    length = int(re.search(r'Content-Length: (\d+)', head).group(1))
    block = data[end:end + length]
    print(head.replace('\r\n', '\n'), end='')
    if head.startswith('WARC/1.1\r\nWARC-Type: response'):
        http_end = block.index(b'\r\n\r\n') + 4
        print(block[:http_end].decode().replace('\r\n', '\n'), end='')
        print('[%d bytes of body]' % (length - http_end))
    else:
        print(block.decode().replace('\r\n', '\n'), end='')
    print()
    data = data[end + length + 4:]
PY
