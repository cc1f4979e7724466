// Runs the MCP conformance suite's server scenarios against libtmux-mcp
// serving Streamable HTTP (--http on a loopback port, its own private tmux
// server). The suite cannot send a bearer token, so a small loopback proxy
// in front adds the Authorization header and forwards everything else,
// the Host header included, unchanged (the DNS-rebinding scenario depends
// on it). Scenarios that need the suite's fixture tools, resources and
// prompts are listed, each with its reason, in
// conformance-expected-failures.yaml; any other failure, or a listed
// scenario that now passes, fails the run.

import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, Checks, Tmux, spawnLogged } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const suite = path.join(here, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const baseline = path.join(here, 'conformance-expected-failures.yaml');

const checks = new Checks('conformance');
const bins = build();
const tmux = new Tmux();
tmux.newSession('conformance', 'sh');

const server = spawnLogged(bins.server, ['--http', '127.0.0.1:0', '--socket', tmux.socket], {
  env: { PATH: process.env.PATH, HOME: tmux.home, TMUX_TMPDIR: tmux.dir },
});
process.on('exit', () => server.kill('SIGKILL'));
let proxy;
try {
  const [, url, token] = await server.err.line(/Streamable HTTP at (http:\/\/\S+); send Authorization: Bearer with token (\S+)/);
  checks.pass(`the server listens at ${url}`);
  const target = new URL(url);

  // The proxy: loopback only, adds the token, streams both ways.
  proxy = http.createServer((req, res) => {
    const up = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${token}` } },
      (upRes) => {
        res.writeHead(upRes.statusCode, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on('error', (err) => {
      res.writeHead(502);
      res.end(String(err));
    });
    req.pipe(up);
    res.on('close', () => up.destroy());
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const proxied = `http://127.0.0.1:${proxy.address().port}${target.pathname}`;

  const noToken = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  checks.check('the server itself answers 401 without the token', noToken.status === 401, `status ${noToken.status}`);

  // The suite prints one "✓/✗ scenario: N passed, N failed" line per
  // scenario and a total that counts the expected failures too, and exits
  // 0 only when the failures are exactly the baseline. Its own output is
  // shown only when it fails, so that CI logs count this script's closing
  // line, not the suite's; the results are kept in conformance-results/
  // (or LIBTMUX_MCP_CONFORMANCE_RESULTS, for runs side by side).
  const out = await new Promise((resolve) => {
    const child = spawn(process.execPath, [suite, 'server', '--url', proxied, '--expected-failures', baseline, '-o', process.env.LIBTMUX_MCP_CONFORMANCE_RESULTS || path.join(here, 'conformance-results')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (b) => (text += b));
    child.stderr.on('data', (b) => (text += b));
    child.on('exit', (code) => resolve({ code, text }));
  });
  const scenarios = [...out.text.matchAll(/^([✓✗]) (\S+): (\d+) passed, (\d+) failed/gm)];
  checks.check('the suite ran scenarios', scenarios.length > 0, 'no scenario summary lines');
  for (const [, mark, name] of scenarios) {
    if (mark === '✓') checks.pass(`scenario ${name}`);
    else if (isExpected(out.text, name)) console.log(`exp  scenario ${name}: in the expected failures (needs the suite's fixtures)`);
    else checks.fail(`scenario ${name}`, 'not in the expected failures');
  }
  if (!checks.check('the suite exits 0 against the baseline (no unexpected failures, no stale entries)', out.code === 0, `exit ${out.code}`)) {
    console.log(`--- the suite's output:\n${out.text}--- end of the suite's output`);
  }
} catch (err) {
  checks.fail('the conformance run', `${err?.stack ?? err}\nserver stderr:\n${server.err.text}`);
} finally {
  proxy?.close();
  proxy?.closeAllConnections?.();
  server.kill('SIGTERM');
  const { code } = await server.exited;
  checks.check('the server exits 0 on SIGTERM', code === 0, `exit ${code}\n${server.err.text}`);
}
checks.finish();

// isExpected reports whether the suite listed name under its expected
// failures.
function isExpected(text, name) {
  const section = text.split('Expected failures (in baseline):')[1]?.split('\n\n')[0] ?? '';
  return section.split('\n').some((l) => l.trim() === `~ ${name}`);
}
