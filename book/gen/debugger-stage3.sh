# The rust-gdb session of book/gdb/stage3.gdb on the stage-3 crawler:
# Task::step, the body of the async fn `fetch`, the reactor's dispatch and
# wake, and what a woken task was waiting on. check-session.sh runs it, fails
# unless every breakpoint was hit, and prints the transcript with addresses,
# ids, ports and line numbers replaced. The appendix includes it by parts.
book/gdb/check-session.sh --transcript stage3
