# `c10k` at its default size, started with the open-files limit of 1,024
# that many systems give a program, so that it has to raise it. The port,
# the time and the memory vary from run to run and become PORT, X.XXs and
# <bytes>; the counts of open descriptors and the machine's hard limit
# become <n>. The program wraps its lines at 88 columns, so
# each wrapped line is joined, normalised, and wrapped again the same way:
# a number of another width then moves no line break.
ulimit -Sn 1024
target/debug/c10k | awk '
  function flush() {
    if (text == "") return
    sub(/127\.0\.0\.1:[0-9]+/, "127.0.0.1:PORT", text)
    sub(/after [0-9]+(\.[0-9]+)?(ns|µs|ms|s),/, "after X.XXs,", text)
    sub(/RSS grew by [0-9,]+ bytes, [0-9,]+ per connection/, "RSS grew by <bytes> bytes, <bytes> per connection", text)
    sub(/[0-9,]+ open file descriptors/, "<n> open file descriptors", text)
    sub(/the hard limit is [0-9,]+\)/, "the hard limit is <n>)", text)
    n = split(text, words, " ")
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
    text = ""
  }
  /^  / { sub(/^  /, ""); text = text " " $0; next }
  { flush(); text = $0 }
  END { flush() }
'
