# Stage 2's async fn fetcher: the stack inside `read`. The appendix
# "Stepping Through the Executor in a Debugger" shows its transcript. From
# the repository root:
#
#   cargo build -p stage2-coroutines
#   rust-gdb -batch -x book/gdb/stage2-async.gdb
#
# expect-hit read's async fn body: stage2_coroutines::async_fetch::read::\{async_fn#0\} \(

source book/gdb/executor.gdb
file target/debug/stage2-coroutines
set args --style async
tty /dev/null
set trace-commands on

# The body of `async fn read`, entered on every poll of its future.
break 'stage2_coroutines::async_fetch::read::{async_fn#0}'
run
bt
delete
continue
