# libtmux-mcp: enroll this pane's zsh for tmux_run. Written by libtmux-mcp
# (0600, for one use); source it once, by hand, in the pane it names:
#   source THIS-FILE
# Nothing is ever typed into the terminal. To stop: libtmux_mcp_unenroll
\typeset -g _ltm_aliases=${options[aliases]}; \unsetopt aliases   # parse free of user aliases
_ltm_send() { builtin print -r -u $_ltm_fd -- "$1" 2>/dev/null }
_ltm_stop() {   # forget the connection quietly
  { builtin zle -F $_ltm_fd; exec {_ltm_fd}<&- } 2>/dev/null
  precmd_functions=(${precmd_functions:#_ltm_precmd})
  unset _ltm_fd _ltm_eid _ltm_ok _ltm_buf _ltm_deferred
}
libtmux_mcp_unenroll() {
  [[ -n ${_ltm_fd-} ]] || { builtin print -u2 'tmux_run: this shell is not enrolled'; return 1 }
  _ltm_send BYE
  _ltm_stop
  builtin print -r -- "tmux_run unenrolled in pane @PANE@"
}
_ltm_precmd() { (( _ltm_deferred )) && { _ltm_deferred=0; _ltm_send READY } }
_ltm_connect() {   # a new connection on a free fd >= 10 (3-9 are clobbered by `exec 3>x`); sets REPLY
  local fd; exec {fd}</dev/null && exec {fd}<&- && builtin zsocket -d $fd @SOCK@
}
_ltm_probe() {     # widget: is the primary line editor idle and empty?
  emulate -L zsh
  _ltm_ok=0
  [[ $CONTEXT == start && -z $BUFFER$PREBUFFER ]] || return 0
  (( PENDING == 0 && KEYS_QUEUED_COUNT == 0 && ZLE_RECURSIVE == 0 && ${#funcstack} == 3 )) || return 0
  (( ! ISEARCHMATCH_ACTIVE && ! REGION_ACTIVE && ! SUFFIX_ACTIVE )) || return 0
  [[ $KEYMAP == (main|emacs|viins|vicmd) ]] || return 0
  [[ $WIDGET == (*isearch*|*search*|*complet*|*menu*|execute-*|quoted-insert|*argument*|describe-key-briefly|where-is|read-command|vi-*find*|vi-replace*|recursive-edit) ]] && return 0
  _ltm_ok=1
}
_ltm_on_fd() {     # zle -F handler: $1 = fd, $2 = hup|err|nval on error
  emulate -L zsh -o extended_glob
  local chunk line
  # one read(2) of what is there: never blocks the editor on a partial line
  if [[ -n ${2-} ]] || ! builtin sysread -i $1 -s 4096 chunk; then _ltm_stop; return; fi
  _ltm_buf+=$chunk
  (( ${#_ltm_buf} > 8192 )) && { _ltm_stop; return }
  while [[ $_ltm_buf == *$'\n'* ]]; do
    line=${_ltm_buf%%$'\n'*}; _ltm_buf=${_ltm_buf#*$'\n'}
    _ltm_request "$line"
  done
}
_ltm_request() {
  emulate -L zsh -o extended_glob -o no_bg_nice
  local id nfd
  if [[ $1 != RUN\ [a-f0-9](#c32) ]]; then _ltm_send "ERR bad-request"; return; fi
  id=${1#RUN }
  builtin zle _ltm_probe -f nolast                  # -f nolast: leave $LASTWIDGET alone
  if (( ! _ltm_ok )); then _ltm_deferred=1; _ltm_send "BUSY $id"; return; fi
  _ltm_connect 2>/dev/null || { _ltm_send "FAIL $id connect"; return }
  nfd=$REPLY
  builtin print -r -u $nfd -- "SPAWN $_ltm_eid $id"  # SO_PEERCRED of this connection: this shell
  # double fork: $!, the job table and $? stay as they were; the helper gets
  # the cwd, the exported environment, fd 3 = its connection, nothing else
  ( @HELPER@ job $id 3<&$nfd </dev/null >/dev/null 2>&1 {nfd}<&- {_ltm_fd}<&- &! )
  exec {nfd}<&-
  _ltm_send "STARTED $id"
}
() {
  emulate -L zsh -o extended_glob
  local fd reply
  if [[ ! -o interactive || -z ${TMUX_PANE-} || -n ${_ltm_fd-} ]]; then
    builtin print -u2 'tmux_run: source this in an interactive zsh inside tmux, once'; return 1
  fi
  if [[ $TMUX_PANE != @PANE@ ]]; then
    builtin print -u2 "tmux_run: this file is for pane @PANE@, not $TMUX_PANE"; return 1
  fi
  builtin zmodload zsh/net/socket zsh/system && _ltm_connect || return 1
  fd=$REPLY
  builtin print -r -u $fd -- "HELLO 1 @TOKEN@ $$ $TMUX_PANE ${TMUX-}"
  if ! builtin read -r -t 5 -u $fd reply || [[ $reply != OK\ [a-f0-9](#c32) ]]; then
    builtin print -u2 -r -- "tmux_run enrollment refused: ${${reply#NO }:-no answer}"
    { exec {fd}<&- } 2>/dev/null; return 1
  fi
  typeset -gi _ltm_fd=$fd; typeset -g _ltm_eid=${reply#OK } _ltm_ok=0 _ltm_buf= _ltm_deferred=0
  typeset -ga precmd_functions; precmd_functions+=(_ltm_precmd)
  builtin zle -N _ltm_probe
  builtin zle -F $fd _ltm_on_fd
  builtin print -r -- "tmux_run enrolled in pane @PANE@; run libtmux_mcp_unenroll to stop"
}
_ltm_rc=$?
[[ $_ltm_aliases == on ]] && setopt aliases
unset _ltm_aliases
() { local r=$_ltm_rc; unset _ltm_rc; return r }
