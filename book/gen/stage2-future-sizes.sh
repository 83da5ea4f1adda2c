# The size of each fetcher's future, hand-written and async fn:
# stage2-coroutines/examples/future_sizes.rs.
cargo run -q -p stage2-coroutines --example future_sizes 2>&1
