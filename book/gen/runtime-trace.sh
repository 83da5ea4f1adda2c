# The runtime's trace log for runtime/examples/trace.rs: one task that sleeps
# for 10 ms, awaited by the main future. Durations vary from run to run, so
# they are replaced by <t>.
RUST_LOG=runtime=trace target/debug/examples/trace 2>&1 \
  | sed -E 's/[0-9]+(\.[0-9]+)?(ns|µs|ms|s)\b/<t>/g'
