# The rust-lldb session of book/lldb/stage3.lldb on the stage-3 crawler, the
# gdb session's stops under lldb: Task::step, the body of the async fn
# `fetch`, the reactor's dispatch and wake. check-session.sh runs it, fails
# unless every breakpoint was hit, and prints the transcript with addresses,
# ids, hashes, ports and line numbers replaced. The appendix includes it by
# parts.
book/lldb/check-session.sh --transcript stage3
