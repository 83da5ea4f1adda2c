# The rust-gdb session of book/gdb/stage2-state-machine.gdb: stage 2's stack
# inside the hand-written `Read::poll` (`--style state-machine`).
# check-session.sh runs it, fails unless the breakpoint was hit, and prints
# the transcript with addresses, ids, ports and line numbers replaced.
book/gdb/check-session.sh --transcript stage2-state-machine
