// Small Windows-Node helpers for the Windows job, run under Wine (no dependencies).
//   hang PIPE                  a pipe server that accepts and never answers (a hung agent)
//   subscribe PIPE PROJECT     subscribes through the agent's protocol, prints every line it
//                              receives, and exits 0 on the first `changed` notification
//   wait-pipe PIPE MS          exits 0 once something answers on PIPE, 1 after MS
'use strict';
const net = require('net');
const fs = require('fs');
const [mode, pipe, arg] = process.argv.slice(2);
const out = (line) => fs.writeSync(1, `${line}\n`);

if (mode === 'hang') {
  const server = net.createServer(() => {}); // holds every connection, answers nothing
  server.listen(pipe, () => out(JSON.stringify({ ready: true, pipe })));
} else if (mode === 'subscribe') {
  const socket = net.connect(pipe);
  let buffered = '';
  socket.on('connect', () => socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'subscribe', params: { project_id: arg } })}\n`));
  socket.on('data', (chunk) => {
    buffered += chunk;
    let i;
    while ((i = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      out(line);
      const message = JSON.parse(line);
      if (message.method === 'changed') process.exit(0);
    }
  });
  socket.on('error', (e) => {
    out(JSON.stringify({ error: e.message }));
    process.exit(1);
  });
} else if (mode === 'wait-pipe') {
  const until = Date.now() + Number(arg);
  const attempt = () => {
    const s = net.connect(pipe);
    s.on('connect', () => {
      s.destroy();
      process.exit(0);
    });
    s.on('error', () => (Date.now() > until ? process.exit(1) : setTimeout(attempt, 100)));
  };
  attempt();
} else {
  process.stderr.write('usage: pipe-tools.cjs hang|subscribe|wait-pipe PIPE [ARG]\n');
  process.exit(2);
}
