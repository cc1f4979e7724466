package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CapabilityMetaKey is the _meta key of every tool's capability row; the
// key is shared with the libtmux-mcp family.
const CapabilityMetaKey = "com.git-pull.libtmux-mcp/capability"

// Capability describes what a tool can reach and change, for hosts that
// route or approve tool calls by what they do. Every value is one of the
// constants below, which the README documents (a test checks both).
type Capability struct {
	ProcessReach        Reach                     `json:"processReach"`
	Effects             []Effect                  `json:"effects"`
	Outputs             []Output                  `json:"outputs"`
	InputLiteralization map[string]Literalization `json:"inputLiteralization,omitempty"` // omitted: no argument reaches tmux as text
}

// Reach is which processes a tool's input can reach.
type Reach string

const (
	ReachNone              Reach = "none"               // tmux itself only
	ReachConfiguredProcess Reach = "configured-process" // a command the caller names runs in a pane (respawn, create)
	ReachPaneInput         Reach = "pane-input"         // typed or pasted into whatever runs in a pane
	ReachPaneCommand       Reach = "pane-command"       // a command line run by a pane's shell
	ReachEnrolledShell     Reach = "enrolled-shell"     // a script run for a shell a person enrolled (tmux_run)
)

// Effect is what a tool does to tmux.
type Effect string

const (
	EffectObserve Effect = "observe" // reads, or waits for, tmux state
	EffectChange  Effect = "change"  // changes tmux state without removing anything
	EffectDelete  Effect = "delete"  // removes panes, windows, sessions or scrollback
)

// Output is a class of what a tool's answer can carry.
type Output string

const (
	OutputTmuxMetadata       Output = "tmux-metadata"       // ids, names, sizes, options
	OutputTerminalContent    Output = "terminal-content"    // what panes show
	OutputProcessEnvironment Output = "process-environment" // environment variables (may hold secrets)
	OutputConfiguredCommand  Output = "configured-command"  // commands stored in tmux (hooks, pane start commands)
	OutputProcessOutput      Output = "process-output"      // a script's own stdout and stderr
)

// Literalization says how an argument is kept from being read by tmux as
// a format or a key name: a short vocabulary, since every tool's row
// travels in every tools/list.
type Literalization string

const (
	// litFormat: # doubled where the command expands formats (a #…[ style
	// run kept), a final ';' escaped: stored as given, never expanded.
	litFormat Literalization = "format-doubled"
	// litTarget: an exact session name, sent as the target =NAME.
	litTarget Literalization = "exact-name"
	// litLiteral: sent as given where tmux reads no format or key name
	// (send-keys -l, a private paste buffer, a typed command line).
	litLiteral Literalization = "literal"
	// litValidated: checked against a strict grammar before tmux sees it
	// (ids, key names, option and variable names, layouts, numbers,
	// booleans sent as on/off).
	litValidated Literalization = "validated"
	// litNotSent: never passed to tmux: used by this server (a search
	// pattern matched in Go), or sent elsewhere (tmux_run's script goes to
	// the helper over a private socket).
	litNotSent Literalization = "not-sent"
	// litPerTool: each nested operation's arguments, as its own tool.
	litPerTool Literalization = "per-tool"
)

// The documented values, in the README's order.
var (
	reaches         = []Reach{ReachNone, ReachConfiguredProcess, ReachPaneInput, ReachPaneCommand, ReachEnrolledShell}
	effects         = []Effect{EffectObserve, EffectChange, EffectDelete}
	outputs         = []Output{OutputTmuxMetadata, OutputTerminalContent, OutputProcessEnvironment, OutputConfiguredCommand, OutputProcessOutput}
	literalizations = []Literalization{litFormat, litTarget, litLiteral, litValidated, litNotSent, litPerTool}
)

// metadataOnly is the row of the tools that read tmux metadata and take
// no text that reaches tmux.
var metadataOnly = Capability{
	ProcessReach:        ReachNone,
	Effects:             []Effect{EffectObserve},
	Outputs:             []Output{OutputTmuxMetadata},
	InputLiteralization: map[string]Literalization{},
}

// teardownCapability is the row of the tools that kill or clear an id
// target.
var teardownCapability = Capability{
	ProcessReach:        ReachNone,
	Effects:             []Effect{EffectDelete},
	Outputs:             []Output{OutputTmuxMetadata},
	InputLiteralization: map[string]Literalization{},
}

// inputCapability is the row of the tools that type into panes.
var inputCapability = Capability{
	ProcessReach: ReachPaneInput,
	Effects:      []Effect{EffectChange},
	Outputs:      []Output{OutputTmuxMetadata},
	InputLiteralization: map[string]Literalization{
		"keys": litValidated,
		"text": litLiteral,
	},
}

// batchCapability is the batch's row: the union of the outputs of the
// inspect tools sel lets it call.
func batchCapability(sel Selection) Capability {
	c := Capability{ProcessReach: ReachNone, Effects: []Effect{EffectObserve}, InputLiteralization: map[string]Literalization{
		"operations": litPerTool,
	}}
	for _, name := range sel.Tools {
		t := catalog[name]
		if name == batchName || t == nil || t.spec().toolset != Inspect {
			continue
		}
		for _, o := range t.spec().capability.Outputs {
			if !slices.Contains(c.Outputs, o) {
				c.Outputs = append(c.Outputs, o)
			}
		}
	}
	slices.Sort(c.Outputs)
	return c
}

// only reports whether a row's effects are exactly e.
func (c Capability) only(e Effect) bool { return len(c.Effects) == 1 && c.Effects[0] == e }

// CapabilitiesURI is the one static resource: the frozen tool surface.
const CapabilitiesURI = "tmux://capabilities"

// capabilitiesSchemaVersion changes when a field of capabilitiesDoc
// changes meaning or goes away.
const capabilitiesSchemaVersion = 1

// capabilitiesDoc is what tmux://capabilities holds: what this server
// offers, on which tmux server, and where its reach ends. It is computed
// once in New and never changes while the process runs.
type capabilitiesDoc struct {
	SchemaVersion int                   `json:"schemaVersion"`
	Frozen        bool                  `json:"frozen"` // the selection was fixed before the protocol started
	Toolsets      []string              `json:"toolsets"`
	Enabled       []string              `json:"enabled"`  // named inclusions
	Excluded      []string              `json:"excluded"` // exclusions
	Tools         []string              `json:"tools"`    // the effective tool names
	Capabilities  map[string]Capability `json:"capabilities"`
	Socket        socketRecord          `json:"socket"`
	Boundary      boundaryRecord        `json:"boundary"`
}

type socketRecord struct {
	// Selector: "path" (--socket), "name" (--socket-name), or "default"
	// (neither: the name libtmux-mcp).
	Selector string `json:"selector"`
	Value    string `json:"value"` // the path or name as selected
	// Path is the socket path the tmux server reports.
	Path       string          `json:"path"`
	Provenance tmux.Provenance `json:"provenance"`
}

type boundaryRecord struct {
	// HostCommandExecution: "absent", or "enrolled-panes" when tmux_run is
	// on.
	HostCommandExecution string `json:"hostCommandExecution"`
	// Posture: how far enrollment rests on this process. "tmux-run-off"; "no-input-tools" when
	// tmux_run is on and no tool types into panes or runs commands there (the strong posture:
	// no tool can source an invitation, though a script in an enrolled pane, running as the
	// person's user, can); "same-user-commands" when such
	// tools are on too: the agent then runs commands as the same user, so it could reach tmux
	// without this server, and the input tools' refusals are a guard, not a boundary.
	Posture         string `json:"posture"`
	SocketSelection string `json:"socketSelection"` // process-wide
	Resources       string `json:"resources"`       // static
	Note            string `json:"note"`
}

// capabilities builds the document for s.
func (s *server) capabilities() capabilitiesDoc {
	d := capabilitiesDoc{
		SchemaVersion: capabilitiesSchemaVersion,
		Frozen:        true,
		Toolsets:      nonNil(s.sel.Toolsets),
		Enabled:       nonNil(s.sel.Enabled),
		Excluded:      nonNil(s.sel.Excluded),
		Tools:         nonNil(s.sel.Tools),
		Capabilities:  map[string]Capability{},
	}
	for _, name := range s.sel.Tools {
		d.Capabilities[name] = s.sel.capability(name)
	}
	var route tmux.Route
	if s.tmux != nil {
		route = s.tmux.Route()
	}
	d.Socket = socketRecord{Selector: "default", Value: route.Socket(), Path: s.startup.Snapshot.Server.SocketPath, Provenance: s.prov}
	switch {
	case route.SocketPath != "":
		d.Socket.Selector = "path"
	case route.SocketName != "":
		d.Socket.Selector = "name"
	}
	d.Boundary = boundaryRecord{
		HostCommandExecution: "absent",
		Posture:              PostureTmuxRunOff,
		SocketSelection:      "process-wide",
		Resources:            "static",
		Note: "No tool runs a command on the host. Tools act with the tmux user's authority on one tmux server; " +
			"input and pane commands reach whatever runs in the target pane.",
	}
	if s.sel.Has("tmux_run") {
		d.Boundary.HostCommandExecution = "enrolled-panes"
		d.Boundary.Posture = s.sel.Posture()
		d.Boundary.Note = "tmux_run runs authored POSIX sh scripts, as the enrolled shell's user, in panes whose zsh a person enrolled; " +
			"no tool can enroll a pane. Enrollment decides where scripts run, not what they may do: a script runs as that user and can type into other panes (and so enroll them); " +
			"only another OS account or a container confines it. Other tools act with the tmux user's authority on one tmux server."
		if d.Boundary.Posture == PostureSameUserCommands {
			d.Boundary.Note += " Tools that type into panes or run commands there are on too: with them the agent runs commands as the same user, " +
				"so enrollment rests on the person; input tools refuse a pane with a pending invitation and an enrollment from a pane any libtmux-mcp server of this user typed into is refused. " +
				"The strong posture is tmux_run with inspect only (--toolsets inspect --enable-tool tmux_run)."
		}
	}
	return d
}

// The postures tmux://capabilities reports (boundary.posture).
const (
	PostureTmuxRunOff       = "tmux-run-off"
	PostureNoInputTools     = "no-input-tools"
	PostureSameUserCommands = "same-user-commands"
)

// Posture is the enrollment posture of the selection: PostureTmuxRunOff without tmux_run;
// PostureSameUserCommands when a selected tool types into panes or runs commands there
// (process reach pane-input or pane-command); else PostureNoInputTools.
func (sel Selection) Posture() string {
	if !sel.Has("tmux_run") {
		return PostureTmuxRunOff
	}
	for _, name := range sel.Tools {
		if r := sel.capability(name).ProcessReach; r == ReachPaneInput || r == ReachPaneCommand {
			return PostureSameUserCommands
		}
	}
	return PostureNoInputTools
}

// capability is tool name's capability row in this selection. cancel_run reaches a pane (C-c)
// only for run_shell_command's runs: without run_shell_command its only handles are
// tmux_run_start's, whose scripts it stops as tmux_run_start reaches them, and without either it
// reaches nothing.
func (sel Selection) capability(name string) Capability {
	c := catalog[name].spec().capability
	if name == "cancel_run" && !sel.Has("run_shell_command") {
		c.ProcessReach = ReachNone
		if sel.Has("tmux_run_start") {
			c.ProcessReach = ReachEnrolledShell
		}
	}
	return c
}

// addCapabilities serves tmux://capabilities, computed at its first read
// (it names the socket's path and provenance, known once the server's
// identity is: awaitStartup holds reads until then). Its size is not
// listed for the same reason.
func (s *server) addCapabilities() {
	text := sync.OnceValues(func() (string, error) { return encodeJSON(s.capabilities()) })
	s.mcp.AddResource(&mcp.Resource{
		URI:         CapabilitiesURI,
		Name:        "capabilities",
		Title:       "What this server offers",
		Description: "The frozen tool surface: toolsets, tools, each tool's capability row, the tmux socket and its provenance, and the trust boundary.",
		MIMEType:    "application/json",
	}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		text, err := text()
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", CapabilitiesURI, err)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: CapabilitiesURI, MIMEType: "application/json", Text: text}}}, nil
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
