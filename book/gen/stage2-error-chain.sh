# An error inside `read`, as `fetch`'s caller sees it, under both fetchers:
# stage2-coroutines/examples/error_chain.rs. Ports vary, so they become PORT.
cargo run -q -p stage2-coroutines --example error_chain 2>&1 \
  | sed -E 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g'
