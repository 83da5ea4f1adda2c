# A guided session on the stage-3 crawler: a task's first step, the body of
# an async fn, the reactor's dispatch, and what a woken task was waiting on.
# The appendix "Stepping Through the Executor in a Debugger" shows and
# explains its transcript, part by part (the `echo ANCHOR` lines mark the
# parts). From the repository root:
#
#   cargo build -p stage3-crawler
#   rust-gdb -batch -x book/gdb/stage3.gdb
#
# book/gdb/check-session.sh runs it and fails unless every breakpoint named
# on an `expect-hit` line below was hit.
#
# expect-hit Task::step: runtime::task::\{impl#[0-9]+\}::step<
# expect-hit fetch's async fn body: stage3_crawler::crawling::\{impl#[0-9]+\}::fetch::\{async_fn#0\} \(
# expect-hit EventLoop::dispatch: runtime::event_loop::EventLoop::dispatch \(
# expect-hit IoState::on_event: runtime::reactor::IoState::on_event \(
# expect-hit the reactor's wake: runtime::reactor::IoState::wake \(

source book/gdb/executor.gdb
file target/debug/stage3-crawler
# Two workers, parsing on the loop thread, no progress line: few tasks, and
# the same order of events on every run. No robots.txt: its fetch would
# come first, and this session is about a page's. No root: it crawls the
# demo site.
set args --max-tasks 2 --parse-threads 0 --progress never --ignore-robots
# The crawler's report and log would mix with gdb's output.
tty /dev/null
set trace-commands on

# 1. Task::step, for the first task the executor runs: worker 1.
echo ANCHOR: first-step\n
break runtime/src/task.rs:$step_line
run
bt
p self.id
p self.meta.name
p self.state
set print max-depth 1
p *(*future).pointer
set print max-depth 20
echo ANCHOR_END: first-step\n

# 2. Inside the poll that follows: the body of the async fn `fetch`. Its
# name, as gdb spells it (`.` matches the braces). `{impl#3}`: `fetch` is
# in crawling.rs's fourth `impl` block (the file has one per section of
# the book's chapter); `info functions` shows the name if that changes.
echo ANCHOR: async-fn\n
info functions ::fetch::.async_fn#0.$
break 'stage3_crawler::crawling::{impl#3}::fetch::{async_fn#0}'
continue
bt
next
info locals
p url.serialization
delete 2
echo ANCHOR_END: async-fn\n

# 3. Worker 2's first step.
echo ANCHOR: second-worker\n
continue
p self.id
set print max-depth 1
p *(*future).pointer
set print max-depth 20
delete 1
echo ANCHOR_END: second-worker\n

# 4. Both workers wait. The loop asks the OS what is ready and dispatches.
echo ANCHOR: dispatch\n
break runtime::event_loop::EventLoop::dispatch
break runtime::reactor::IoState::on_event
continue
bt
p token
p readiness
continue
p *self
delete 3 4
echo ANCHOR_END: dispatch\n

# 5. An event that does wake a task.
echo ANCHOR: wake\n
break runtime/src/reactor.rs:$wake_line
continue
bt
p self.token
p dir
delete 5
echo ANCHOR_END: wake\n

# 6. The task it woke, just before its next poll: where is it waiting?
# Then let the crawl finish.
echo ANCHOR: woken-task\n
break runtime/src/task.rs:$step_line
continue
p self.id
p self.state
set print max-depth 1
p *(*future).pointer
p (*(*future).pointer).__awaitee
set print max-depth 20
delete
continue
echo ANCHOR_END: woken-task\n
