# The runtime's trace of one fetch by stage 2's hand-written state machines:
# stage2-coroutines/examples/trace_fetch.rs, where task 1 serves one page and
# task 2 fetches it, all on one thread. Ports vary, so they become PORT; the
# durations become <t>.
RUST_LOG=runtime=trace cargo run -q -p stage2-coroutines --example trace_fetch -- state-machine 2>&1 \
  | sed -E -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' \
           -e 's/[0-9]+(\.[0-9]+)?(ns|µs|ms|s)\b/<t>/g'
