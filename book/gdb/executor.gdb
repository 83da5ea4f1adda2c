# Setup for debugging the runtime with rust-gdb, used by the appendix
# "Stepping Through the Executor in a Debugger". From the repository root:
#
#   cargo build -p stage3-crawler
#   rust-gdb -x book/gdb/executor.gdb --args target/debug/stage3-crawler --max-tasks 2
#
# The session files next to this one (stage3.gdb, ...) source it, and
# book/gdb/check-session.sh runs them in CI.

set pagination off
set confirm off

# Never fetch debug info from the network: it is slow, and it would put
# download progress into the transcripts.
python
try:
    gdb.execute("set debuginfod enabled off")
except gdb.error:
    pass  # a gdb without debuginfod support
end

# Generic functions, such as `Task::step` (one copy per future type), cannot
# be named in a `break` command, so we break on their lines. Line numbers
# change whenever the code above them does, so we find each line by a piece
# of code on it, when the session starts, and keep it in a convenience
# variable: `break runtime/src/task.rs:$step_line`.
# ANCHOR: find-lines
python
import pathlib


def line_of(path, text):
    """The number of the one line of `path` that contains `text`."""
    try:
        lines = pathlib.Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise gdb.GdbError(
            f"cannot read {path} ({e.strerror}); start gdb in the repository root"
        )
    found = [n for n, line in enumerate(lines, 1) if text in line]
    if len(found) != 1:
        raise gdb.GdbError(
            f"{path}: expected exactly one line containing {text!r}, found {len(found)}; "
            "update book/gdb/ to match the code"
        )
    return found[0]


def set_line(var, path, text):
    """Sets the convenience variable `$var` to the line of `path` with `text`."""
    gdb.set_convenience_variable(var, line_of(path, text))


# Task::step, just before it polls the future: `self` is the task, and
# `future` its pinned, boxed future.
set_line("step_line", "runtime/src/task.rs", "self.state.set(TaskState::Running);")
# The reactor, at the moment an event wakes the task waiting on a socket.
set_line("wake_line", "runtime/src/reactor.rs", "waker.wake();")
end
# ANCHOR_END: find-lines
