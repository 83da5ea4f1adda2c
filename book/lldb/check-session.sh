#!/usr/bin/env bash
# Runs the lldb sessions of the appendix "Stepping Through the Executor in
# a Debugger" (book/lldb/*.lldb) under rust-lldb, and fails unless every
# breakpoint a session names on an `# expect-hit` line was hit and the
# program ran to its end. CI runs it, as book/gdb/check-session.sh runs the
# gdb sessions, so that the lldb half of the appendix cannot drift either.
#
#   book/lldb/check-session.sh                     every session
#   book/lldb/check-session.sh --transcript stage3 check one, then print its
#                                                  transcript
#
# The transcript (book/gen/debugger-lldb-stage3.sh) is normalised to be the
# same on every run: addresses, process ids, symbol hashes, line and column
# numbers, ports, and which copy of a generic function a breakpoint hit
# are replaced; rust-lldb's own setup commands are dropped.
#
# Needs lldb with Python (Debian/Ubuntu: apt-get install lldb
# python3-lldb-14) and rust-lldb, which comes with rustup's toolchains.
# Debian 12's lldb 14 looks for its Python module in a directory that does
# not exist (`lldb -P`); this script then points PYTHONPATH at the one the
# package installs.
set -euo pipefail
cd "$(dirname "$0")/../.."

timeout_secs=${LLDB_SESSION_TIMEOUT:-120}
# Each session's program and arguments.
declare -A program=(
  [stage3]="target/debug/stage3-crawler --max-tasks 2 --parse-threads 0 --progress never --ignore-robots -q"
)

fail() {
  echo "check-session: $*" >&2
  exit 1
}

transcript=""
sessions=()
while [ $# -gt 0 ]; do
  case "$1" in
    --transcript)
      [ $# -ge 2 ] || fail "--transcript needs a session name"
      transcript=$2
      sessions=("$2")
      shift 2
      ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    -*) fail "unknown option $1 (see --help)" ;;
    *)
      sessions+=("$1")
      shift
      ;;
  esac
done
if [ ${#sessions[@]} -eq 0 ]; then
  for file in book/lldb/*.lldb; do
    sessions+=("$(basename "$file" .lldb)")
  done
fi
for name in "${sessions[@]}"; do
  [ -f "book/lldb/$name.lldb" ] || fail "no session book/lldb/$name.lldb"
  [ -n "${program[$name]:-}" ] || fail "no program for session $name (see \$program in $0)"
done

command -v lldb >/dev/null || fail "lldb not found (Debian/Ubuntu: apt-get install lldb python3-lldb-14)"
command -v rust-lldb >/dev/null ||
  fail "rust-lldb not found: it ships with the Rust toolchain; is ~/.cargo/bin on PATH?"
if ! lldb -b -o 'script import lldb.embedded_interpreter' >/dev/null 2>&1; then
  for dir in /usr/lib/llvm-*/lib/python3*/dist-packages; do
    if [ -f "$dir/lldb/embedded_interpreter.py" ]; then
      export PYTHONPATH="$dir${PYTHONPATH:+:$PYTHONPATH}"
      break
    fi
  done
fi
lldb -b -o 'script print("python " + "ok")' 2>/dev/null | grep -qx 'python ok' ||
  fail "lldb has no working Python (Debian/Ubuntu: apt-get install python3-lldb-14), which rust-lldb needs"

cargo build --quiet -p stage3-crawler --bins

normalise() {
  # Drop rust-lldb's setup (its formatter commands), up to our first line.
  awk 'started || /^\(lldb\) settings set auto-confirm/ { started = 1; print }' |
    sed -E \
      -e '/^Process [0-9]+ launched: /d' \
      -e '/^\(lldb\) script print\("ANCHOR/d' \
      -e 's/Process [0-9]+/Process PID/g' \
      -e 's/0x[0-9a-f]+/0x.../g' \
      -e 's/::h[0-9a-f]{16}/::hHASH/g' \
      -e 's/ \+ [0-9]+ at / + N at /g' \
      -e 's/(breakpoint [0-9]+)\.[0-9]+/\1.N/' \
      -e 's/\.rs:[0-9]+:[0-9]+/.rs:LINE:COL/g' \
      -e 's/\.rs:[0-9]+/.rs:LINE/g' \
      -e 's/^(->)? *[0-9]+ \t/\1 LINE\t/' \
      -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' |
    expand -t 8
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
for name in "${sessions[@]}"; do
  file="book/lldb/$name.lldb"
  lldb_status=0
  # shellcheck disable=SC2086 # the program's arguments are words
  timeout --kill-after=10 "$timeout_secs" \
    rust-lldb -b -s "$file" -- ${program[$name]} </dev/null >"$log" 2>&1 || lldb_status=$?
  problems=()
  if [ "$lldb_status" -eq 124 ] || [ "$lldb_status" -eq 137 ]; then
    problems+=("lldb did not finish within ${timeout_secs}s (hung?)")
  elif [ "$lldb_status" -ne 0 ]; then
    problems+=("lldb exited with status $lldb_status")
  fi
  if grep -q '^error: ' "$log"; then
    problems+=("a command failed: $(grep -m1 '^error: ' "$log")")
  fi
  expected=0
  while IFS= read -r line; do
    spec=${line#\# expect-hit }
    label=${spec%%: *}
    pattern=${spec#*: }
    expected=$((expected + 1))
    # A hit is a stop at a breakpoint whose frame #0 is the function.
    if ! grep -A1 'stop reason = breakpoint' "$log" | grep -Eq "frame #0: .*$pattern"; then
      problems+=("breakpoint not hit: $label (/$pattern/)")
    fi
  done < <(grep '^# expect-hit ' "$file")
  [ "$expected" -gt 0 ] || problems+=("$file has no '# expect-hit LABEL: REGEX' lines")
  grep -q '^Process [0-9]* exited with status = 0' "$log" ||
    problems+=("the program did not run to its end under lldb")

  if [ ${#problems[@]} -eq 0 ]; then
    if [ -n "$transcript" ]; then
      normalise <"$log"
    else
      echo "check-session: ok   lldb $name: all $expected expected breakpoints were hit"
    fi
  else
    status=1
    {
      echo "check-session: FAIL lldb $name"
      for p in "${problems[@]}"; do
        echo "  - $p"
      done
      echo "  last lines of lldb's output:"
      tail -n 25 "$log" | sed 's/^/    | /'
    } >&2
  fi
done
exit $status
