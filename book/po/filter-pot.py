#!/usr/bin/env python3
"""Drops from a PO template the messages that are code, not prose.

mdbook-xgettext reads the book before `{{#include}}` is expanded (see
book/po/update), so a listing's code never reaches the catalog. What is
left of a listing is its first line, the file it comes from
(`// stage3-crawler/src/crawling.rs`, or `--` in Lua), and an include standing alone as a
paragraph (a generated table); both stay as they are in every language.

Usage: filter-pot.py IN.pot OUT.pot
"""
import re
import sys

CODE = re.compile(r"^((//|--|#) [A-Za-z0-9_.:-]*/[A-Za-z0-9_./:-]+\n|\{\{#include [^}]*\}\})$")


def msgid(block):
    """The unquoted msgid of one entry, or None for the header."""
    text, inside = [], False
    for line in block.split("\n"):
        if line.startswith("msgid "):
            inside = True
            line = line[len("msgid "):]
        elif line.startswith("msgstr"):
            break
        if inside and line.startswith('"'):
            text.append(line[1:-1])
    # PO escapes: only \n, \" and \\ occur in what mdbook-xgettext writes.
    s = "".join(text)
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), s)


def main(src, dst):
    with open(src, encoding="utf-8") as f:
        blocks = f.read().rstrip("\n").split("\n\n")
    kept = [b for b in blocks if not CODE.match(msgid(b) or "")]
    with open(dst, "w", encoding="utf-8") as f:
        f.write("\n\n".join(kept) + "\n")
    print(f"{len(blocks) - len(kept)} code messages dropped, {len(kept) - 1} kept", file=sys.stderr)


if __name__ == "__main__":
    main(*sys.argv[1:])
