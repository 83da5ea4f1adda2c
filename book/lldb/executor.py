"""Setup for debugging the runtime with rust-lldb, used by the appendix
"Stepping Through the Executor in a Debugger" (the lldb session, beside
gdb's). The session files next to this one import it:

    command script import book/lldb/executor.py

It adds one command, `break-at FILE TEXT`: a breakpoint on the one line of
FILE that contains TEXT. A generic function such as `Task::step` has one
copy per future type and no single name to break on, so we break on a line;
line numbers move whenever the code above them does, so we find the line
by a piece of code on it, as book/gdb/executor.gdb does for gdb.
"""
import pathlib
import shlex

import lldb


def line_of(path, text):
    """The number of the one line of `path` that contains `text`."""
    lines = pathlib.Path(path).read_text(encoding="utf-8").splitlines()
    found = [n for n, line in enumerate(lines, 1) if text in line]
    if len(found) != 1:
        raise ValueError(
            f"{path}: expected exactly one line containing {text!r}, found {len(found)}; "
            "update book/lldb/ to match the code"
        )
    return found[0]


def break_at(debugger, command, result, internal_dict):
    """break-at FILE TEXT: a breakpoint on the line of FILE holding TEXT."""
    try:
        path, text = shlex.split(command)
        line = line_of(path, text)
    except (ValueError, OSError) as e:
        result.SetError(f"break-at: {e} (start lldb in the repository root)")
        return
    target = debugger.GetSelectedTarget()
    bp = target.BreakpointCreateByLocation(pathlib.Path(path).name, line)
    result.AppendMessage(
        f"Breakpoint {bp.GetID()}: {pathlib.Path(path).name}, the line with {text!r} "
        f"({bp.GetNumLocations()} locations)"
    )


def __lldb_init_module(debugger, internal_dict):
    debugger.HandleCommand(f"command script add -f {__name__}.break_at break-at")
