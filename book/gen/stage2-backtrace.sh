# A panic in `read` while `read_all` reads for `fetch`, under both fetchers:
# stage2-coroutines/examples/backtrace.rs with RUST_BACKTRACE=1. We keep the
# panic message and our own frames (the example's, stage 2's and the
# runtime's), with their frame numbers, so the gaps show where standard
# library frames were left out. Thread ids, line and column numbers are cut,
# so the listing does not change with every edit.
RUST_BACKTRACE=1 cargo run -q -p stage2-coroutines --example backtrace 2>&1 \
  | awk '
      /^===/ || /^the task/ { print; next }
      /panicked at/ { sub(/ \([0-9]+\)/, ""); sub(/:[0-9]+:[0-9]+:$/, ":"); print; getline; print; next }
      /^ *[0-9]+: / { keep = ($0 ~ /stage2_coroutines|backtrace::|runtime::/); if (keep) print; next }
      /^ +at / { if (keep) { sub(/:[0-9]+:[0-9]+$/, ""); print } next }
    '
