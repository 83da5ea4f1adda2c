# Stage 2's hand-written state machines: the stack inside `Read::poll`. The
# appendix "Stepping Through the Executor in a Debugger" shows its
# transcript. From the repository root:
#
#   cargo build -p stage2-coroutines
#   rust-gdb -batch -x book/gdb/stage2-state-machine.gdb
#
# expect-hit Read::poll: stage2_coroutines::machines::read::\{impl#[0-9]+\}::poll \(

source book/gdb/executor.gdb
file target/debug/stage2-coroutines
set args --style state-machine
tty /dev/null
# gdb names this `poll` after its impl block's index, `{impl#1}::poll`, so
# we break on a line of it instead: the one that asks the socket for data.
python set_line("read_line", "stage2-coroutines/src/machines/read.rs", "stream.poll_read(cx, &mut buf)")
set trace-commands on

break stage2-coroutines/src/machines/read.rs:$read_line
run
bt
p *self.pointer
delete
continue
