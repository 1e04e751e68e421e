// The relay benchmark's baseline: a bare pass-through proxy on node:http, which forwards each
// request to the service over one keep-alive pool and streams the answer back, nothing else.
// Prints {"ready":true,"port":N}. Usage: node pass-through-proxy.mjs SERVICE_ORIGIN
import { Agent, createServer, request } from 'node:http';

const target = new URL(process.argv[2]);
const agent = new Agent({ keepAlive: true });
const server = createServer((req, res) => {
  const upstream = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host }, agent }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => res.writeHead(502).end());
  req.pipe(upstream);
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ ready: true, port: server.address().port })));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
