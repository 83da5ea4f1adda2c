# The rust-gdb session of book/gdb/stage1.gdb: stage 1's stack inside the
# `read_response` callback, for contrast with stages 2 and 3.
# check-session.sh runs it, fails unless the breakpoint was hit, and prints
# the transcript with addresses, ids, ports and line numbers replaced.
book/gdb/check-session.sh --transcript stage1
