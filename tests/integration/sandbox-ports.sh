#!/bin/bash
# csrun sandbox create --publish / --upstream, csrun sandbox port ls (csrun-sandbox(1) PORTS):
# servers in a --net none sandbox reached from the host (a request and its reply, a large
# transfer in each direction checked by digest, half-close, concurrent connections), HOSTPORT 0,
# a port in use, an upstream that reaches its endpoint and nothing else, port ls and inspect,
# stop/start, rm, an open connection as activity for the idle timer, bad input.  Root and
# rootless.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"
. "$CSRUN_SRCDIR/tests/lib/sandbox.sh"
# At the end, nothing of ours stays alive: the host's servers too.
HOSTPIDS=""
sbx_cleanup_hooks+=('for p in $HOSTPIDS; do kill "$p" 2>/dev/null; done')

nsbx () { ls "$SBX" | grep -c '^[0-9a-f]\{32\}$'; }

# The host's side: a small client (and the sandbox's servers, copied in).
cat > "$T/client.py" <<'EOF'
import hashlib, json, os, socket, subprocess, sys, threading, time, urllib.request

def exchange(c, data):
    """On the connection C: send DATA, half-close, read the reply to its end (the digest server)."""
    c.sendall(data)
    c.shutdown(socket.SHUT_WR)
    out = b""
    while True:
        b = c.recv(65536)
        if not b:
            break
        out += b
    c.close()
    return out.decode()

def roundtrip(host, port, data, timeout=60):
    return exchange(socket.create_connection((host, port), timeout=timeout), data)

def want(data):
    return "%s %d\n" % (hashlib.sha256(data).hexdigest(), len(data))

cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "hold-port":
    # A port of the host's 127.0.0.1 held (ARGS[0] "listen": listened on; "bound": only bound,
    # so nothing answers), chosen by the kernel (no race with other programs) and written to
    # ARGS[1] once held.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    if args[0] == "listen":
        s.listen()
    with open(args[1] + ".tmp", "w") as f:
        f.write("%d\n" % s.getsockname()[1])
    os.replace(args[1] + ".tmp", args[1])
    time.sleep(900)
elif cmd == "get":
    sys.stdout.buffer.write(urllib.request.urlopen(args[0], timeout=30).read())
elif cmd == "sha-get":
    body = urllib.request.urlopen(args[0], timeout=120).read()
    print(hashlib.sha256(body).hexdigest(), len(body))
elif cmd == "ping":
    try:
        sys.exit(0 if roundtrip(args[0], int(args[1]), b"ping", 5) == want(b"ping") else 1)
    except OSError:
        sys.exit(1)
elif cmd == "upload":
    data = os.urandom(int(args[2]))
    got = roundtrip(args[0], int(args[1]), data)
    print("ok" if got == want(data) else "mismatch: %r, want %r" % (got, want(data)))
elif cmd == "concurrent":
    # N connections open at once (the keeper counts them, at most CAP: port ls), then each
    # sends SIZE bytes, half-closes and checks the digest it gets back.
    host, port, n, cap, size, idx, ls = args[0], int(args[1]), int(args[2]), int(args[3]), int(args[4]), int(args[5]), args[6:]
    conns = [socket.create_connection((host, port), timeout=60) for _ in range(n)]
    seen, deadline = -1, time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            seen = json.loads(subprocess.run(ls, capture_output=True, text=True).stdout)["ports"][idx]["connections"]
        except (ValueError, KeyError, IndexError):
            pass
        if seen == min(n, cap):
            break
        time.sleep(0.2)
    good = []
    def work(c):
        data = os.urandom(size)
        good.append(exchange(c, data) == want(data))
    ts = [threading.Thread(target=work, args=(c,)) for c in conns]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("keeper saw %d at once; %d of %d digests right" % (seen, good.count(True), n))
elif cmd == "hold":
    # An open connection to the digest server (which waits for the end): how it ends.
    c = socket.create_connection((args[0], int(args[1])), timeout=10)
    c.sendall(b"x")
    c.settimeout(float(args[2]))
    print("open", flush=True)
    try:
        print("ended" if not c.recv(100) else "data", flush=True)
    except socket.timeout:
        print("held", flush=True)
    except ConnectionError:
        print("ended", flush=True)
elif cmd == "probe":
    # refused (nothing listens), closed (accepted and ended at once), open (no end in 10 s)
    try:
        c = socket.create_connection((args[0], int(args[1])), timeout=10)
    except ConnectionRefusedError:
        print("refused")
        sys.exit()
    except ConnectionError:
        # Ended before connect() returned (a reset right after the handshake).
        print("closed")
        sys.exit()
    c.settimeout(10)
    try:
        print("closed" if not c.recv(1) else "data")
    except socket.timeout:
        print("open")
    except ConnectionError:
        print("closed")
elif cmd == "bindable":
    # As a server would (SO_REUSEADDR: the ended connections' TIME_WAIT doesn't count).
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", int(args[0])))
        print("free")
    except OSError as e:
        print("busy", e)
EOF
client () { python3 "$T/client.py" "$@"; }

cat > "$T/srv.py" <<'EOF'
# The digest server: reads a connection to its end, answers "SHA256 LENGTH\n", closes.
import hashlib, socket, sys, threading
threading.stack_size(1 << 18)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(128)
def handle(c):
    h, n = hashlib.sha256(), 0
    with c:
        while True:
            b = c.recv(65536)
            if not b:
                break
            h.update(b)
            n += len(b)
        c.sendall(("%s %d\n" % (h.hexdigest(), n)).encode())
while True:
    c = s.accept()[0]
    threading.Thread(target=handle, args=(c,), daemon=True).start()
EOF

# servers ID: the digest server on 9000 and http.server on 8000 (serving /work), in the
# background (each an exec that lives until stop or rm).
servers () {
  csrun sandbox exec "$1" -- python3 -c 'import sys; open("/work/srv.py", "w").write(sys.argv[1])' "$(cat "$T/srv.py")" \
    && { csrun sandbox exec "$1" -- python3 /work/srv.py 9000 >> "$T/srv.log" 2>&1 & } \
    && { csrun sandbox exec "$1" -- python3 -m http.server 8000 --bind 127.0.0.1 --directory /work >> "$T/http.log" 2>&1 & }
}

# ---------------------------------------------------------------- --publish, HOSTPORT 0
csrun sandbox create --name pub --json --pids 0 --publish 0:8000 --publish 127.0.0.1:0:9000 > "$T/c.json" 2>"$T/c.err"
rc=$?
id=$(jget "$T/c.json" 'j["id"]')
HP8=$(jget "$T/c.json" 'j["ports"][0]["host_port"]')
HP9=$(jget "$T/c.json" 'j["ports"][1]["host_port"]')
got=$(jget "$T/c.json" '[(p["type"], p["host_ip"], p["host_port_asked"], p["port"], p["host_url"] == "tcp://127.0.0.1:%d" % p["host_port"], p["sandbox_url"]) for p in j["ports"]]')
[ $rc = 0 ] && [ "$HP8" -gt 0 ] 2>/dev/null && [ "$HP9" -gt 0 ] && [ "$HP8" != "$HP9" ] \
  && [ "$got" = "[('publish', '127.0.0.1', 0, 8000, True, 'tcp://127.0.0.1:8000'), ('publish', '127.0.0.1', 0, 9000, True, 'tcp://127.0.0.1:9000')]" ] \
  && ok "create --publish 0:PORT: a free host port is chosen and reported (create --json)" \
  || not_ok "create --publish" "exit $rc" "$got" "$(cat "$T/c.json" "$T/c.err")"

client probe 127.0.0.1 "$HP9" > "$T/p0" 2>&1
[ "$(cat "$T/p0")" = closed ] && ok "no server in the sandbox yet: a connection is accepted and ended at once (no hang)" \
  || not_ok "no server" "$(cat "$T/p0")" "$(cat "$SBX/$id/keeper.log")"

servers "$id"
csrun sandbox exec pub -- python3 -c '
import hashlib, os
open("/work/hello.txt", "w").write("hello from the sandbox\n")
data = os.urandom(32 << 20)
open("/work/big.bin", "wb").write(data)
print(hashlib.sha256(data).hexdigest(), len(data))' > "$T/big.sha" 2>&1
wait_until 30 client ping 127.0.0.1 "$HP9"
wait_until 30 client get "http://127.0.0.1:$HP8/hello.txt" > /dev/null 2>&1
out=$(client get "http://127.0.0.1:$HP8/hello.txt" 2>&1)
[ "$out" = "hello from the sandbox" ] && ok "--publish: an HTTP request from the host reaches http.server in a --net none sandbox, and its reply comes back" \
  || not_ok "publish http" "$out" "$(cat "$T/http.log" "$SBX/$id/keeper.log")"

got=$(client sha-get "http://127.0.0.1:$HP8/big.bin" 2>&1)
[ -n "$got" ] && [ "$got" = "$(cat "$T/big.sha")" ] && ok "a 32 MiB download through the forward: same sha256 and length" \
  || not_ok "download" "$got" "$(cat "$T/big.sha")"
out=$(client upload 127.0.0.1 "$HP9" $((24 << 20)) 2>&1)
[ "$out" = ok ] && ok "a 24 MiB upload, then half-close: the server sees the end, its digest comes back" \
  || not_ok "upload" "$out"

out=$(client concurrent 127.0.0.1 "$HP9" 20 256 $((1 << 20)) 1 "$CSRUN" sandbox port ls pub --json 2>&1)
[ "$out" = "keeper saw 20 at once; 20 of 20 digests right" ] && ok "20 concurrent connections (1 MiB in, its digest out, each): all right" \
  || not_ok "concurrent" "$out"
# More than the keeper forwards at once (256): the rest wait in the backlog, then go through.
out=$(client concurrent 127.0.0.1 "$HP9" 300 256 1000 1 "$CSRUN" sandbox port ls pub --json 2>&1)
[ "$out" = "keeper saw 256 at once; 300 of 300 digests right" ] \
  && ok "300 connections at once: 256 forwarded at a time (the cap), the others wait, all 300 right" \
  || not_ok "over the cap" "$out" "$(tail -5 "$SBX/$id/keeper.log")"

# ---------------------------------------------------------------- port ls, inspect
csrun sandbox port ls pub --json > "$T/ls.json" 2>&1
got=$(jget "$T/ls.json" '(j["id"], j["live"], [(p["type"], p["host_url"], p["sandbox_url"], p["connections"]) for p in j["ports"]])')
want="('$id', True, [('publish', 'tcp://127.0.0.1:$HP8', 'tcp://127.0.0.1:8000', 0), ('publish', 'tcp://127.0.0.1:$HP9', 'tcp://127.0.0.1:9000', 0)])"
[ "$got" = "$want" ] && ok "port ls --json: the host's and the sandbox's URLs, live, no connection left open" \
  || not_ok "port ls --json" "$got" "want $want"
out=$(csrun sandbox port ls "$id" 2>&1)
echo "$out" | grep -q "^publish  *tcp://127.0.0.1:$HP8  *tcp://127.0.0.1:8000 " && echo "$out" | grep -q "^TYPE  *HOST  *SANDBOX" \
  && ok "port ls: a table of the URLs" || not_ok "port ls" "$out"
csrun sandbox inspect pub > "$T/in.json" 2>&1
got=$(jget "$T/in.json" '[(p["host_port"], p["port"], p["host_url"]) for p in j["ports"]]')
[ "$got" = "[($HP8, 8000, 'tcp://127.0.0.1:$HP8'), ($HP9, 9000, 'tcp://127.0.0.1:$HP9')]" ] \
  && [ "$(jget "$SBX/$id/spec.json" '[p["host_port"] for p in j["ports"]]')" = "[$HP8, $HP9]" ] \
  && ok "inspect and spec.json have the ports bound" || not_ok "inspect ports" "$got" "$(cat "$T/in.json")"
out=$(csrun sandbox port ls nosuchbox 2>&1)
rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "no such sandbox" && ok "port ls of an unknown sandbox: exit 2" || not_ok "port ls unknown" "exit $rc" "$out"

# ---------------------------------------------------------------- stop, start
client hold 127.0.0.1 "$HP9" 60 > "$T/hold" 2>&1 &
hold=$!
wait_until 20 grep -q open "$T/hold"
csrun sandbox stop pub > /dev/null 2>&1
rc=$?
wait_until 20 grep -q ended "$T/hold"
[ $rc = 0 ] && [ "$(cat "$T/hold")" = "open
ended" ] && ok "stop ends a forwarded connection that was open" || not_ok "stop ends connections" "exit $rc" "$(cat "$T/hold")"
wait "$hold" 2>/dev/null
out=$(client probe 127.0.0.1 "$HP9" 2>&1)
live=$(csrun sandbox port ls pub --json 2>&1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["live"])' 2>&1)
[ "$out" = closed ] && [ "$live" = False ] && ok "stopped: the host port stays bound, a connection is closed at once; port ls says not live" \
  || not_ok "stopped" "$out" "$live"
csrun sandbox start pub > /dev/null 2>&1
rc=$?
servers "$id"
wait_until 30 client ping 127.0.0.1 "$HP9"
wait_until 30 client get "http://127.0.0.1:$HP8/hello.txt" > /dev/null 2>&1
out=$(client get "http://127.0.0.1:$HP8/hello.txt" 2>&1)
up=$(client upload 127.0.0.1 "$HP9" $((1 << 20)) 2>&1)
[ $rc = 0 ] && [ "$out" = "hello from the sandbox" ] && [ "$up" = ok ] \
  && ok "start: the same host ports forward to the new jail (new sockets in its namespace)" \
  || not_ok "start" "exit $rc" "$out" "$up" "$(tail -5 "$SBX/$id/keeper.log")"

# ---------------------------------------------------------------- a port in use, bad input
before=$(nsbx)
cgparents=$(jget "$T/in.json" '" ".join(sorted(set(__import__("os").path.dirname(d) for d in ([j["cgroup"]["v2"]] if "v2" in j["cgroup"] else []) + j["cgroup"]["v1"])))')
cgcount () { local n=0 d; for d in $cgparents; do n=$((n + $(ls "$d" 2>/dev/null | grep -c '^[0-9a-f]\{32\}$'))); done; echo $n; }
cgbefore=$(cgcount)
out=$(csrun sandbox create --publish 0:7000 --publish "$HP8:8000" 2>&1)
rc=$?
[ $rc = 125 ] && [ "$out" = "csrun sandbox create: --publish 127.0.0.1:$HP8:8000: host port $HP8 is in use (on 127.0.0.1)" ] \
  && [ "$(nsbx)" = "$before" ] && [ "$(cgcount)" = "$cgbefore" ] \
  && ok "a host port in use: exit 125, one error naming the port, nothing left (state dir, cgroup)" \
  || not_ok "port in use" "exit $rc" "$out" "$(ls "$SBX")"
out=$(client bindable "$HP8" 2>&1)
[ "$out" != free ] && client ping 127.0.0.1 "$HP9" \
  && ok "the failed create left the other sandbox's ports alone" || not_ok "other sandbox" "$out"

# A port some other program of the host listens on.
# (python3 itself in the background, so that $! is its pid; its output not on the TAP stream.)
python3 "$T/client.py" hold-port listen "$T/foreign.port" > /dev/null 2>&1 &
HOSTPIDS="$HOSTPIDS $!"
wait_until 60 test -s "$T/foreign.port" || diag "the other program did not start"
FOREIGN=$(cat "$T/foreign.port")
out=$(csrun sandbox create --publish "$FOREIGN:8000" 2>&1)
rc=$?
[ $rc = 125 ] && echo "$out" | grep -q "host port $FOREIGN is in use" && [ "$(nsbx)" = "$before" ] \
  && ok "a port another program listens on: the same clear error, nothing left" || not_ok "foreign port" "exit $rc" "$out"

for bad in "abc" "80" "70000:80" "8080:0" "1.2.3:80:80" "::1:80:80" "localhost:80:80" "[::1]80:80"; do
  out=$(csrun sandbox create --publish "$bad" 2>&1)
  rc=$?
  [ $rc = 2 ] && echo "$out" | grep -qF -- "--publish '$bad'" || { not_ok "--publish '$bad': exit 2 naming it" "exit $rc" "$out"; continue; }
done
for bad in "80:host" "0:127.0.0.1:80" "80:127.0.0.1:0" "80:a b:80" "80::1:80"; do
  out=$(csrun sandbox create --upstream "$bad" 2>&1)
  rc=$?
  [ $rc = 2 ] && echo "$out" | grep -qF -- "--upstream '$bad'" || not_ok "--upstream '$bad': exit 2 naming it" "exit $rc" "$out"
done
[ "$(nsbx)" = "$before" ] && ok "malformed --publish and --upstream: exit 2, the option named, nothing made" || not_ok "bad specs left something" "$(ls "$SBX")"

out=$(csrun sandbox create --net host --allow-host-net --publish 0:80 2>&1)
rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "need --net none" && [ "$(nsbx)" = "$before" ] \
  && ok "--net host with --publish: refused (exit 2), the sandbox would use the host's ports itself" || not_ok "net host" "exit $rc" "$out"
out=$(csrun sandbox create --upstream 5000:127.0.0.1:80 --upstream 5000:127.0.0.1:81 2>&1)
rc=$?
out2=$(csrun sandbox create --publish 0:5000 --upstream 5000:127.0.0.1:81 2>&1)
rc2=$?
[ $rc = 2 ] && [ $rc2 = 2 ] && echo "$out" | grep -q "used twice" && echo "$out2" | grep -q "both published and an --upstream" \
  && ok "a sandbox port used twice: exit 2" || not_ok "duplicates" "$rc: $out" "$rc2: $out2"
out=$(csrun sandbox create --publish 0.0.0.0:0:8000 2>&1)
rc=$?
[ $rc = 2 ] && echo "$out" | grep -q -- "--allow-all-interfaces" && [ "$(nsbx)" = "$before" ] \
  && ok "--publish on 0.0.0.0 without --allow-all-interfaces: refused (exit 2)" || not_ok "0.0.0.0" "exit $rc" "$out"
id0=$(csrun sandbox create --publish 0.0.0.0:0:8000 --allow-all-interfaces 2>"$T/c0.err")
rc=$?
csrun sandbox port ls "$id0" --json > "$T/ls0.json" 2>&1
got=$(jget "$T/ls0.json" '(j["ports"][0]["host_ip"], j["ports"][0]["host_url"].startswith("tcp://0.0.0.0:"))')
p0=$(jget "$T/ls0.json" 'j["ports"][0]["host_port"]')
[ $rc = 0 ] && [ "$got" = "('0.0.0.0', True)" ] && [ "$(client probe 127.0.0.1 "$p0")" = closed ] \
  && ok "--publish 0.0.0.0:0:PORT --allow-all-interfaces: bound on every interface" || not_ok "0.0.0.0 allowed" "exit $rc" "$got" "$(cat "$T/c0.err")"
csrun sandbox rm --force "$id0" > /dev/null 2>&1

if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
  id6=$(csrun sandbox create --json --publish '[::1]:0:9000' 2>"$T/c6.err" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["id"], j["ports"][0]["host_port"], j["ports"][0]["host_url"])')
  set -- $id6
  csrun sandbox exec "$1" -- python3 -c 'import sys; open("/work/srv.py", "w").write(sys.argv[1])' "$(cat "$T/srv.py")" > /dev/null 2>&1
  { csrun sandbox exec "$1" -- python3 /work/srv.py 9000 > /dev/null 2>&1 & }
  wait_until 30 client ping ::1 "$2"
  [ "${3:-}" = "tcp://[::1]:$2" ] && client ping ::1 "$2" && ok "--publish [::1]:0:PORT: an IPv6 host address" \
    || not_ok "ipv6" "$id6" "$(cat "$T/c6.err")"
  csrun sandbox rm --force "$1" > /dev/null 2>&1
else
  skip "--publish [::1]:0:PORT" "this host has no IPv6 loopback"
fi

# ---------------------------------------------------------------- --upstream
mkdir -p "$T/www"
echo "from the host" > "$T/www/f.txt"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$T/www" > "$T/up.log" 2>&1 &
HOSTPIDS="$HOSTPIDS $!"
python3 "$T/client.py" hold-port bound "$T/dead.port" > /dev/null 2>&1 &
HOSTPIDS="$HOSTPIDS $!"
wait_until 60 grep -q "port [0-9]" "$T/up.log" || diag "the host's http.server did not start: $(cat "$T/up.log")"
wait_until 60 test -s "$T/dead.port" || diag "the held port did not come"
UP=$(sed -n 's/.* port \([0-9][0-9]*\) .*/\1/p' "$T/up.log" | head -1)
DEAD=$(cat "$T/dead.port")
wait_until 30 client get "http://127.0.0.1:$UP/f.txt" > /dev/null 2>&1
idu=$(csrun sandbox create --name up --upstream "7000:127.0.0.1:$UP" --upstream "7001:127.0.0.1:$DEAD" 2>"$T/cu.err")
rc=$?
cat > "$T/inside.py" <<'EOF'
import socket, sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:7000/f.txt", timeout=20).read().decode().strip())
def attempt(host, port):
    try:
        c = socket.create_connection((host, port), timeout=5)
    except OSError as e:
        return type(e).__name__
    c.settimeout(10)
    try:
        return "closed" if not c.recv(1) else "data"
    except socket.timeout:
        return "open"
    except OSError as e:
        return type(e).__name__
# The endpoint's real port, another host listener (the published port of the other sandbox),
# the host's other address: nothing but the upstream.
print(attempt("127.0.0.1", int(sys.argv[1])), attempt("127.0.0.1", int(sys.argv[2])))
print(attempt(sys.argv[3], int(sys.argv[1])) if sys.argv[3] else "no-address")
# An upstream whose endpoint is down: accepted inside, then ended at once.
print(attempt("127.0.0.1", 7001))
EOF
hostip=$(hostname -I 2>/dev/null | awk '{print $1}')
out=$(csrun sandbox exec up -- python3 -c "$(cat "$T/inside.py")" "$UP" "$HP9" "$hostip" 2>&1)
line1=$(echo "$out" | sed -n 1p)
line2=$(echo "$out" | sed -n 2p)
line3=$(echo "$out" | sed -n 3p)
line4=$(echo "$out" | sed -n 4p)
[ $rc = 0 ] && [ "$line1" = "from the host" ] && ok "--upstream: the sandbox reaches the host's endpoint at its own 127.0.0.1:7000" \
  || not_ok "upstream" "exit $rc" "$out" "$(cat "$T/cu.err")" "$(cat "$SBX/$idu/keeper.log" 2>&1)"
[ "$line2" = "ConnectionRefusedError ConnectionRefusedError" ] && { [ "$line3" = no-address ] || [ "${line3%Error}" != "$line3" ]; } \
  && ok "--upstream: nothing else of the host is reachable (its real port, another host listener, its address: $line3)" \
  || not_ok "upstream only" "$out"
# (closed: the end read; a reset or a broken pipe: the end came before connect() returned.)
case $line4 in closed | ConnectionResetError | BrokenPipeError) true ;; *) false ;; esac && ok "an upstream whose endpoint is down: the connection inside ends at once ($line4)" \
  || not_ok "upstream down" "$out"
csrun sandbox port ls up --json > "$T/lsu.json" 2>&1
got=$(jget "$T/lsu.json" '[(p["type"], p["host"], p["host_port"], p["port"], p["host_url"], p["sandbox_url"]) for p in j["ports"]]')
[ "$got" = "[('upstream', '127.0.0.1', $UP, 7000, 'tcp://127.0.0.1:$UP', 'tcp://127.0.0.1:7000'), ('upstream', '127.0.0.1', $DEAD, 7001, 'tcp://127.0.0.1:$DEAD', 'tcp://127.0.0.1:7001')]" ] \
  && ok "port ls --json of upstreams: the endpoint and the sandbox's URL" || not_ok "port ls upstream" "$got"
csrun sandbox stop up > /dev/null 2>&1 && csrun sandbox start up > /dev/null 2>&1
out=$(csrun sandbox exec up -- python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:7000/f.txt", timeout=20).read().decode().strip())' 2>&1)
[ "$out" = "from the host" ] && ok "--upstream after stop/start: a new listener in the new jail" || not_ok "upstream restart" "$out"
out=$(csrun sandbox create --upstream 7000:no-such-host.invalid:80 2>&1)
rc=$?
[ $rc = 125 ] && echo "$out" | grep -q "no-such-host.invalid" && [ "$(nsbx)" = "$((before + 1))" ] \
  && ok "an --upstream host that does not resolve: exit 125 naming it, nothing left" || not_ok "unresolvable" "exit $rc" "$out"

# ---------------------------------------------------------------- idle timer, rm
# A server that outlives its exec (so no exec keeps the sandbox busy), and a connection held
# open for three idle timeouts: the connection is activity.
idi=$(csrun sandbox create --idle-timeout 4s --json --publish 0:9000 2>"$T/ci.err" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["id"], j["ports"][0]["host_port"])')
set -- $idi
csrun sandbox exec "$1" -- python3 -c 'import sys; open("/work/srv.py", "w").write(sys.argv[1])' "$(cat "$T/srv.py")" > /dev/null 2>&1
csrun sandbox exec "$1" --sh 'python3 /work/srv.py 9000 < /dev/null > /dev/null 2>&1 &' > /dev/null 2>&1
wait_until 20 client ping 127.0.0.1 "$2"
client hold 127.0.0.1 "$2" 12 > "$T/hold2" 2>&1
still=no
[ -d "$SBX/$1" ] && still=yes
[ "$(cat "$T/hold2")" = "open
held" ] && [ $still = yes ] && ok "an open forwarded connection is activity: held for 12 s, the 4 s idle timeout did not fire" \
  || not_ok "connection as activity" "$(cat "$T/hold2")" "still there: $still" "$(cat "$SBX/$1/keeper.log" 2>&1)"
wait_until 60 no_dir "$SBX/$1" && ok "once it closed, the idle timeout removed the sandbox" || not_ok "idle after close" "$(ls "$SBX")"

csrun sandbox rm --force pub > /dev/null 2>&1
rc=$?
[ $rc = 0 ] && [ "$(client probe 127.0.0.1 "$HP8")" = refused ] && [ "$(client bindable "$HP9")" = free ] \
  && ok "rm closes the host ports (refused, free to bind again)" || not_ok "rm" "exit $rc" "$(client probe 127.0.0.1 "$HP8")"

done_testing
