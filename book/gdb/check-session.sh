#!/usr/bin/env bash
# Runs the debugger sessions of the appendix "Stepping Through the Executor
# in a Debugger" (book/gdb/*.gdb, except executor.gdb) under rust-gdb, and
# fails unless every breakpoint that a session names on an `# expect-hit`
# line was hit and every command in it ran. CI runs it, so the appendix
# cannot drift from the code.
#
#   book/gdb/check-session.sh                     every session
#   book/gdb/check-session.sh stage3 stage1       these sessions
#   book/gdb/check-session.sh --transcript stage3 check one session, then
#                                                 print its transcript
#
# The transcript is what the book shows (book/gen/debugger-*.sh). It is
# normalised to be the same on every run: addresses, process and thread ids,
# ports, line numbers, the toolchain's commit hash and which of a
# breakpoint's locations was hit (1.1 or 1.2: the order of a generic
# function's copies changes from build to build) are replaced, gdb's
# notes about threads are dropped, and backtraces stop at the program's
# `main`. A session marks the parts the book shows separately with
# `echo ANCHOR: name` / `echo ANCHOR_END: name` (mdBook's anchors); the
# transcript keeps the marker lines and drops the echo commands. Run from
# anywhere; it works in the repository root.
#
# Needs gdb with Python (Debian/Ubuntu: apt-get install gdb) and rust-gdb,
# which comes with rustup's toolchains. Set GDB_SESSION_TIMEOUT (seconds,
# default 120) to change how long a session may take before it counts as
# hung.
set -euo pipefail
cd "$(dirname "$0")/../.."

timeout_secs=${GDB_SESSION_TIMEOUT:-120}

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
  for file in book/gdb/*.gdb; do
    name=$(basename "$file" .gdb)
    [ "$name" = executor ] || sessions+=("$name")
  done
fi
for name in "${sessions[@]}"; do
  [ -f "book/gdb/$name.gdb" ] || fail "no session book/gdb/$name.gdb"
done

# --- the tools ---------------------------------------------------------------
gdb_bin=${RUST_GDB:-gdb}
command -v "$gdb_bin" >/dev/null ||
  fail "$gdb_bin not found: install gdb (Debian/Ubuntu: apt-get install gdb)"
command -v rust-gdb >/dev/null ||
  fail "rust-gdb not found: it ships with the Rust toolchain; is ~/.cargo/bin on PATH?"
command -v timeout >/dev/null || fail "timeout (GNU coreutils) not found"
"$gdb_bin" -nx -batch -ex 'python print("ok")' 2>/dev/null | grep -qx ok ||
  fail "$gdb_bin has no Python support, which rust-gdb's pretty printers and book/gdb/executor.gdb need"

# The sessions load target/debug/<binary>: make sure it matches the source.
cargo build --quiet -p stage1-callbacks -p stage2-coroutines -p stage3-crawler --bins

# --- running and checking one session ---------------------------------------
# Prints gdb's output, normalised (see the top of this file).
normalise() {
  sed -E \
    -e '/^\[Thread debugging using libthread_db enabled\]$/d' \
    -e '/^Using host libthread_db library /d' \
    -e '/^\[New Thread /d' \
    -e '/^\[New process [0-9]+\]$/d' \
    -e '/^\[Thread 0x[0-9a-f]+ \(LWP [0-9]+\) exited\]$/d' \
    -e '/^warning: Error disabling address space randomization/d' \
    -e '/^warning: Source file is more recent than executable/d' \
    -e '/has changed; re-reading symbols\.$/d' \
    -e '/^\+echo ANCHOR/d' \
    -e 's/^\+(.*)$/(gdb) \1/' \
    -e 's/\(process [0-9]+\)/(process PID)/g' \
    -e 's/0x[0-9a-f]+/0x.../g' \
    -e 's/(hit Breakpoint [0-9]+)\.[0-9]+,/\1,/' \
    -e 's#/rustc/[0-9a-f]{40}/#/rustc/HASH/#g' \
    -e 's/\.rs:[0-9]+/.rs:LINE/g' \
    -e 's/, line [0-9]+\./, line LINE./g' \
    -e 's/^[0-9]+\t/LINE\t/' \
    -e 's/^[0-9]+:\t/LINE:\t/' \
    -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' |
    awk '
      # A backtrace ends at the program'"'"'s own main (in src/main.rs): the
      # frames below it are the standard library starting the program, and
      # change with the toolchain.
      /^#[0-9]+ / { if (below_main) next; if ($0 ~ /::main \(\) at [^ ]*src\/main\.rs:/) below_main = 1; print; next }
      { below_main = 0; print }
    ' |
    expand -t 8
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
for name in "${sessions[@]}"; do
  file="book/gdb/$name.gdb"
  gdb_status=0
  # -nx: ignore the user's ~/.gdbinit, so every machine runs the same
  # commands. stdin from /dev/null: gdb must never wait for an answer.
  timeout --kill-after=10 "$timeout_secs" \
    rust-gdb -nx -batch -x "$file" </dev/null >"$log" 2>&1 || gdb_status=$?

  problems=()
  if [ "$gdb_status" -eq 124 ] || [ "$gdb_status" -eq 137 ]; then
    problems+=("gdb did not finish within ${timeout_secs}s (hung?)")
  elif [ "$gdb_status" -ne 0 ]; then
    problems+=("gdb exited with status $gdb_status: a command in $file failed")
  fi
  expected=0
  while IFS= read -r line; do
    spec=${line#\# expect-hit }
    label=${spec%%: *}
    pattern=${spec#*: }
    expected=$((expected + 1))
    grep_status=0
    grep -Eq "Breakpoint [0-9.]+, $pattern" "$log" 2>/dev/null || grep_status=$?
    if [ "$grep_status" -eq 1 ]; then
      problems+=("breakpoint not hit: $label (/$pattern/)")
    elif [ "$grep_status" -ne 0 ]; then
      problems+=("bad regular expression on the expect-hit line for $label: $pattern")
    fi
  done < <(grep '^# expect-hit ' "$file")
  [ "$expected" -gt 0 ] || problems+=("$file has no '# expect-hit LABEL: REGEX' lines")
  if ! grep -q '^\[Inferior 1 (process [0-9]*) exited' "$log"; then
    problems+=("the program did not run to its end under gdb")
  fi

  if [ ${#problems[@]} -eq 0 ]; then
    if [ -n "$transcript" ]; then
      normalise <"$log"
    else
      echo "check-session: ok   $name: all $expected expected breakpoints were hit"
    fi
  else
    status=1
    {
      echo "check-session: FAIL $name"
      for p in "${problems[@]}"; do
        echo "  - $p"
      done
      echo "  last lines of gdb's output:"
      grep -Ev '^\[(New Thread|Thread 0x)' "$log" | tail -n 25 | sed 's/^/    | /'
    } >&2
  fi
done
exit $status
