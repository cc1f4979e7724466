// Shared pieces of the client harness: build the binaries, run a private
// tmux server with a zsh pane, count checks, wait on lines and state with
// deadlines. Nothing here touches the default tmux socket or the user's
// HOME: every path lives in a short temporary directory removed at exit.

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// Deadlines: generous, since CI shares two cores; nothing waits for them
// unless something is wrong.
export const STEP_MS = 30_000;

// Where the temporary directories go: /tmp, or LIBTMUX_MCP_CLIENT_TMP (a
// short path of its own), so that runs side by side can each tell their
// own tmux servers (.ci/run checks that none is left running).
const tmpRoot = process.env.LIBTMUX_MCP_CLIENT_TMP || '/tmp';

// A temporary directory with a short path (tmux socket paths must stay
// under 108 bytes), removed when the process exits.
export function shortTempDir(prefix = 'lmc') {
  const dir = mkdtempSync(path.join(tmpRoot, prefix));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// Checks counts passed and failed checks and prints the closing line.
export class Checks {
  constructor(name) {
    this.name = name;
    this.passed = 0;
    this.failed = 0;
  }
  pass(what) {
    this.passed++;
    console.log(`ok   ${what}`);
  }
  fail(what, detail = '') {
    this.failed++;
    console.log(`FAIL ${what}${detail ? `: ${detail}` : ''}`);
  }
  check(what, ok, detail = '') {
    if (ok) this.pass(what);
    else this.fail(what, detail);
    return ok;
  }
  finish() {
    console.log(`${this.name}: ${this.passed} passed, ${this.failed} failed`);
    process.exitCode = this.failed > 0 || this.passed === 0 ? 1 : 0;
  }
}

// build compiles libtmux-mcp and its helper (without cgo) into a temporary
// directory and returns their paths. With LIBTMUX_MCP_CLIENT_BIN set to a
// directory already holding both (built so), it uses those instead.
export function build() {
  const prebuilt = process.env.LIBTMUX_MCP_CLIENT_BIN;
  if (prebuilt) {
    return { server: path.join(prebuilt, 'libtmux-mcp'), helper: path.join(prebuilt, 'libtmux-mcp-helper') };
  }
  const dir = shortTempDir('lmb');
  const out = dir + path.sep;
  const env = { ...process.env };
  execFileSync('go', ['build', '-o', out, './cmd/libtmux-mcp'], { cwd: repoRoot, env, stdio: 'inherit' });
  execFileSync('go', ['build', '-o', out, './cmd/libtmux-mcp-helper'], { cwd: repoRoot, env: { ...env, CGO_ENABLED: '0' }, stdio: 'inherit' });
  return { server: path.join(dir, 'libtmux-mcp'), helper: path.join(dir, 'libtmux-mcp-helper') };
}

// Tmux is a private tmux server on a socket in a short temporary directory,
// started with an empty config, its panes running zsh with an empty .zshrc.
export class Tmux {
  constructor() {
    this.dir = shortTempDir('lmt');
    this.socket = path.join(this.dir, 's');
    this.config = path.join(this.dir, 'tmux.conf');
    writeFileSync(this.config, '');
    const zdotdir = path.join(this.dir, 'zdot');
    mkdirSync(zdotdir);
    writeFileSync(path.join(zdotdir, '.zshrc'), '');
    this.home = path.join(this.dir, 'home');
    mkdirSync(this.home);
    this.env = {
      PATH: process.env.PATH,
      HOME: this.home,
      ZDOTDIR: zdotdir,
      TERM: 'xterm-256color',
      LC_ALL: 'C.UTF-8',
      TMUX_TMPDIR: this.dir,
      SHELL: 'zsh',
    };
    // Before shortTempDir's own handler removes the socket with the
    // directory: kill-server needs the socket, and a server whose socket is
    // gone outlives the run.
    process.prependListener('exit', () => this.kill());
  }
  run(...args) {
    return execFileSync('tmux', ['-S', this.socket, '-f', this.config, ...args], { env: this.env, encoding: 'utf8' }).trimEnd();
  }
  // newSession starts a detached 120x40 session running zsh -i (or cmd) and
  // returns its pane id. tmux 3.2a makes a detached session 80x24 whatever
  // -x and -y say unless window-size is manual, and a shell resized a moment
  // after it started may miss the resize; so on 3.2 only, window-size is
  // manual around new-session (3.3a to 3.6a crash on new-session -d under a
  // global manual), as internal/tmuxtest's SizedSession does.
  newSession(name, ...cmd) {
    const on32 = '#{m:3.2*,#{version}}';
    return this.run('if-shell', '-F', on32, 'set -g window-size manual', ';',
      'new-session', '-d', '-P', '-F', '#{pane_id}', '-s', name, '-x', '120', '-y', '40', ...(cmd.length ? cmd : ['zsh', '-i']),
      ';', 'if-shell', '-F', on32, 'set -gu window-size');
  }
  capture(pane) {
    return this.run('capture-pane', '-p', '-t', pane);
  }
  // type sends text literally, then Enter.
  type(pane, text) {
    this.run('send-keys', '-t', pane, '-l', text);
    this.run('send-keys', '-t', pane, 'Enter');
  }
  // waitPrompt waits until zsh in pane has drawn a prompt.
  async waitPrompt(pane) {
    await waitFor(`a zsh prompt in ${pane}`, () => this.run('display', '-p', '-t', pane, '#{pane_current_command}') === 'zsh' && this.capture(pane).trim() !== '');
  }
  kill() {
    try {
      execFileSync('tmux', ['-S', this.socket, 'kill-server'], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  }
}

// waitFor polls cond (which may be async) until it returns a truthy value
// or the deadline passes; it returns that value or throws.
export async function waitFor(what, cond, ms = STEP_MS) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await cond();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${last})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// Lines collects a stream's text and lets callers wait for a line.
export class Lines {
  constructor(stream) {
    this.text = '';
    this.waiters = [];
    stream?.on('data', (b) => {
      this.text += b.toString();
      for (const w of this.waiters.splice(0)) w();
    });
  }
  // line waits for a whole line matching re and returns its match.
  line(re, ms = STEP_MS) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no line matching ${re} within ${ms} ms; got:\n${this.text}`)), ms);
      const look = () => {
        for (const l of this.text.split('\n').slice(0, -1)) {
          const m = l.match(re);
          if (m) {
            clearTimeout(timer);
            resolve(m);
            return;
          }
        }
        this.waiters.push(look);
      };
      look();
    });
  }
}

// spawnLogged starts a program with piped stdout/stderr collected in Lines.
export function spawnLogged(cmd, args, opts) {
  const child = spawn(cmd, args, { ...opts, stdio: ['pipe', 'pipe', 'pipe'] });
  child.out = new Lines(child.stdout);
  child.err = new Lines(child.stderr);
  child.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return child;
}
