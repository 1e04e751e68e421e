// A bare Node newline-JSON echo server, run as `node -e NODE_ECHO_SERVER SOCKET`: it answers every
// line with a LicenseState-sized result, parsing and serializing JSON like the agent does, so it
// is the floor of a Node server on this machine. It is the baseline of the agent's socket figures
// (agent.bench.mjs) and the middle figure of the C client's (c-client.bench.mjs). It prints
// {"ready":true} once it listens.
export const NODE_ECHO_SERVER = `
const net = require('node:net');
const result = ${JSON.stringify({
  project_id: '00000000-0000-4000-8000-000000000000', valid: true, reason: null, source: 'online', code_hint: 'abcd…wxyz',
  activations: 1, max_activations: 2, validated_at: '2026-11-22T10:00:00.000Z', grace_until: '2026-12-22T10:00:00.000Z', next_check_at: '2026-11-23T09:41:07.000Z',
})};
net.createServer((s) => {
  let buf = '';
  s.setEncoding('utf8');
  s.on('data', (d) => {
    buf += d;
    let out = '';
    let nl;
    while ((nl = buf.indexOf('\\n')) !== -1) {
      const msg = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      out += JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { ...result, project_id: msg.params.project_id } }) + '\\n';
    }
    if (out) s.write(out);
  });
  s.on('error', () => {});
}).listen({ path: process.argv[1], backlog: 2048 }, () => console.log('{"ready":true}'));
`;

/** True for the line the echo server prints once it listens. */
export const isEchoReady = (line) => line === '{"ready":true}';
