// The TypeScript SDK client drives the built libtmux-mcp over stdio: it
// lists the tools (so the client caches every output schema and validates
// each structuredContent against it), calls an inspect tool, runs tmux_run
// in a pane a "person" enrolled while the client was connected, starts a
// background run with tmux_run_start and collects it with wait_for_run, and
// reads tmux://capabilities.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import path from 'node:path';
import { build, Checks, Lines, Tmux, waitFor } from './lib.mjs';

const checks = new Checks('sdk-client');
const bins = build();
const tmux = new Tmux();
const pane = tmux.newSession('run');
await tmux.waitPrompt(pane);
const file = path.join(tmux.dir, 'enroll.zsh');

const transport = new StdioClientTransport({
  command: bins.server,
  args: ['--socket', tmux.socket, '--enable-tool', 'tmux_run', '--enroll-pane', `${pane}=${file}`, '--helper', bins.helper],
  env: { PATH: process.env.PATH, HOME: tmux.home, TMUX_TMPDIR: tmux.dir, LIBTMUX_MCP_SHELL_ANSWER_MS: '4000' },
  stderr: 'pipe',
});
const stderr = new Lines(transport.stderr);
const client = new Client({ name: 'libtmux-mcp-sdk-client', version: '0' });

try {
  await client.connect(transport);
  checks.pass('connect and initialize over stdio');
  checks.check('the server names itself', client.getServerVersion()?.name === 'libtmux-mcp', JSON.stringify(client.getServerVersion()));

  // listTools first: the client caches each output schema and checks every
  // later structuredContent against it.
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  checks.check('tools/list lists list_panes, get_server_info and tmux_run', ['list_panes', 'get_server_info', 'tmux_run'].every((n) => names.includes(n)), names.join(','));
  checks.check('every tool has an object output schema', tools.every((t) => t.outputSchema?.type === 'object'), tools.filter((t) => t.outputSchema?.type !== 'object').map((t) => t.name).join(','));

  const info = await client.callTool({ name: 'get_server_info', arguments: {} });
  checks.check('get_server_info answers, validated against its output schema', !info.isError && info.structuredContent?.socket === tmux.socket, JSON.stringify(info).slice(0, 300));

  // The person enrolls the pane while the client is connected.
  await stderr.line(new RegExp(`source ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  checks.pass('the startup notice names the file to source');
  tmux.type(pane, `source ${file}`);
  const row = await waitFor('list_panes to show the pane enrolled', async () => {
    const r = await client.callTool({ name: 'list_panes', arguments: {} });
    const p = r.structuredContent?.panes?.find((x) => x.paneId === pane);
    return p?.enrollment === 'enrolled' ? p : undefined;
  });
  checks.pass(`list_panes shows ${pane} enrolled`);

  const run = await client.callTool({
    name: 'tmux_run',
    arguments: {
      target: { kind: 'pane', id: pane, generation: row.serverGeneration },
      script: "printf 'out<&>'; printf 'err' >&2; exit 3",
    },
  });
  const d = run.structuredContent?.data;
  checks.check(
    'tmux_run completes with exit status 3 and separate stdout and stderr',
    !run.isError && run.structuredContent?.ok === true && d?.completion?.exit_status === 3 && d?.completion?.signal === null && d?.stdout?.data === 'out<&>' && d?.stderr?.data === 'err',
    JSON.stringify(run.structuredContent).slice(0, 500),
  );
  checks.check('nothing from the run reached the terminal', !tmux.capture(pane).includes('out<&>'), tmux.capture(pane));

  // A run that outlives the call: tmux_run_start answers a handle at once; wait_for_run
  // collects it (each answer validated against wait_for_run's output schema).
  const started = await client.callTool({
    name: 'tmux_run_start',
    arguments: { target: { kind: 'pane', id: pane, generation: row.serverGeneration }, script: "sleep 1; printf 'late'; printf 'warn' >&2; exit 4" },
  });
  const handle = started.structuredContent?.data?.handle;
  checks.check('tmux_run_start answers a trs- handle at once', !started.isError && typeof handle === 'string' && handle.startsWith('trs-'), JSON.stringify(started.structuredContent).slice(0, 300));
  const done = await waitFor('wait_for_run to see the background run end', async () => {
    const r = await client.callTool({ name: 'wait_for_run', arguments: { handle, timeoutMs: 2000 } });
    return r.structuredContent?.state !== 'running' ? r : undefined;
  });
  const w = done.structuredContent;
  checks.check(
    'wait_for_run collects the background run: completed, exit 4, stdout and stderr apart',
    !done.isError && w?.state === 'completed' && w?.exitStatus === 4 && w?.stdout === 'late' && w?.stderr === 'warn',
    JSON.stringify(w).slice(0, 500),
  );

  let caps;
  try {
    caps = await client.readResource({ uri: 'tmux://capabilities' });
  } catch (err) {
    caps = err;
  }
  const text = caps?.contents?.[0]?.text ?? '';
  checks.check('tmux://capabilities reads as JSON naming tmux_run', text.includes('tmux_run') && isJSON(text), String(caps?.message ?? text).slice(0, 300));
} catch (err) {
  checks.fail('the SDK client session', `${err?.stack ?? err}\nserver stderr:\n${stderr.text}`);
} finally {
  await client.close().catch(() => {});
}
checks.finish();

function isJSON(s) {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}
