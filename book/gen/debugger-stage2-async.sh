# The rust-gdb session of book/gdb/stage2-async.gdb: stage 2's stack inside
# the body of `async fn read` (`--style async`). check-session.sh runs it,
# fails unless the breakpoint was hit, and prints the transcript with
# addresses, ids, ports and line numbers replaced.
book/gdb/check-session.sh --transcript stage2-async
