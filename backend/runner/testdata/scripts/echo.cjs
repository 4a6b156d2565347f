// CommonJS twin of echo.mjs.
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  process.stdout.write(JSON.stringify({ echo: JSON.parse(Buffer.concat(chunks).toString('utf8')), cjs: typeof module === 'object' && typeof exports === 'object' }) + '\n');
});
