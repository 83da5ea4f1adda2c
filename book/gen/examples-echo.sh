# `echo`: the server, and two clients that each send a line and read it
# back, the second while the first is still connected. The clients are
# bash's /dev/tcp. The ports vary from run to run: the server's becomes
# PORT, the clients' become PEER1 and PEER2.
set -euo pipefail

session() {
  coproc SERVER { exec target/debug/echo --port 0; }
  trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT
  local banner line reply port
  read -r banner <&"${SERVER[0]}"
  port=${banner##*:}
  echo "$banner"
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  read -r line <&"${SERVER[0]}" && echo "$line"
  exec 4<>"/dev/tcp/127.0.0.1/$port"
  read -r line <&"${SERVER[0]}" && echo "$line"
  printf 'hello from the first\n' >&3
  printf 'and from the second\n' >&4
  read -r reply <&3 && echo "first client got back: $reply"
  read -r reply <&4 && echo "second client got back: $reply"
  exec 3>&-
  read -r line <&"${SERVER[0]}" && echo "$line"
  exec 4>&-
  read -r line <&"${SERVER[0]}" && echo "$line"
}

session | awk '{
  sub(/listening on 127\.0\.0\.1:[0-9]+$/, "listening on 127.0.0.1:PORT")
  # Name the clients in order of appearance.
  if (match($0, /^127\.0\.0\.1:[0-9]+:/)) {
    peer = substr($0, 1, RLENGTH - 1)
    if (!(peer in name)) name[peer] = "127.0.0.1:PEER" (++peers)
    $0 = name[peer] substr($0, RLENGTH)
  }
  print
}'
