#!/usr/bin/env bash
# Builds the stage-3 crawler in release mode, then runs every benchmark
# (cargo bench -p bench) with the options given, for example:
#
#   examples/bench/run.sh                 full run; writes the book's table
#   examples/bench/run.sh --quick         small and fast, prints only
#   examples/bench/run.sh --rounds 9      more rounds
#   examples/bench/run.sh --help          every option
#
# The first build takes a few minutes (the release profile uses LTO); a full
# run then takes a minute or two on a 2-core machine. Run it on an idle
# machine: anything else running skews the numbers.
set -euo pipefail
cd "$(dirname "$0")/../.."
# Every server here is on 127.0.0.1: a proxy from the environment, which
# the crawler honours as curl does, must not carry these requests.
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
# The fetch floor is curl fetching the crawl's URLs (--parallel); the
# shared-frontier rows run a redis-server.
missing=()
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "bench: installing ${missing[*]}" >&2
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
cargo build --release -p stage3-crawler
cargo bench -p bench -- "$@"
