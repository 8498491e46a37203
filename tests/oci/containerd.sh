#!/bin/bash
# csrun under containerd: a private containerd (own socket, root and state
# under a temporary directory), an OCI image made here from the test rootfs,
# and `ctr run --runc-binary $CSRUN` through containerd's runc shim.  Also
# checks that contrib/containerd/config.toml is a config containerd accepts.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

if ! is_root; then
  skip "containerd" "n/a: containerd tests run as root"
  done_testing
  exit
fi
for tool in containerd ctr zstd; do
  if ! command -v "$tool" >/dev/null; then
    skip "containerd" "$tool is not installed"
    done_testing
    exit
  fi
done

T=$(tmpdir)
CTD_PID=
cleanup_ctd () {
  if [ -n "$CTD_PID" ]; then
    ctr --address "$T/ctd.sock" tasks kill -s KILL c1 >/dev/null 2>&1
    kill "$CTD_PID" 2>/dev/null
    wait "$CTD_PID" 2>/dev/null
    CTD_PID=
  fi
  # containerd's snapshots are overlay mounts under $T/root.
  grep -o " $T/[^ ]*" /proc/self/mountinfo | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
}
trap 'cleanup_ctd; _tap_cleanup' EXIT

# ---------------------------------------------------------------- contrib config
out=$(containerd --config "$CSRUN_SRCDIR/contrib/containerd/config.toml" config dump 2>&1)
if [[ $out == *'runtimes.csrun.options]'* && $out == *'BinaryName = "/usr/local/bin/csrun"'* &&
  $out == *'runtime_type = "io.containerd.runc.v2"'* ]]; then
  ok "contrib/containerd/config.toml: containerd accepts it and registers the csrun handler"
else
  not_ok "contrib/containerd/config.toml is a valid containerd config" "$out"
fi
if python3 - "$CSRUN_SRCDIR/contrib/kubernetes/runtimeclass.yaml" <<'EOF'; then
import sys
try:
    import yaml
except ImportError:
    sys.exit("python3-yaml is not installed")
docs = list(yaml.safe_load_all(open(sys.argv[1])))
rc = docs[0]
assert rc["apiVersion"] == "node.k8s.io/v1" and rc["kind"] == "RuntimeClass", rc
assert rc["handler"] == "csrun" and rc["metadata"]["name"] == "csrun", rc
pod = docs[1]
assert pod["kind"] == "Pod" and pod["spec"]["runtimeClassName"] == "csrun", pod
EOF
  ok "contrib/kubernetes/runtimeclass.yaml: a RuntimeClass with handler csrun, and a pod using it"
else
  not_ok "contrib/kubernetes/runtimeclass.yaml parses with the expected fields"
fi

# ---------------------------------------------------------------- an OCI image
python3 - "$CSRUN_TEST_ROOTFS" "$T/image.tar" <<'EOF' || not_ok "make an OCI image archive"
import hashlib, io, json, subprocess, sys, tarfile, time
rootfs, out = sys.argv[1], sys.argv[2]
layer = subprocess.run(["zstd", "-dc", rootfs], check=True, capture_output=True).stdout
def blob(data):
    return "sha256:" + hashlib.sha256(data).hexdigest(), data
ldig, _ = blob(layer)
config = json.dumps({"architecture": "amd64", "os": "linux",
                     "config": {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
                                "Cmd": ["/usr/bin/python3"]},
                     "rootfs": {"type": "layers", "diff_ids": [ldig]}}).encode()
cdig, _ = blob(config)
manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                       "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                  "digest": cdig, "size": len(config)},
                       "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                                   "digest": ldig, "size": len(layer)}]}).encode()
mdig, _ = blob(manifest)
index = json.dumps({"schemaVersion": 2, "manifests": [
    {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": mdig, "size": len(manifest),
     "annotations": {"org.opencontainers.image.ref.name": "test"}}]}).encode()
with tarfile.open(out, "w") as t:
    def add(name, data):
        i = tarfile.TarInfo(name); i.size = len(data); i.mtime = int(time.time())
        t.addfile(i, io.BytesIO(data))
    add("oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
    add("index.json", index)
    for d, data in ((ldig, layer), (cdig, config), (mdig, manifest)):
        add("blobs/sha256/" + d.split(":")[1], data)
EOF

# ---------------------------------------------------------------- a private containerd
cat >"$T/config.toml" <<EOF
version = 2
root = "$T/root"
state = "$T/state"
[grpc]
  address = "$T/ctd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  disable_tcp_service = true
EOF
containerd --config "$T/config.toml" >"$T/containerd.log" 2>&1 &
CTD_PID=$!
for _ in $(seq 100); do [ -S "$T/ctd.sock" ] && break; sleep 0.1; done
CTR=(ctr --address "$T/ctd.sock")
if ! "${CTR[@]}" images import --base-name localhost/csrun-test "$T/image.tar" >"$T/import.log" 2>&1; then
  not_ok "import the test image into containerd" "$(cat "$T/import.log" "$T/containerd.log" | tail -20)"
  done_testing
  exit
fi
IMG=localhost/csrun-test:test

out=$(timeout 60 "${CTR[@]}" run --rm --runc-binary "$CSRUN" "$IMG" c1 /usr/bin/python3 -c \
  'import os; print("pid", os.getpid(), "answer", 6 * 7)' 2>&1)
rc=$?
if [ "$rc" = 0 ] && [[ $out == *"pid 1 answer 42"* ]]; then
  ok "ctr run --runc-binary csrun: the process runs as pid 1 and its output arrives"
else
  not_ok "ctr run --runc-binary csrun" "exit $rc" "$out" "$(tail -20 "$T/containerd.log")"
fi

out=$(timeout 60 "${CTR[@]}" run --rm --runc-binary "$CSRUN" "$IMG" c1 /usr/bin/python3 -c \
  'raise SystemExit(7)' 2>&1)
rc=$?
if [ "$rc" = 7 ]; then
  ok "the container's exit status passes through containerd (7)"
else
  not_ok "the container's exit status passes through containerd" "exit $rc (want 7)" "$out"
fi

out=$(timeout 60 "${CTR[@]}" run --rm --runc-binary "$CSRUN" --memory-limit 67108864 "$IMG" c1 \
  /usr/bin/python3 -c 'b = bytearray(256 << 20); print(len(b))' 2>&1)
rc=$?
if [ "$rc" = 137 ]; then
  ok "--memory-limit 64 MiB: a 256 MiB allocation is killed (137) in the container's cgroup"
else
  not_ok "--memory-limit is enforced through containerd" "exit $rc (want 137)" "$out"
fi

# A long-running task: exec into it, kill it.
"${CTR[@]}" run -d --runc-binary "$CSRUN" "$IMG" c1 /usr/bin/python3 -c \
  'import time; time.sleep(60)' >"$T/run-d.log" 2>&1
out=$(timeout 30 "${CTR[@]}" tasks exec --exec-id e1 c1 /usr/bin/python3 -c \
  'import os; print("exec sees", len([p for p in os.listdir("/proc") if p.isdigit()]) >= 2)' 2>&1)
rc=$?
if [ "$rc" = 0 ] && [[ $out == *"exec sees True"* ]]; then
  ok "ctr tasks exec: a second process runs in the container's pid namespace"
else
  not_ok "ctr tasks exec" "exit $rc" "$out" "$(cat "$T/run-d.log")"
fi
"${CTR[@]}" tasks kill -s KILL c1 >/dev/null 2>&1
for _ in $(seq 50); do
  "${CTR[@]}" tasks ls 2>/dev/null | grep -q 'c1.*RUNNING' || break
  sleep 0.1
done
if "${CTR[@]}" tasks ls 2>/dev/null | grep -q 'c1.*RUNNING'; then
  not_ok "ctr tasks kill stops the container" "$("${CTR[@]}" tasks ls 2>&1)"
else
  ok "ctr tasks kill -s KILL stops the container"
fi
"${CTR[@]}" tasks rm c1 >/dev/null 2>&1
"${CTR[@]}" containers rm c1 >/dev/null 2>&1
if "${CTR[@]}" containers ls -q 2>/dev/null | grep -q .; then
  not_ok "nothing is left in containerd" "$("${CTR[@]}" containers ls 2>&1)"
else
  ok "the container is gone from containerd after tasks rm and containers rm"
fi

done_testing
