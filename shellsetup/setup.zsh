# tmux_run enrollment for tmux pane @PANE@, written by libtmux-mcp (mode 0600, single use).
# Source it by hand in that pane's top-level zsh. Stop any time with: libtmux_mcp_unenroll
\builtin typeset -g _libtmux_mcp_o="${options[aliases]}aliases ${options[ignorebraces]}ignorebraces ${options[ignoreclosebraces]}ignoreclosebraces ${options[shglob]}shglob ${options[kshglob]}kshglob ${options[rcquotes]}rcquotes ${options[xtrace]}xtrace ${options[verbose]}verbose"; \builtin setopt no_aliases no_ignore_braces no_ignore_close_braces no_sh_glob no_ksh_glob no_rc_quotes no_xtrace no_verbose

# A shell already enrolled, with this server or another, keeps everything as it is: nothing below
# is defined again. One line, so all of it is parsed before aliases come back.
if [[ -n ${_libtmux_mcp_eid-} ]]; then \builtin print -ru2 -- 'tmux_run enrollment: this shell is already enrolled; run libtmux_mcp_unenroll first'; \builtin typeset -g _libtmux_mcp_on=${(j: :)${(M)${=_libtmux_mcp_o}:#on*}#on}; \builtin unset _libtmux_mcp_o; [[ -z $_libtmux_mcp_on ]] || \builtin setopt ${=_libtmux_mcp_on}; \builtin unset _libtmux_mcp_on; return 1; fi

# The line above keeps the rest of this file free of the person's aliases and of options that
# change how it parses, and stops it from being echoed (it holds the token). The last lines put
# those options back. Everything below uses `builtin` and `emulate -L zsh`, so functions named
# print, zle, read ... and options such as ksh_arrays or err_return do not reach it.
#
# Protocol (package broker keeps the table of its words), fields separated by one space, every
# line ending in \n:
#   enrollment  shell: HELLO 1 <token> <$$> <$TMUX_PANE> <$TMUX>   broker: OK <id> | NO <reason>
#               (then both close it: nothing started on the line that sourced this file inherits it)
#   each prompt shell: ATTACH <id> on a new connection once the prompt is drawn (zle-line-init,
#               through add-zle-hook-widget; precmd without it), so what the prompt runs
#               ($(...) under prompt_subst) does not inherit it. preexec closes it, so the
#               person's commands never inherit it and the broker knows the prompt is gone.
#   every byte on every connection must be written by this shell's own process: the broker
#   reads each write's sender (SO_PASSCRED) and drops a connection a child wrote on, so a
#   descriptor a child inherited (a job, a $(...) in the prompt) cannot answer for the shell.
#   on it       broker: RUN <run_id> | HELPER <run_id> (start a resident helper first)
#               shell:  GO <run_id>, once STATE was sent (and, for HELPER, the helper started)
#                       | BUSY <run_id> | FAIL <run_id> connect | FAIL <run_id> spawn | ERR bad-request
#   state       shell: STATE <id> <run_id> <n>\n + n bytes: $PWD NUL NAME=value NUL ... (exported)
#               on a new connection, closed at once: the broker takes it only from a connection
#               this shell's own process opened (SO_PEERCRED, which no process can choose; the
#               credentials of a write can be forged by root), so a child holding the prompt's
#               connection cannot give the run a directory or environment of its own.
#   helper      shell: SPAWN <id> <run_id> (for HELPER), then the resident helper owns it as fd 3
#   unenroll    shell: BYE <id> on a new connection
#   liveness    the shell holds <socket dir>/live-<id> open for writing, close-on-exec: `exec zsh`
#               or an exit closes it, and the broker forgets the enrollment.

# One line on the prompt connection. A broker that went away is noticed by the handler (hup).
_libtmux_mcp_send() {
  builtin syswrite -o $_libtmux_mcp_fd "$1"$'\n' 2>/dev/null
}

# Close the prompt connection and its handler; the enrollment stays.
_libtmux_mcp_detach() {
  builtin emulate -L zsh
  if [[ -n ${_libtmux_mcp_fd-} ]]; then
    # never `exec {fd}<&- 2>/dev/null`: that would send the shell's stderr to /dev/null for good
    { builtin zle -F $_libtmux_mcp_fd; exec {_libtmux_mcp_fd}<&- } 2>/dev/null
  fi
  builtin unset _libtmux_mcp_fd _libtmux_mcp_buf
  return 0
}

# Forget the enrollment without a word: connection, liveness file, hooks, state.
_libtmux_mcp_stop() {
  builtin emulate -L zsh
  _libtmux_mcp_detach
  if [[ -n ${_libtmux_mcp_live-} ]]; then
    { exec {_libtmux_mcp_live}>&- } 2>/dev/null
  fi
  precmd_functions=(${precmd_functions:#_libtmux_mcp_precmd})
  preexec_functions=(${preexec_functions:#_libtmux_mcp_preexec})
  if (( ${_libtmux_mcp_lineinit-0} )); then
    add-zle-hook-widget -d line-init _libtmux_mcp_line_init 2>/dev/null
  fi
  builtin unset _libtmux_mcp_eid _libtmux_mcp_live _libtmux_mcp_idle _libtmux_mcp_lineinit _libtmux_mcp_prompt
  return 0
}

# A new broker connection on a free fd >= 10 (fds 3-9 belong to the person: `exec 3>x`),
# stored in the caller's variable named $1. zsocket never sets close-on-exec.
_libtmux_mcp_connect() {
  builtin emulate -L zsh
  local REPLY _libtmux_mcp_c
  # The status of a redirection-only exec is that of the last command substitution the shell
  # ran, even one typed on an earlier line (x=$(typo) leaves 127): test the fd, not the status.
  exec {_libtmux_mcp_c}</dev/null
  [[ $_libtmux_mcp_c == <10-> ]] || return 1
  exec {_libtmux_mcp_c}<&-
  builtin zsocket -d $_libtmux_mcp_c @SOCKET@ || return 1
  : ${(P)1::=$_libtmux_mcp_c}
}

# precmd hook: a prompt is coming. Its connection is attached once the prompt is drawn, by the
# zle-line-init hook, so nothing the prompt runs while it is drawn ($(...) under prompt_subst)
# inherits it; here only when that hook could not be installed.
_libtmux_mcp_precmd() {
  builtin emulate -L zsh
  typeset -gi _libtmux_mcp_prompt=1
  (( ${_libtmux_mcp_lineinit-0} )) || _libtmux_mcp_attach
  return 0
}

# zle-line-init hook (a widget): the top-level prompt is drawn and the editor starts; attach.
# Not for vared or other line editing inside a command (no precmd came before it).
_libtmux_mcp_line_init() {
  (( ${_libtmux_mcp_prompt-0} )) && _libtmux_mcp_attach
  return 0
}

# Attach a connection for the prompt now shown. A broker that cannot be reached or refuses
# (hup) ends the enrollment quietly.
_libtmux_mcp_attach() {
  builtin emulate -L zsh
  [[ -n ${_libtmux_mcp_eid-} && -z ${_libtmux_mcp_fd-} ]] || return 0
  local fd
  if ! _libtmux_mcp_connect fd 2>/dev/null; then
    _libtmux_mcp_stop
    return 0
  fi
  if ! builtin syswrite -o $fd "ATTACH $_libtmux_mcp_eid"$'\n' 2>/dev/null; then
    { exec {fd}<&- } 2>/dev/null
    _libtmux_mcp_stop
    return 0
  fi
  typeset -gi _libtmux_mcp_fd=$fd
  typeset -g _libtmux_mcp_buf=
  builtin zle -F $fd _libtmux_mcp_on_fd
  return 0
}

# preexec hook: a command line is about to run; it must not inherit the connection.
_libtmux_mcp_preexec() {
  typeset -gi _libtmux_mcp_prompt=0
  _libtmux_mcp_detach
}

# Widget, called from the handler: is the primary line editor idle, with nothing typed?
# Typed text, PS2, vared, isearch, menu selection, quoted-insert, a numeric argument or a
# vi find-char all count as busy. A plain zle -F handler cannot see $BUFFER; a widget can.
_libtmux_mcp_probe() {
  builtin emulate -L zsh -o extended_glob
  _libtmux_mcp_idle=0
  [[ $CONTEXT == start && -z $BUFFER$PREBUFFER ]] || return 0
  (( PENDING == 0 && KEYS_QUEUED_COUNT == 0 && ZLE_RECURSIVE == 0 && ${#funcstack} == 3 )) || return 0
  (( ! ISEARCHMATCH_ACTIVE && ! REGION_ACTIVE && ! SUFFIX_ACTIVE )) || return 0
  [[ $KEYMAP == (main|emacs|viins|vicmd) ]] || return 0
  [[ $WIDGET == (*isearch*|*search*|*complet*|*menu*|execute-*|quoted-insert|*argument*|describe-key-briefly|where-is|read-command|vi-*find*|vi-replace*|recursive-edit) ]] && return 0
  _libtmux_mcp_idle=1
}

# zle -F handler: $1 is the fd; $2 is set (hup, err, nval) when the connection broke.
# One read(2) of what is there (sysread, never `read -t`, which can freeze the editor on a
# partial line), split into lines. EOF, hup or a runaway line: the broker let go of this shell.
# The read never waits (-t 0): when another process holding the connection took the bytes
# first, there is nothing to read, and the editor must go on (status 4), not block.
_libtmux_mcp_on_fd() {
  builtin emulate -L zsh -o extended_glob
  local chunk line
  local -i st=0
  [[ -z ${2-} ]] && builtin sysread -i $1 -s 4096 -t 0 chunk 2>/dev/null || st=$?
  (( st == 4 )) && return 0
  if [[ -n ${2-} ]] || (( st )); then
    _libtmux_mcp_stop
    return 0
  fi
  _libtmux_mcp_buf+=$chunk
  while [[ -n ${_libtmux_mcp_fd-} && $_libtmux_mcp_buf == *$'\n'* ]]; do
    line=${_libtmux_mcp_buf%%$'\n'*}
    _libtmux_mcp_buf=${_libtmux_mcp_buf#*$'\n'}
    _libtmux_mcp_request "$line"
  done
  if (( ${#_libtmux_mcp_buf} > 1024 )); then
    _libtmux_mcp_stop
  fi
  return 0
}

# One request from the broker (the handler -> here -> the probe widget: funcstack is 3 deep).
_libtmux_mcp_request() {
  builtin emulate -L zsh -o extended_glob -o no_bg_nice -o no_multibyte
  local id nfd sfd name payload
  local -a env
  if [[ $1 == RUN\ [0-9a-f](#c32) ]]; then
    id=${1#RUN }
  elif [[ $1 == HELPER\ [0-9a-f](#c32) ]]; then
    id=${1#HELPER }
  else
    _libtmux_mcp_send 'ERR bad-request'
    return 0
  fi
  _libtmux_mcp_idle=0                                     # busy unless the probe says otherwise
  builtin zle _libtmux_mcp_probe -f nolast 2>/dev/null   # nolast: $LASTWIDGET stays the person's
  if (( ! _libtmux_mcp_idle )); then
    _libtmux_mcp_send "BUSY $id"
    return 0
  fi
  if [[ $1 == HELPER\ * ]]; then
    if ! _libtmux_mcp_connect nfd 2>/dev/null; then
      _libtmux_mcp_send "FAIL $id connect"
      return 0
    fi
    # The broker reads SO_PEERCRED of this connection: this shell, not a child.
    if ! builtin syswrite -o $nfd "SPAWN $_libtmux_mcp_eid $id"$'\n' 2>/dev/null; then
      { exec {nfd}<&- } 2>/dev/null
      _libtmux_mcp_send "FAIL $id connect"
      return 0
    fi
    # Double fork: $!, $? and the job table stay as they were; the helper's parent becomes init.
    # It inherits this shell's resource limits and niceness; fd 3 = its own connection, 0-2 on
    # /dev/null, and neither the prompt connection nor this shell's copy of the spawn fd (the
    # liveness fd is close-on-exec). The braces send even this shell's own complaint (fork
    # failed) to /dev/null.
    if { ( @HELPER@ serve 3<&$nfd </dev/null >/dev/null 2>&1 {nfd}<&- {_libtmux_mcp_fd}<&- &! ) } 2>/dev/null; then
      { exec {nfd}<&- } 2>/dev/null
    else
      { exec {nfd}<&- } 2>/dev/null
      _libtmux_mcp_send "FAIL $id spawn"
      return 0
    fi
  fi
  # The shell's state at this moment: its directory and its exported environment, NUL-separated
  # (values may hold newlines). no_multibyte: ${#payload} counts bytes.
  for name in ${(k)parameters[(R)*export*]}; do
    env+=("$name=${(P)name}")
  done
  payload=$PWD$'\0'${(pj:\0:)env}
  if ! _libtmux_mcp_connect sfd 2>/dev/null; then
    _libtmux_mcp_send "FAIL $id connect"
    return 0
  fi
  if ! builtin syswrite -o $sfd "STATE $_libtmux_mcp_eid $id ${#payload}"$'\n'"$payload" 2>/dev/null; then
    { exec {sfd}<&- } 2>/dev/null
    _libtmux_mcp_send "FAIL $id connect"
    return 0
  fi
  { exec {sfd}<&- } 2>/dev/null
  _libtmux_mcp_send "GO $id"
  return 0
}

_libtmux_mcp_rc=0
() {
  builtin emulate -L zsh -o extended_glob
  local fd reply chunk sock
  local -i st=0
  local -F deadline left
  if [[ ! -o interactive || ! -o zle ]]; then
    builtin print -ru2 -- 'tmux_run enrollment: needs an interactive zsh; source this file by hand in tmux pane @PANE@'
    return 1
  fi
  if [[ -z ${TMUX-} || ${TMUX_PANE-} != %[0-9]## ]]; then
    builtin print -ru2 -- 'tmux_run enrollment: not inside tmux; source this file in tmux pane @PANE@'
    return 1
  fi
  if [[ -n ${_libtmux_mcp_eid-} ]]; then
    builtin print -ru2 -- 'tmux_run enrollment: this shell is already enrolled; run libtmux_mcp_unenroll first'
    return 1
  fi
  if [[ $TMUX == *[[:cntrl:]]* ]]; then
    builtin print -ru2 -- 'tmux_run enrollment: $TMUX holds a control character; cannot enroll'
    return 1
  fi
  if ! builtin zmodload zsh/net/socket zsh/system zsh/datetime 2>/dev/null; then
    builtin print -ru2 -- 'tmux_run enrollment: needs the zsh modules zsh/net/socket, zsh/system and zsh/datetime'
    return 1
  fi
  if ! _libtmux_mcp_connect fd 2>/dev/null; then
    builtin print -ru2 -- 'tmux_run enrollment failed: cannot reach libtmux-mcp (it stopped, or its socket is gone)'
    return 1
  fi
  if ! builtin syswrite -o $fd "HELLO 1 @TOKEN@ $$ $TMUX_PANE $TMUX"$'\n' 2>/dev/null; then
    { exec {fd}<&- } 2>/dev/null
    builtin print -ru2 -- 'tmux_run enrollment failed: libtmux-mcp closed the connection'
    return 1
  fi
  # One line, at most 5 s. A byte at a time, so nothing after the newline is taken from the
  # handler, and never blocked on a partial line (read -t would be).
  deadline=$(( EPOCHREALTIME + 5 ))
  while [[ $reply != *$'\n'* ]] && (( ${#reply} < 128 )); do
    if (( (left = deadline - EPOCHREALTIME) <= 0 )); then
      st=4
      break
    fi
    builtin sysread -i $fd -s 1 -t $left chunk 2>/dev/null || { st=$?; break }
    reply+=$chunk
  done
  if [[ $reply == OK\ [A-Za-z0-9_-](#c1,64)$'\n' ]]; then
    # The HELLO connection ends here, before `source` returns: a command on the same line
    # (`source FILE; job &`) must not inherit it. The next prompt attaches its own.
    { exec {fd}<&- } 2>/dev/null
    typeset -gi _libtmux_mcp_idle=0
    typeset -g _libtmux_mcp_eid=${${reply#OK }%$'\n'} _libtmux_mcp_live=
    sock=@SOCKET@
    # Held open, close-on-exec, for as long as this shell (not an exec'd successor) lives.
    builtin sysopen -w -o cloexec,nonblock -u _libtmux_mcp_live ${sock:h}/live-$_libtmux_mcp_eid 2>/dev/null
    typeset -ga precmd_functions preexec_functions
    precmd_functions+=(_libtmux_mcp_precmd)
    preexec_functions+=(_libtmux_mcp_preexec)
    builtin zle -N _libtmux_mcp_probe
    builtin zle -N _libtmux_mcp_line_init
    if builtin autoload -Uz add-zle-hook-widget 2>/dev/null && add-zle-hook-widget line-init _libtmux_mcp_line_init 2>/dev/null; then
      typeset -gi _libtmux_mcp_lineinit=1
    fi
    libtmux_mcp_unenroll() {
      builtin emulate -L zsh
      local fd chunk
      if [[ -z ${_libtmux_mcp_eid-} ]]; then
        builtin print -ru2 -- 'tmux_run is not enrolled in this shell'
        return 1
      fi
      if _libtmux_mcp_connect fd 2>/dev/null; then
        # The broker closes the connection once it has let go; only then does the liveness
        # FIFO close (which alone would read as an exit).
        builtin syswrite -o $fd "BYE $_libtmux_mcp_eid"$'\n' 2>/dev/null &&
          builtin sysread -i $fd -t 2 chunk 2>/dev/null
        { exec {fd}<&- } 2>/dev/null
      fi
      _libtmux_mcp_stop
      builtin print -r -- 'tmux_run unenrolled in pane @PANE@'
    }
    builtin print -r -- 'tmux_run enrolled in pane @PANE@; run libtmux_mcp_unenroll to stop'
    return 0
  fi
  { exec {fd}<&- } 2>/dev/null
  if [[ $reply == NO\ [A-Za-z0-9_-](#c1,64)$'\n' ]]; then
    builtin print -ru2 -- "tmux_run enrollment refused: ${${reply#NO }%$'\n'}"
  elif (( st == 4 )); then
    builtin print -ru2 -- 'tmux_run enrollment failed: no answer from libtmux-mcp within 5 s'
  elif [[ -z $reply ]]; then
    builtin print -ru2 -- 'tmux_run enrollment failed: libtmux-mcp closed the connection without answering'
  else
    builtin print -ru2 -- 'tmux_run enrollment failed: unexpected answer from libtmux-mcp'
  fi
  return 1
} || _libtmux_mcp_rc=$?

# Put back the options the first line turned off (at top level: zsh restores xtrace when a
# function returns), then answer the status. One line, so all of it is parsed before aliases
# come back.
typeset -g _libtmux_mcp_on=${(j: :)${(M)${=_libtmux_mcp_o}:#on*}#on}
\builtin unset _libtmux_mcp_o; [[ -z $_libtmux_mcp_on ]] || \builtin setopt ${=_libtmux_mcp_on}; \builtin unset _libtmux_mcp_on; () { \builtin unset _libtmux_mcp_rc; return $1 } $_libtmux_mcp_rc
