// tests/mcp/client.mjs — drive `csrun mcp` with the official MCP TypeScript SDK
// (Client + StdioClientTransport), for tests/integration/mcp.sh.
//
//   node tests/mcp/client.mjs CSRUN SHARED_DIR [csrun mcp options...]
//
// SHARED_DIR is mounted read-write at /work/shared in every jail (the
// options must say so): the calls meet there to prove they run at the same
// time, and leave markers that show whether a cancelled jail went on.
// Prints one JSON line per check: {"ok": bool, "desc": ..., "details": ...}.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';

const [csrun, shared, ...serverArgs] = process.argv.slice(2);
const results = [];
function report (ok, desc, details = '') {
  const line = JSON.stringify ({ ok: !!ok, desc, details: String (details).slice (0, 3000) });
  process.stdout.write (line + '\n');
  results.push (ok);
}
const sleep = (ms) => new Promise ((r) => setTimeout (r, ms));
async function waitFor (pred, ms) {
  const end = Date.now () + ms;
  while (Date.now () < end) {
    if (await pred ()) return true;
    await sleep (100);
  }
  return false;
}
const text = (r) => (r && r.content && r.content[0] && r.content[0].text) || '';

// The processes below PID (from /proc).
function descendants (pid) {
  const kids = new Map ();
  for (const d of readdirSync ('/proc')) {
    if (!/^\d+$/.test (d)) continue;
    let stat;
    try { stat = readFileSync (`/proc/${d}/stat`, 'utf8'); } catch { continue; }
    const ppid = Number (stat.slice (stat.lastIndexOf (')') + 2).split (' ')[1]);
    if (!kids.has (ppid)) kids.set (ppid, []);
    kids.get (ppid).push (Number (d));
  }
  const out = [];
  const todo = [pid];
  while (todo.length) {
    for (const k of kids.get (todo.pop ()) || []) { out.push (k); todo.push (k); }
  }
  return out;
}

const env = {};
for (const k of ['PATH', 'HOME', 'USER', 'LOGNAME', 'XDG_RUNTIME_DIR', 'CSRUN_CACHE_DIR',
                 'CSRUN_ROOTFS', 'CSRUN_SANDBOX_DIR', 'CSRUN_CHECKPOINT_DIR', 'TMPDIR'])
  if (process.env[k] !== undefined) env[k] = process.env[k];
const transport = new StdioClientTransport ({ command: csrun, args: ['mcp', ...serverArgs],
                                              env, stderr: 'pipe' });
let stderr = '';
transport.stderr.on ('data', (d) => { stderr += d; });
const client = new Client ({ name: 'csrun-test', version: '1.0.0' });

async function step (desc, fn) {
  try {
    await fn ();
  } catch (e) {
    report (false, desc, `threw: ${e && e.stack || e}`);
  }
}

await step ('initialize: the SDK connects (version negotiation, initialized)', async () => {
  await client.connect (transport);
  const v = client.getServerVersion ();
  const caps = client.getServerCapabilities ();
  report (v && v.name === 'csrun' && caps && caps.tools && client.getInstructions (),
          'initialize: serverInfo csrun, the tools capability, instructions',
          JSON.stringify ({ v, caps }));
});

await step ('ping', async () => {
  const r = await client.ping ();
  report (r && typeof r === 'object', 'ping answers {}', JSON.stringify (r));
});

await step ('tools/list', async () => {
  const { tools } = await client.listTools ();
  const names = tools.map ((t) => t.name).sort ().join (',');
  const py = tools.find ((t) => t.name === 'execute_python_code');
  const rd = tools.find ((t) => t.name === 'sandbox_read_file');
  const wr = tools.find ((t) => t.name === 'sandbox_write_file');
  const run = tools.find ((t) => t.name === 'sandbox_run');
  const ck = tools.find ((t) => t.name === 'sandbox_checkpoint');
  const rs = tools.find ((t) => t.name === 'sandbox_restore');
  report (names === 'execute_python_code,sandbox_checkpoint,sandbox_create,sandbox_exec,'
          + 'sandbox_list_files,sandbox_read_file,sandbox_restore,sandbox_run,sandbox_terminate,'
          + 'sandbox_write_file'
          && run.inputSchema.required.join () === 'sandbox,code'
          && run.inputSchema.properties.session.type === 'string'
          && run.outputSchema.required.includes ('status')
          && ck.inputSchema.properties.leave_running.type === 'boolean'
          && ck.outputSchema.required.includes ('id')
          && rs.inputSchema.required.join () === 'checkpoint' && rs.outputSchema.required.includes ('id')
          && py.inputSchema.required.join () === 'code' && py.outputSchema
          && py.outputSchema.required.includes ('status') && py.annotations && py.title
          && rd.annotations.readOnlyHint === true && rd.outputSchema.required.includes ('encoding')
          && rd.inputSchema.properties.max_bytes.maximum === 131072
          && wr.annotations.readOnlyHint === false && wr.inputSchema.properties.content_base64,
          'tools/list: the ten tools, execute_python_code with inputSchema (code required), '
          + 'outputSchema, title and annotations; the file tools\', sandbox_run\'s, '
          + 'sandbox_checkpoint\'s and sandbox_restore\'s schemas and hints', names);
});

await step ('a healing case', async () => {
  const r = await client.callTool ({ name: 'execute_python_code',
                                     arguments: { code: 'print(math.sqrt(16))\n' } });
  const s = r.structuredContent;
  report (text (r) === '4.0' && r.isError === false && s && s.status === 'healed'
          && s.attempts.length === 2 && /import math/.test (s.final_code)
          && s.attempts[0].reused_jail === undefined && s.attempts[1].reused_jail === true,
          'a healing case: text "4.0", isError false, structuredContent healed in 2 attempts '
          + '(validated by the SDK against outputSchema), the fix in the jail of the blocked '
          + 'attempt (reused_jail)', JSON.stringify (r).slice (0, 1500));
});

await step ('a blocked case', async () => {
  const r = await client.callTool ({ name: 'execute_python_code',
                                     arguments: { code: 'import os\nos.system("id")\n' } });
  const t = text (r);
  report (r.isError === true && r.structuredContent.status === 'blocked'
          && t.startsWith ('The Python script did not execute successfully.\n')
          && /^error_type: StaticSafetyViolation$/m.test (t) && /^root_cause_line: 2$/m.test (t)
          && /^message: dangerous-call: os\.system/m.test (t) && /^stderr: csrun gate:/m.test (t),
          'a blocked case: isError, status blocked, CodeShield\'s lines (error_type, '
          + 'root_cause_line, message, stderr)', t);
});

await step ('a timeout', async () => {
  const r = await client.callTool ({ name: 'execute_python_code',
                                     arguments: { code: 'while True:\n    pass\n', timeout: 1 } });
  const t = text (r);
  report (r.isError === true && r.structuredContent.status === 'timeout'
          && /^timed_out: true$/m.test (t) && /^error_type: Timeout$/m.test (t)
          && r.structuredContent.limits.timeout_s === 1,
          'a timeout: isError, status timeout, "timed_out: true", the call\'s timeout (1 s) applied',
          t + ' ' + JSON.stringify (r.structuredContent.limits));
});

await step ('progress', async () => {
  const seen = [];
  const r = await client.callTool (
      { name: 'execute_python_code', arguments: { code: 'import time\ntime.sleep(2.5)\nprint("slept")\n' } },
      undefined, { onprogress: (p) => seen.push (p) });
  const grows = seen.every ((p, i) => i === 0 || p.progress > seen[i - 1].progress);
  report (text (r) === 'slept' && seen.length >= 1 && grows && seen.every ((p) => p.message),
          'progress: a call with a progressToken gets notifications/progress (growing, with '
          + 'a message) before its result', JSON.stringify (seen));
});

await step ('invalid arguments', async () => {
  const r = await client.callTool ({ name: 'execute_python_code', arguments: { code: 5 } });
  report (r.isError === true && /arguments\.code: expected a string, got a number/.test (text (r)),
          'invalid arguments (2025-11-25, SEP-1303): a tool error naming arguments.code',
          JSON.stringify (r));
  let err = null;
  try {
    await client.callTool ({ name: 'no_such_tool', arguments: {} });
  } catch (e) { err = e; }
  report (err && err.code === -32602 && /unknown tool 'no_such_tool'/.test (err.message),
          'an unknown tool: JSON-RPC error -32602 naming it', err && `${err.code} ${err.message}`);
});

await step ('files', async () => {
  const r = await client.callTool ({ name: 'execute_python_code', arguments: {
    code: 'import csv\nrows = list(csv.reader(open("data/in.csv")))\n'
        + 'print(len(rows), open("/tmp/b.bin", "rb").read())\n',
    files: [{ path: 'data/in.csv', content: 'a,b\n1,2\n' },
            { path: '/tmp/b.bin', content: Buffer.from ([0, 255, 10]).toString ('base64'),
              encoding: 'base64' }] } });
  report (text (r) === "2 b'\\x00\\xff\\n'" && !r.isError,
          'files: a text file below /work and a base64 one in /tmp reach the jail', text (r));
});

await step ('a 5 MiB output', async () => {
  const r = await client.callTool ({ name: 'execute_python_code', arguments: {
    code: 'import sys\nsys.stdout.write("x" * (5 << 20) + "\\n")\nprint("THE END")\n' } });
  const t = text (r);
  const size = JSON.stringify (r).length;
  const a = r.structuredContent.attempts[0];
  report (!r.isError && t.startsWith ('xxxx') && t.endsWith ('THE END')
          && /\[\.\.\. csrun: \d+ bytes dropped \.\.\.\]/.test (t) && size < 1024 * 1024
          && a.stdout_truncated === true && a.stdout_dropped_bytes > 5000000,
          `a 5 MiB output: the result is ${size} bytes (< 1 MiB), head and tail kept with the `
          + 'dropped-bytes marker', `${size} ${t.slice (0, 80)}...${t.slice (-80)}`);
});

await step ('concurrent calls', async () => {
  const code = (i) => `import os, time\nopen("/work/shared/meet-${i}", "w").close()\n`
      + 'deadline = time.time() + 50\n'
      + 'while time.time() < deadline and len([f for f in os.listdir("/work/shared") '
      + 'if f.startswith("meet-")]) < 4:\n    time.sleep(0.05)\n'
      + 'print("met", len([f for f in os.listdir("/work/shared") if f.startswith("meet-")]))\n';
  const rs = await Promise.all ([0, 1, 2, 3].map ((i) => client.callTool (
      { name: 'execute_python_code', arguments: { code: code (i), timeout: 55 } },
      undefined, { timeout: 120000 })));
  report (rs.every ((r) => text (r) === 'met 4'),
          'concurrent calls: 4 calls run at the same time (each waits in its own jail until all '
          + '4 have started)', rs.map (text).join (' | '));
});

await step ('cancellation', async () => {
  const ac = new AbortController ();
  const a = client.callTool ({ name: 'execute_python_code', arguments: {
    code: 'import time\nopen("/work/shared/a-started", "w").close()\ntime.sleep(3)\n'
        + 'open("/work/shared/a-survived", "w").close()\nprint("A")\n', timeout: 30 } },
    undefined, { signal: ac.signal });
  const b = client.callTool ({ name: 'execute_python_code', arguments: {
    code: 'import time\ntime.sleep(5)\nprint("B done")\n', timeout: 30 } });
  const started = await waitFor (() => existsSync (`${shared}/a-started`), 30000);
  ac.abort ('the test cancels it');
  let aErr = null;
  try { await a; } catch (e) { aErr = e; }
  const rb = await b;
  await sleep (500);
  const survived = existsSync (`${shared}/a-survived`);
  report (started && aErr && text (rb) === 'B done' && !survived,
          'cancellation: notifications/cancelled stops that call\'s jail (its marker never '
          + 'appears) and only it (the other call ends normally)',
          `started ${started}, a: ${aErr}, b: ${text (rb)}, survived ${survived}`);
  const gone = await waitFor (() => descendants (transport.pid).length === 0, 10000);
  report (gone, 'after the calls: no worker, jail or command of the server is left',
          JSON.stringify (descendants (transport.pid)));
});

// A TCP client of the host's PORT: what it reads before the server closes
// ('' when nothing listened yet: the keeper accepts and ends at once).
function fetchPort (port) {
  return new Promise ((resolve) => {
    let got = '';
    const c = connect (port, '127.0.0.1');
    c.setTimeout (5000, () => c.destroy ());
    c.on ('data', (d) => { got += d; });
    c.on ('close', () => resolve (got));
    c.on ('error', () => resolve (''));
  });
}

await step ('sandbox files and ports', async () => {
  const c = await client.callTool ({ name: 'sandbox_create', arguments: {
    idle_timeout: 600, publish: [8080] } });
  const id = c.structuredContent && c.structuredContent.id;
  const port = c.structuredContent && c.structuredContent.ports && c.structuredContent.ports[0];
  report (!c.isError && port && port.port === 8080 && /^tcp:\/\/127\.0\.0\.1:\d+$/.test (port.host_url)
          && text (c).includes (port.host_url),
          'sandbox_create with publish: the host\'s side of the port in the result',
          JSON.stringify (c));
  const call = (name, args) => client.callTool ({ name, arguments: { sandbox: id, ...args } });
  // every byte value, NULs and invalid UTF-8 among them
  const bytes = Buffer.alloc (70000);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 8)) & 255;
  const w = await call ('sandbox_write_file', { path: 'data/blob.bin',
                                                content_base64: bytes.toString ('base64') });
  const r = await call ('sandbox_read_file', { path: '/work/data/blob.bin' });
  const back = r.structuredContent && Buffer.from (r.structuredContent.content, 'base64');
  report (!w.isError && w.structuredContent.bytes === bytes.length
          && w.structuredContent.path === '/work/data/blob.bin'
          && !r.isError && r.structuredContent.encoding === 'base64' && back.equals (bytes)
          && /is 70000 bytes of binary data \(not UTF-8 text\)\. In base64:\n/.test (text (r)),
          'sandbox_write_file then sandbox_read_file: 70000 binary bytes (parents made) come back '
          + 'the same, as base64, which the text says',
          `${JSON.stringify (w)} ${r.structuredContent && r.structuredContent.encoding} ${text (r).slice (0, 120)}`);
  const t = 'héllo\n\tworld "quoted" \\ ✓\n';
  const wt = await call ('sandbox_write_file', { path: 'notes/a.txt', content: t, mode: '0600' });
  const rt = await call ('sandbox_read_file', { path: 'notes/a.txt' });
  const ex = await client.callTool ({ name: 'sandbox_exec', arguments: { sandbox: id,
    argv: ['python3', '-c', 'import os; print(oct(os.stat("notes/a.txt").st_mode & 0o777))'] } });
  report (!wt.isError && text (rt) === t && rt.structuredContent.encoding === 'utf-8'
          && text (ex) === '0o600\n',
          'a UTF-8 text file comes back as text (encoding utf-8); mode applied', `${text (rt)} ${text (ex)}`);
  const l = await call ('sandbox_list_files', { recursive: true });
  const names = (l.structuredContent && l.structuredContent.entries || []).map ((e) => e.name).join (',');
  const blob = (l.structuredContent && l.structuredContent.entries || []).find ((e) => e.name === 'data/blob.bin');
  report (!l.isError && names === 'data,data/blob.bin,notes,notes/a.txt' && blob.size === 70000
          && blob.type === 'file' && /^-rw-r--r-- +70000 \S+ data\/blob\.bin$/m.test (text (l))
          && /^\/work: 4 entries$/m.test (text (l)),
          'sandbox_list_files recursive: every entry with its size, mode and type; ls -l lines',
          `${names} ${text (l)}`);
  const f = await call ('sandbox_list_files', { pattern: '*.txt', path: '/work' });
  report (!f.isError && f.structuredContent.entries.length === 1
          && f.structuredContent.entries[0].path === '/work/notes/a.txt'
          && /^1 entry below \/work matching '\*\.txt':$/m.test (text (f)),
          'sandbox_list_files with a pattern: the matches below path (as entries)', text (f));
  const out1 = await call ('sandbox_read_file', { path: '../../../etc/passwd' });
  const out2 = await call ('sandbox_write_file', { path: '/../../x', content: 'x' });
  report (out1.isError && /leaves the sandbox's \//.test (text (out1))
          && out2.isError && /leaves the sandbox's \//.test (text (out2)),
          'a path that climbs out of the sandbox is refused (read and write), named',
          `${text (out1)} | ${text (out2)}`);
  // a symlink in the sandbox to a host file resolves inside the sandbox
  const secret = `${shared}/../host-secret`;
  writeFileSync (secret, 'HOST SECRET\n');
  await client.callTool ({ name: 'sandbox_exec', arguments: { sandbox: id,
    argv: ['ln', '-s', secret, '/work/esc'] } });
  const esc = await call ('sandbox_read_file', { path: 'esc' });
  report (esc.isError && !/HOST SECRET/.test (JSON.stringify (esc))
          && /No such file or directory/.test (text (esc)),
          'a symlink to a host file is resolved inside the sandbox: the host file is not read',
          JSON.stringify (esc));
  const big = await call ('sandbox_read_file', { path: 'data/blob.bin', max_bytes: 1000 });
  report (big.isError && /70000 bytes, more than 1000 \(max_bytes\)/.test (text (big)),
          'a file over max_bytes: a tool error that names its size and max_bytes', text (big));
  const both = await call ('sandbox_write_file', { path: 'x', content: 'a', content_base64: 'YQ==' });
  const bad = await call ('sandbox_write_file', { path: 'x', content_base64: 'YQ=!' });
  report (both.isError && /give either content .* or content_base64/.test (text (both))
          && bad.isError && /arguments\.content_base64: not base64/.test (text (bad)),
          'sandbox_write_file: content and content_base64 both, and bad base64: tool errors naming '
          + 'the field', `${text (both)} | ${text (bad)}`);
  const none = await client.callTool ({ name: 'sandbox_read_file', arguments: {
    sandbox: 'nosuchbox', path: 'x' } });
  const none2 = await client.callTool ({ name: 'sandbox_list_files', arguments: {
    sandbox: 'nosuchbox' } });
  report (none.isError && /no such sandbox: 'nosuchbox'/.test (text (none))
          && none2.isError && /no such sandbox/.test (text (none2)),
          'the file tools on a missing sandbox: a tool error naming it', `${text (none)} | ${text (none2)}`);
  // a server in the sandbox on the published port, reached from the host
  const srv = client.callTool ({ name: 'sandbox_exec', arguments: { sandbox: id, timeout: 30,
    argv: ['python3', '-c', 'import socket\ns = socket.socket()\n'
      + 's.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\ns.bind(("127.0.0.1", 8080))\n'
      + 's.listen()\nc, _ = s.accept()\nc.sendall(b"hello from the sandbox")\nc.close()\n'
      + 'print("served")'] } });
  const hostPort = Number (port.host_url.split (':').pop ());
  let got = '';
  const end = Date.now () + 20000;
  while (got === '' && Date.now () < end) {
    got = await fetchPort (hostPort);
    if (got === '') await sleep (200);
  }
  const rs = await srv;
  report (got === 'hello from the sandbox' && text (rs) === 'served\n',
          'publish: a server in the sandbox is reached from the host\'s loopback', `${got} ${text (rs)}`);
  const d = await call ('sandbox_terminate', {});
  report (!d.isError, 'the files sandbox is removed', text (d));
});

let restoredId = null;
await step ('sandbox_run, checkpoint and restore', async () => {
  const c = await client.callTool ({ name: 'sandbox_create', arguments: { idle_timeout: 600 } });
  const id = c.structuredContent && c.structuredContent.id;
  const run = (args, opts) => client.callTool ({ name: 'sandbox_run', arguments: { sandbox: id, ...args } },
                                               undefined, opts);
  const w = await client.callTool ({ name: 'sandbox_write_file', arguments: {
    sandbox: id, path: 'data/in.csv', content: 'a,b\n1,2\n3,4\n' } });
  const r = await run ({ code: 'import csv\nrows = list(csv.reader(open("data/in.csv")))\n'
                         + 'print(len(rows), sum(int(r[1]) for r in rows[1:]))\n' });
  report (!c.isError && !w.isError && text (r) === '3 6' && r.isError === false
          && r.structuredContent.status === 'ok' && r.structuredContent.sandbox === id,
          'sandbox_run: the code runs in the sandbox and reads a file written by '
          + 'sandbox_write_file (text: its stdout; structuredContent: the run\'s document)',
          JSON.stringify (r).slice (0, 1500));
  const h = await run ({ code: 'print(math.sqrt(16))\n' });
  const hs = h.structuredContent;
  report (text (h) === '4.0' && h.isError === false && hs && hs.status === 'healed'
          && hs.attempts.length === 2 && /import math/.test (hs.final_code),
          'sandbox_run: a healing case in the sandbox (text "4.0", status healed in 2 attempts, '
          + 'validated by the SDK against outputSchema)', JSON.stringify (h).slice (0, 1500));
  const s1 = await run ({ code: 'import json\ntotal = 41\nnotes = {"seen": ["a"]}\n', session: 'work' });
  const s2 = await run ({ code: 'total += 1\nnotes["seen"].append("b")\nprint(total, json.dumps(notes))\n',
                          session: 'work' });
  const s3 = await run ({ code: 'print(total)\n' });
  report (!s1.isError && text (s2) === '42 {"seen": ["a", "b"]}' && s2.isError === false
          && s2.structuredContent.session && s2.structuredContent.session.name === 'work'
          && s2.structuredContent.session.cell === 2 && s2.structuredContent.session.started === false
          && s3.isError === true && /error_type: (NameError|StaticSafetyViolation)/.test (text (s3)),
          'sandbox_run with a session: a variable and an import of one call are there in the next '
          + '(cell 2 of session "work"); a run without the session does not see them',
          `${text (s1)} | ${text (s2)} | ${JSON.stringify (s2.structuredContent.session)} | ${text (s3)}`);
  const b = await run ({ code: 'import subprocess\nsubprocess.run(["id"])\n' });
  const bt = text (b);
  report (b.isError === true && b.structuredContent.status === 'blocked'
          && bt.startsWith ('The Python script did not execute successfully.\n')
          && /^error_type: StaticSafetyViolation$/m.test (bt) && /^root_cause_line: 2$/m.test (bt)
          && /^message: dangerous-call: subprocess\.run/m.test (bt) && /^stderr: csrun gate:/m.test (bt),
          'sandbox_run: a blocked snippet is a tool error with the gate\'s message in CodeShield\'s '
          + 'lines', bt);
  // cancellation: a long cell of the session is stopped, the session lives on
  const ac = new AbortController ();
  const long = run ({ code: 'import time\nopen("/work/c1", "w").close()\ntime.sleep(5)\n'
                      + 'open("/work/c2", "w").close()\nprint("not cancelled")\n', session: 'work' },
                    { signal: ac.signal });
  const started = await waitFor (async () => {
    const l = await client.callTool ({ name: 'sandbox_list_files', arguments: { sandbox: id } });
    return !l.isError && l.structuredContent.entries.some ((e) => e.name === 'c1');
  }, 30000);
  ac.abort ('the test cancels the run');
  let longErr = null;
  try { await long; } catch (e) { longErr = e; }
  await sleep (6500);
  const after = await client.callTool ({ name: 'sandbox_exec', arguments: { sandbox: id,
    argv: ['python3', '-c', 'import os; print(os.path.exists("/work/c1"), os.path.exists("/work/c2"))'] } });
  const alive = await run ({ code: 'print(total)\n', session: 'work' });
  report (started && longErr && text (after) === 'True False\n' && text (alive) === '42',
          'sandbox_run cancelled: the cell is stopped in the sandbox (its second marker never '
          + 'appears) and the session lives on with its variables',
          `started ${started}, ${longErr}, ${text (after)}, ${text (alive)}`);
  // checkpoint, then restore: the file is in the new sandbox
  const k = await client.callTool ({ name: 'sandbox_checkpoint', arguments: { sandbox: id, ttl: 3600 } });
  const ks = k.structuredContent || {};
  const stopped = await run ({ code: 'print(1)\n' });
  report (!k.isError && /^[0-9a-f]{32}$/.test (ks.id) && ks.sandbox.id === id && ks.stopped === true
          && ks.layer.files >= 1 && ks.expires > ks.created && text (k).includes (ks.id)
          && /sandbox_restore/.test (text (k)) && stopped.isError && /stopped/.test (text (stopped)),
          'sandbox_checkpoint: the checkpoint\'s id and what was saved; the sandbox is stopped '
          + 'afterwards (without leave_running)', `${text (k)} | ${text (stopped)}`);
  const rs = await client.callTool ({ name: 'sandbox_restore', arguments: {
    checkpoint: ks.id, name: 'restored-box' } });
  restoredId = rs.structuredContent && rs.structuredContent.id;
  const again = await client.callTool ({ name: 'sandbox_run', arguments: {
    sandbox: 'restored-box', code: 'print(open("/work/data/in.csv").read().count(","))\n' } });
  report (!rs.isError && /^[0-9a-f]{32}$/.test (restoredId) && restoredId !== id
          && rs.structuredContent.checkpoint === ks.id && rs.structuredContent.name === 'restored-box'
          && text (rs).includes (restoredId) && text (again) === '3' && !again.isError,
          'sandbox_restore: a new sandbox (its id, named) where sandbox_run reads the file written '
          + 'before the checkpoint', `${text (rs)} | ${text (again)}`);
  const bad = await client.callTool ({ name: 'sandbox_restore', arguments: {
    checkpoint: '0123456789abcdef0123456789abcdef' } });
  const bad2 = await client.callTool ({ name: 'sandbox_restore', arguments: { checkpoint: '../x' } });
  report (bad.isError && /no such checkpoint: '0123456789abcdef0123456789abcdef'/.test (text (bad))
          && bad2.isError && /arguments\.checkpoint: '\.\.\/x' is not valid/.test (text (bad2)),
          'sandbox_restore of an unknown checkpoint, and of an invalid id: tool errors naming them',
          `${text (bad)} | ${text (bad2)}`);
  const d = await client.callTool ({ name: 'sandbox_terminate', arguments: { sandbox: id } });
  report (!d.isError, 'the checkpointed sandbox is removed', text (d));
});

let sandboxId = null;
await step ('sandboxes', async () => {
  const c = await client.callTool ({ name: 'sandbox_create', arguments: { idle_timeout: 600 } });
  sandboxId = c.structuredContent && c.structuredContent.id;
  report (!c.isError && /^[0-9a-f]{32}$/.test (sandboxId) && text (c).includes (sandboxId),
          'sandbox_create: an id', JSON.stringify (c));
  const w = await client.callTool ({ name: 'sandbox_exec', arguments: {
    sandbox: sandboxId, argv: ['python3', '-c', 'open("/work/f", "w").write("kept")'] } });
  const r = await client.callTool ({ name: 'sandbox_exec', arguments: {
    sandbox: sandboxId, argv: ['python3', '-c', 'print(open("/work/f").read())'] } });
  report (!w.isError && text (r) === 'kept\n' && r.structuredContent.returncode === 0,
          'sandbox_exec: a file written by one command is read by the next', JSON.stringify (r));
  const f = await client.callTool ({ name: 'sandbox_exec', arguments: {
    sandbox: sandboxId, argv: ['python3', '-c', 'import sys; print("bad", file=sys.stderr); sys.exit(3)'] } });
  report (f.isError && f.structuredContent.returncode === 3 && /exit status 3/.test (text (f))
          && /stderr: bad/.test (text (f)),
          'sandbox_exec: a failing command is a tool error with its status and stderr', text (f));
  const t = await client.callTool ({ name: 'sandbox_exec', arguments: {
    sandbox: sandboxId, argv: ['python3', '-c', 'import time; time.sleep(30)'], timeout: 1 } });
  report (t.isError && t.structuredContent.timed_out === true,
          'sandbox_exec: its timeout kills the command', text (t));
  const ac = new AbortController ();
  const seen = [];
  const slow = client.callTool ({ name: 'sandbox_exec', arguments: {
    sandbox: sandboxId, argv: ['python3', '-c', 'import time; open("/work/s1", "w"); '
      + 'time.sleep(4); open("/work/s2", "w")'] } }, undefined,
    { signal: ac.signal, onprogress: (p) => seen.push (p) });
  await sleep (2500);
  ac.abort ('the test cancels the exec');
  let slowErr = null;
  try { await slow; } catch (e) { slowErr = e; }
  await sleep (3000);
  const left = await client.callTool ({ name: 'sandbox_exec', arguments: {
    sandbox: sandboxId, argv: ['python3', '-c', 'import os; print(os.path.exists("/work/s1"), os.path.exists("/work/s2"))'] } });
  report (slowErr && text (left) === 'True False\n' && seen.length >= 1,
          'sandbox_exec: progress while it runs; cancelled, its command is killed in the sandbox',
          `${slowErr} ${text (left)} ${JSON.stringify (seen)}`);
  const x = await client.callTool ({ name: 'sandbox_exec', arguments: { sandbox: sandboxId } });
  report (x.isError && /command.*argv/.test (text (x)),
          'sandbox_exec without command or argv: a tool error that says so', text (x));
  const n = await client.callTool ({ name: 'sandbox_exec', arguments: {
    sandbox: 'nosuchbox', argv: ['true'] } });
  report (n.isError && /no such sandbox/.test (text (n)),
          'sandbox_exec of an unknown sandbox: a tool error naming the problem', text (n));
  const d = await client.callTool ({ name: 'sandbox_terminate', arguments: { sandbox: sandboxId } });
  const dir = process.env.CSRUN_SANDBOX_DIR;
  report (!d.isError && d.structuredContent.id === sandboxId && !existsSync (`${dir}/${sandboxId}`),
          'sandbox_terminate: the sandbox and its state are gone', JSON.stringify (d));
  const k = await client.callTool ({ name: 'sandbox_create', arguments: { name: 'left-open' } });
  sandboxId = k.structuredContent && k.structuredContent.id;
  report (!k.isError && existsSync (`${dir}/${sandboxId}`), 'a second sandbox, left open',
          JSON.stringify (k));
});

await client.close ();
const dir = process.env.CSRUN_SANDBOX_DIR;
const cleaned = await waitFor (() => (!sandboxId || !existsSync (`${dir}/${sandboxId}`))
                               && (!restoredId || !existsSync (`${dir}/${restoredId}`)), 20000);
report (cleaned && sandboxId && restoredId,
        'the session\'s open sandboxes (one made by sandbox_create, one by sandbox_restore) are '
        + 'removed when the session ends', existsSync (dir) ? readdirSync (dir).join (' ') : '');
report (!/error: /.test (stderr), 'the server logged no error on stderr', stderr.slice (-2000));
process.exit (0);
