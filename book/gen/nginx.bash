# Shared by the HTTP/2 listings (sourced, not a listing itself): nginx
# (Debian's package, which .ci/test installs) serving a directory on free
# ports of 127.0.0.1, one worker, with an access log of the protocol and
# the connection of each request.
#
#   start_nginx DIR ROOT      serve ROOT; state and logs in DIR; sets
#                             $https (TLS, h2 by ALPN), $h2c (plain, HTTP/2
#                             only), $plain (plain, HTTP/1.1) and $cert
#   flush_nginx_log           returns once every request answered so far
#                             is in DIR/access.log
#   stop_nginx                stops it (the caller's EXIT trap calls it)

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

start_nginx() {
  nginx_dir=$1
  local root=$2
  # nginx's worker runs as nobody when started by root: let it read.
  chmod 755 "$nginx_dir"
  cert=$nginx_dir/cert.pem
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -addext basicConstraints=critical,CA:FALSE \
    -keyout "$nginx_dir/key.pem" -out "$cert" 2>/dev/null
  local https_port h2c_port plain_port
  https_port=$(free_port)
  h2c_port=$(free_port)
  plain_port=$(free_port)
  cat >"$nginx_dir/nginx.conf" <<CONF
daemon on;
worker_processes 1;
pid $nginx_dir/nginx.pid;
error_log $nginx_dir/error.log;
events {}
http {
    include /etc/nginx/mime.types;
    log_format crawl '\$server_protocol \$connection';
    access_log $nginx_dir/access.log crawl;
    client_body_temp_path $nginx_dir/body;
    proxy_temp_path $nginx_dir/proxy;
    fastcgi_temp_path $nginx_dir/fastcgi;
    uwsgi_temp_path $nginx_dir/uwsgi;
    scgi_temp_path $nginx_dir/scgi;
    server {
        listen 127.0.0.1:$https_port ssl http2;
        listen 127.0.0.1:$h2c_port http2;
        listen 127.0.0.1:$plain_port;
        ssl_certificate $cert;
        ssl_certificate_key $nginx_dir/key.pem;
        root $root;
        location = /flush { access_log off; return 204; }
    }
}
CONF
  # As a daemon: when this returns, its sockets listen.
  /usr/sbin/nginx -p "$nginx_dir" -c "$nginx_dir/nginx.conf"
  https=https://127.0.0.1:$https_port
  h2c=http://127.0.0.1:$h2c_port
  plain=http://127.0.0.1:$plain_port
}

# The one worker logs each request in the turn of its loop that sent the
# answer; a request sent after them is answered after every line is
# written.
flush_nginx_log() { curl -s "$plain/flush" >/dev/null; }

stop_nginx() {
  if [ -n "${nginx_dir:-}" ] && [ -f "$nginx_dir/nginx.pid" ]; then
    kill "$(cat "$nginx_dir/nginx.pid")" 2>/dev/null || true
  fi
}
