// Hostile escape suite (docs/process-ownership.md): the escapee leaves the script's
// ancestry in every way a same-user process can. Each survivor carries
// input.marker on its command line so the test finds it from /proc. The
// escapee writes what its escape attempt did into the workspace (escaped),
// which the root waits for and returns.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeSync } from 'node:fs';
const input = JSON.parse(await new Promise((resolve) => {
  let d = ''; process.stdin.on('data', (c) => { d += c; }); process.stdin.on('end', () => resolve(d));
}));
const node = process.execPath;
// The escapee: optionally moves itself into input.cgroupProcs (an
// ancestor's or the root cgroup.procs) or a child cgroup of its own, then
// double-forks a detached (new session) grandchild with an empty
// environment, records the result and exits.
const escapee = `
const fs = require('node:fs'); const { spawn } = require('node:child_process');
let result = 'none';
const [target, childCgroup, mount] = [process.argv[2], process.argv[3], process.argv[4]];
try {
  if (childCgroup === '1') {
    const own = fs.readFileSync('/proc/self/cgroup', 'utf8').match(/^0::(.*)$/m)[1];
    const dir = mount + own + '/escape-' + process.pid;
    fs.mkdirSync(dir); fs.writeFileSync(dir + '/cgroup.procs', String(process.pid)); result = 'moved';
  } else if (target) { fs.writeFileSync(target, String(process.pid)); result = 'moved'; }
} catch (e) { result = e.code || String(e); }
spawn(process.execPath, ['-e', 'setInterval(()=>{},1000)', process.argv[1]], { detached: true, env: {}, stdio: 'ignore' }).unref();
fs.writeFileSync('escaped.tmp', result); fs.renameSync('escaped.tmp', 'escaped');
`;
const done = (v) => writeSync(1, JSON.stringify({ echo: v }));
const wait = async () => { while (!existsSync('escaped')) await new Promise((r) => setTimeout(r, 10)); return readFileSync('escaped', 'utf8'); };
switch (input.mode) {
  case 'cgroup': // double fork + detached + env {} + a cgroup.procs write
    spawn(node, ['-e', escapee, input.marker, input.cgroupProcs || '', '0', ''], { detached: true, env: {}, stdio: 'ignore' }).unref();
    done(await wait()); break;
  case 'child-cgroup':
    spawn(node, ['-e', escapee, input.marker, '', '1', input.mount], { detached: true, env: {}, stdio: 'ignore' }).unref();
    done(await wait()); break;
  case 'subreaper': // a child that makes itself a subreaper, then double-forks below it
    spawn('/usr/bin/python3', ['-c', `import ctypes,os,sys,time
ok = ctypes.CDLL(None).prctl(36,1,0,0,0) == 0
if os.fork() == 0:
  if os.fork() == 0:
    os.setsid()
    os.execve(sys.argv[2], [sys.argv[2], "-e", "setInterval(()=>{},1000)", sys.argv[1]], {})
  os._exit(0)
open("escaped.tmp", "w").write("subreaper" if ok else "no-subreaper"); os.rename("escaped.tmp", "escaped")
while True: time.sleep(1)`, input.marker, node], { detached: true, env: {}, stdio: 'ignore' }).unref();
    done(await wait()); break;
  case 'outlive': // the root itself never ends: the timeout must end it all
    spawn(node, ['-e', escapee, input.marker, input.cgroupProcs || '', '0', ''], { detached: true, env: {}, stdio: 'ignore' }).unref();
    await wait(); setInterval(() => {}, 1000); break;
}
