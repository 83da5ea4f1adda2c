# A panic in parse_links, inside read_response, inside the event loop:
# stage1-callbacks/examples/stack_ripping.rs with RUST_BACKTRACE=1. We keep
# the panic message and our own frames (the example's, stage 1's and the
# runtime's) with their frame numbers, so the gaps show where standard
# library frames were left out. Thread ids, line and column numbers are cut,
# so the listing does not change with every edit.
RUST_BACKTRACE=1 target/debug/examples/stack_ripping 2>&1 \
  | awk '
      /panicked at/ { sub(/ \([0-9]+\)/, ""); sub(/:[0-9]+:[0-9]+:$/, ":"); print; getline; print; next }
      /^stack backtrace:/ { print; next }
      /^ *[0-9]+: / { keep = ($0 ~ /stage1_callbacks|stack_ripping|runtime::/); if (keep) print; next }
      /^ +at / { if (keep) { sub(/:[0-9]+:[0-9]+$/, ""); print } next }
    '
