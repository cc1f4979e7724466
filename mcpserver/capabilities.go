package mcpserver

import (
	"context"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
	// Posture: how far enrollment rests on this process. "tmux-run-off"; "person-only" when
	// tmux_run is on and no tool types into panes or runs commands there (the strong posture:
	// only a person at the terminal can source an invitation); "same-user-commands" when such
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
		d.Capabilities[name] = catalog[name].spec().capability
	}
	var route tmux.Route
	if s.tmux != nil {
		route = s.tmux.Route()
	}
	d.Socket = socketRecord{Selector: "default", Value: route.Socket(), Path: s.deps.Startup.Snapshot.Server.SocketPath, Provenance: s.prov}
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
			"no tool can enroll a pane. Other tools act with the tmux user's authority on one tmux server."
		if d.Boundary.Posture == PostureSameUserCommands {
			d.Boundary.Note += " Tools that type into panes or run commands there are on too: with them the agent runs commands as the same user, " +
				"so enrollment rests on the person; input tools refuse a pane with a pending invitation and an enrollment from a pane this server typed into is refused. " +
				"The strong posture is tmux_run with inspect only (--toolsets inspect --enable-tool tmux_run)."
		}
	}
	return d
}

// The postures tmux://capabilities reports (boundary.posture).
const (
	PostureTmuxRunOff       = "tmux-run-off"
	PosturePersonOnly       = "person-only"
	PostureSameUserCommands = "same-user-commands"
)

// Posture is the enrollment posture of the selection: PostureTmuxRunOff without tmux_run;
// PostureSameUserCommands when a selected tool types into panes or runs commands there
// (process reach pane-input or pane-command); else PosturePersonOnly.
func (sel Selection) Posture() string {
	if !sel.Has("tmux_run") {
		return PostureTmuxRunOff
	}
	for _, name := range sel.Tools {
		if r := catalog[name].spec().capability.ProcessReach; r == "pane-input" || r == "pane-command" {
			return PostureSameUserCommands
		}
	}
	return PosturePersonOnly
}

// addCapabilities serves tmux://capabilities, computed once.
func (s *server) addCapabilities() {
	text, err := encodeJSON(s.capabilities())
	if err != nil {
		panic("mcpserver: encode tmux://capabilities: " + err.Error())
	}
	s.mcp.AddResource(&mcp.Resource{
		URI:         CapabilitiesURI,
		Name:        "capabilities",
		Title:       "What this server offers",
		Description: "The frozen tool surface: toolsets, tools, each tool's capability row, the tmux socket and its provenance, and the trust boundary.",
		MIMEType:    "application/json",
		Size:        int64(len(text)),
	}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: CapabilitiesURI, MIMEType: "application/json", Text: text}}}, nil
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
