#!/usr/bin/env bash
# Builds stage 3 (release) and, if it can, spider-rs's command line (the
# peer, into target/spider), then runs the scale benchmark with the options
# given, for example:
#
#   examples/bench/scale.sh              10k, 100k and 1M pages; writes the
#                                        book's table and figure
#   examples/bench/scale.sh --quick      1k and 10k pages, prints only
#   examples/bench/scale.sh --help       every option
#
# A full run takes a few minutes on a 2-core machine; the first build of
# spider-rs takes ten more. Run it on an idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
# Every server here is on 127.0.0.1: a proxy from the environment, which
# the crawler honours as curl does, must not carry these requests.
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
cargo build --release -p stage3-crawler -p bench --bin stage3-crawler --bin scale
if [ ! -x target/spider/bin/spider ]; then
  # The peer is optional: without it the table has stage 3's rows only.
  echo "scale: building spider-rs (spider_cli) into target/spider" >&2
  cargo install spider_cli --locked --root target/spider ||
    echo "scale: spider-rs did not build; going on without it" >&2
fi
exec target/release/scale "$@"
