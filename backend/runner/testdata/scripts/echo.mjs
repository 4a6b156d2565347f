// Reads the invocation and echoes it back as {"echo": …}.
let data = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => { data += c; });
process.stdin.on('end', () => { process.stdout.write(JSON.stringify({ echo: JSON.parse(data) }) + '\n'); });
