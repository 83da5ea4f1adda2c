# Stage 1, for contrast: the stack of a callback. The appendix "Stepping
# Through the Executor in a Debugger" shows its transcript. From the
# repository root:
#
#   cargo build -p stage1-callbacks
#   rust-gdb -batch -x book/gdb/stage1.gdb
#
# expect-hit Fetcher::read_response: stage1_callbacks::fetcher::Fetcher::read_response \(

source book/gdb/executor.gdb
file target/debug/stage1-callbacks
tty /dev/null
set trace-commands on

# The callback that runs when a fetcher's socket is readable. It is not
# generic, so it can be named.
break stage1_callbacks::fetcher::Fetcher::read_response
run
bt
set print max-depth 2
p *self
set print max-depth 20
delete
continue
