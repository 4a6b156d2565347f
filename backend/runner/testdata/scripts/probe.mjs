// Confinement probes from the script's side: each action tries one thing a
// script must not be able to do when confined, and returns "ok" or the
// error code it met.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import dgram from 'node:dgram';
const input = JSON.parse(await new Promise((resolve) => {
  let d = ''; process.stdin.on('data', (c) => { d += c; }); process.stdin.on('end', () => resolve(d));
}));
const code = (e) => e.code || String(e.message || e);
const sync = (fn) => { try { fn(); return 'ok'; } catch (e) { return code(e); } };
const connect = (opts) => new Promise((resolve) => {
  const s = net.connect(opts, () => { s.end(); resolve('ok'); });
  s.on('error', (e) => resolve(code(e)));
  setTimeout(() => { s.destroy(); resolve('timeout'); }, 3000);
});
let r;
switch (input.action) {
  case 'read': r = sync(() => fs.readFileSync(input.path)); break;
  case 'write': r = sync(() => fs.writeFileSync(input.path, input.data || 'planted')); break;
  case 'open-rw': r = sync(() => fs.closeSync(fs.openSync(input.path, 'r+'))); break;
  case 'exec': { // a command-line tool writing the database (as the gatehouse CLI would)
    const p = spawnSync(input.path, input.args, { encoding: 'utf8', env: { ...process.env, ...(input.env || {}) } });
    r = p.error ? code(p.error) : (p.status === 0 ? 'ok' : 'exit ' + p.status + ': ' + (p.stderr || '').trim().split('\n').pop());
    if (input.out && p.status === 0) fs.writeFileSync(input.out, p.stdout); // what the tool printed, kept for the test
    break;
  }
  case 'tcp': r = await connect({ host: '127.0.0.1', port: input.port }); break;
  case 'abstract': { // Node 20 cannot name an abstract socket; python3 can
    const p = spawnSync('/usr/bin/python3', ['-c', 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect("\\0"+sys.argv[1])', input.path], { encoding: 'utf8' });
    r = p.status === 0 ? 'ok' : ((p.stderr || '').trim().split('\n').pop() || 'exit ' + p.status);
    break;
  }
  case 'udp': r = await new Promise((resolve) => {
    const s = dgram.createSocket('udp4');
    s.send('x', input.port, '127.0.0.1', (e) => { s.close(); resolve(e ? code(e) : 'ok'); });
  }); break;
  case 'signal': r = sync(() => process.kill(input.pid, 0)); break;
  case 'ids': { // who the script is, and in which namespaces
    const ns = (n) => { try { return fs.readlinkSync('/proc/self/ns/' + n); } catch (e) { return code(e); } };
    r = [process.getuid() + ':' + process.getgid(), ns('user'), ns('pid'), ns('net')].join(' ');
    break;
  }
  case 'forkbomb': { // start sleepers until the kernel refuses one (or input.max)
    const { spawn } = await import('node:child_process');
    let n = 0, err = 'none';
    for (; n < input.max; n++) {
      const e = await new Promise((resolve) => {
        const c = spawn('/bin/sleep', ['60'], { stdio: 'ignore' });
        c.on('spawn', () => resolve(null)); c.on('error', (x) => resolve(code(x)));
      });
      if (e) { err = e; break; }
    }
    r = 'forked ' + n + ': ' + err;
    break;
  }
  case 'fds': { // which of this process's descriptors are Gatehouse's file
    const found = [];
    for (let fd = 0; fd < 1024; fd++) {
      try { const st = fs.fstatSync(fd); if (st.dev === input.dev && st.ino === input.ino) found.push(fd); } catch {}
    }
    r = found.length ? 'inherited ' + found.join(',') : 'none';
    break;
  }
  case 'plant': { // write into every other receiver's HOME and TMPDIR
    const runs = input.path; let planted = 0;
    let dirs = [];
    try { dirs = fs.readdirSync(runs); } catch (e) { r = 'planted 0 (' + code(e) + ')'; break; }
    for (const d of dirs) {
      for (const sub of ['home', 'tmp']) {
        const p = `${runs}/${d}/${sub}`;
        if (p === process.env.HOME || p === process.env.TMPDIR) continue;
        try { fs.writeFileSync(`${p}/planted`, 'x'); planted++; } catch {}
      }
    }
    r = 'planted ' + planted; break;
  }
  case 'env': r = Object.keys(process.env).sort().join(','); break;
  case 'look': r = fs.readdirSync(process.env.HOME).concat(fs.readdirSync(process.env.TMPDIR)).join(','); break;
}
fs.writeSync(1, JSON.stringify({ echo: r }));
