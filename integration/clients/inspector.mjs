// The MCP Inspector CLI (v2, --cli mode) drives the built libtmux-mcp over
// stdio. It starts a fresh server for every call, so each call is a whole
// session: list the tools, call inspect tools, read tmux://capabilities, and
// check that tmux_run on a pane nobody enrolled answers not_enrolled.
//
// The Inspector is run from its local entry point with node (not npx), with
// HOME in a temporary directory so its catalog file stays there.

import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, Checks, Tmux, shortTempDir } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const inspector = path.join(here, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');

const checks = new Checks('inspector-cli');
const bins = build();
const tmux = new Tmux();
const unenrolled = tmux.newSession('plain', 'sh');
// tmux_run needs a pane to invite: a second session, never sourced.
const invited = tmux.newSession('invited', 'sh');
const home = shortTempDir('lmh');
let calls = 0;

// inspect runs one Inspector CLI call against a fresh server and returns
// its parsed JSON output (stdout only; the server's stderr goes to stderr).
function inspect(...args) {
  const file = path.join(tmux.dir, `invite-${++calls}.zsh`); // each server writes its own invitation
  const server = [bins.server, '--socket', tmux.socket, '--enable-tool', 'tmux_run', '--enroll-pane', `${invited}=${file}`, '--helper', bins.helper];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [inspector, '--cli', ...server, ...args],
      { env: { PATH: process.env.PATH, HOME: home, TMUX_TMPDIR: tmux.dir }, timeout: 60_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        let json;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined;
        }
        resolve({ err, json, stdout, stderr });
      },
    );
  });
}

const detail = (r) => `exit ${r.err?.code ?? 0}\nstdout: ${r.stdout.slice(0, 400)}\nstderr: ${r.stderr.slice(0, 400)}`;

const list = await inspect('--method', 'tools/list');
const names = list.json?.tools?.map((t) => t.name) ?? [];
checks.check('tools/list lists the inspect tools and tmux_run', ['list_panes', 'get_server_info', 'capture_pane', 'tmux_run'].every((n) => names.includes(n)), detail(list));

const panes = await inspect('--method', 'tools/call', '--tool-name', 'list_panes');
const row = panes.json?.structuredContent?.panes?.find((p) => p.paneId === unenrolled);
checks.check(`list_panes lists ${unenrolled}, not enrolled`, !panes.err && row?.enrollment === 'none', detail(panes));

const info = await inspect('--method', 'tools/call', '--tool-name', 'get_server_info');
checks.check('get_server_info names the socket', !info.err && info.json?.structuredContent?.socket === tmux.socket, detail(info));

const cap = await inspect('--method', 'tools/call', '--tool-name', 'capture_pane', '--tool-arg', `paneId=${unenrolled}`);
checks.check('capture_pane answers for the pane', !cap.err && cap.json?.structuredContent?.paneId === unenrolled, detail(cap));

const res = await inspect('--method', 'resources/read', '--uri', 'tmux://capabilities');
const text = res.json?.contents?.[0]?.text ?? '';
checks.check('resources/read tmux://capabilities names tmux_run', !res.err && text.includes('tmux_run'), detail(res));

const run = await inspect(
  '--method', 'tools/call', '--tool-name', 'tmux_run',
  '--tool-args-json', JSON.stringify({ target: { kind: 'pane', id: unenrolled, generation: row?.serverGeneration ?? '' }, script: 'echo should-not-run' }),
);
const sc = run.json?.structuredContent;
checks.check(
  'tmux_run on an unenrolled pane answers not_enrolled, not_sent, with isError',
  run.json?.isError === true && sc?.ok === false && sc?.error?.code === 'not_enrolled' && sc?.error?.delivery === 'not_sent',
  detail(run),
);

checks.finish();
