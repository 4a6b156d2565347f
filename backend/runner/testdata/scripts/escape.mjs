// Escape suite: leaves processes behind in the way the invocation asks.
// Every leftover carries input.marker on its command line so a /proc scan
// can find it without the runner's bookkeeping.
import { spawn } from 'node:child_process';
import { writeSync } from 'node:fs';
const input = JSON.parse(await new Promise((resolve) => {
  let d = ''; process.stdin.on('data', (c) => { d += c; }); process.stdin.on('end', () => resolve(d));
}));
const node = process.execPath;
const forever = 'process.on("SIGTERM",()=>{}); setInterval(()=>{},1000)';
const sleeper = (extra = {}) => spawn(node, ['-e', 'setInterval(()=>{},1000)', input.marker], { stdio: 'ignore', ...extra });
const done = () => writeSync(1, JSON.stringify({ echo: input.mode }));
switch (input.mode) {
  case 'double-fork':
    spawn('/bin/sh', ['-c', '("$0" -e "setInterval(()=>{},1000)" "$1" &)', node, input.marker], { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 100)); done(); break;
  case 'setsid': sleeper({ detached: true }).unref(); done(); break;
  case 'new-pgrp':
    spawn('/bin/sh', ['-c', 'set -m; "$0" -e "setInterval(()=>{},1000)" "$1" & sleep 0.1', node, input.marker], { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 200)); done(); break;
  case 'ignore-term':
    process.on('SIGTERM', () => {});
    spawn(node, ['-e', forever, input.marker], { stdio: 'ignore' });
    setInterval(() => {}, 1000); break; // never exits: the timeout ends it
  case 'hold-stdout':
    spawn(node, ['-e', forever, input.marker], { stdio: ['ignore', 'inherit', 'ignore'], detached: true }).unref();
    done(); break;
  case 'fork-loop':
    for (let i = 0; i < input.n; i++) sleeper({ detached: i % 2 === 0 }).unref();
    done(); break;
  case 'timeout': sleeper(); setInterval(() => {}, 1000); break;
}
