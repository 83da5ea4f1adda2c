# `threads-vs-tasks` at its default sizes. Every measured figure becomes a
# placeholder: <bytes> for bytes per item, <n> for a count that depends on
# the machine. The notes are unwrapped, normalised, and wrapped again at the
# program's width, so that a number of another width moves no line break.
target/debug/threads-vs-tasks | awk '
  function flush() {
    if (note == "") return
    gsub(/stopped at [0-9,]+ threads/, "stopped at <n> threads", note)
    gsub(/[0-9,]+ in use/, "<n> in use", note)
    n = split(note, words, " ")
    line = ""
    for (i = 1; i <= n; i++) {
      if (line != "" && length(line) + 1 + length(words[i]) > 88) {
        print line
        line = "  " words[i]
      } else if (line == "") {
        line = words[i]
      } else {
        line = line " " words[i]
      }
    }
    print line
    note = ""
  }
  /^\* / { flush(); note = $0; next }
  /^  / && note != "" { sub(/^  /, ""); note = note " " $0; next }
  { flush() }
  NF == 7 && $1 ~ /^[0-9,]+$/ {
    made = ($2 ~ /\*$/) ? "<n>*" : $2
    printf "%9s  %9s  %10s  %14s  %19s  %8s  %11s\n", $1, made, "<bytes>", "<bytes>", "<bytes>", "<bytes>", "<n>x"
    next
  }
  { print }
  END { flush() }
'
